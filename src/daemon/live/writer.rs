//! The daemon's one writer of live activity: every running job's recorder hands its batch
//! here, and the batches that arrive together (recorders flush on shared boundaries, see
//! `next_flush`) are written in one transaction. A streaming fleet of N agents then costs a
//! few transactions per flush period, not N.
//!
//! Owns gathering batches and writing them, and handing what it stored to the stall watch
//! (`Heard`); what a batch holds and what a budget stop does are `live.rs`'s.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::over_budget;
use crate::daemon::Shared;
use crate::domain::EventKind;
use crate::runtime::activity::Activity;
use crate::store::StoreError;
use crate::store::activity::{
    self as store_activity, JobBatch, LiveSpend, NewActivity, Record, Then,
};
use crate::store::events::{self, NewEvent};

/// Records this writer stored since the stall watch last took them (for
/// `engine::stall::Memory::hear`), told only once their transaction committed.
///
/// Bounded: past [`HEARD_AT_MOST`] waiting records it forgets them all, and the watch
/// reads what it missed from the store, as it would without them.
#[derive(Debug, Default)]
pub(crate) struct Heard(std::sync::Mutex<Vec<Record>>);

/// Records `Heard` holds at most: a few seconds of a thousand streaming agents.
const HEARD_AT_MOST: usize = 50_000;

impl Heard {
    fn tell(&self, mut records: Vec<Record>) {
        let mut waiting = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if waiting.len() + records.len() > HEARD_AT_MOST {
            waiting.clear();
        } else if waiting.is_empty() {
            *waiting = records;
        } else {
            waiting.append(&mut records);
        }
    }

    pub(crate) fn take(&self) -> Vec<Record> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// How long the writer waits, after a batch arrives, for the others of the same boundary.
const GATHER: Duration = Duration::from_millis(5);

/// One job's batch, and where to say whether its root's budget now stops it.
pub(crate) struct Batch {
    pub job_id: String,
    pub root_id: String,
    pub records: Vec<Activity>,
    pub live: LiveSpend,
    /// Whether to check the budget (not again once the job was told to stop).
    pub check: bool,
    pub reply: oneshot::Sender<Result<Option<String>, String>>,
}

/// The writer's queue, started on first use for the daemon `shared` is; the writer ends
/// once the daemon's `Shared` (which holds the queue) is gone.
pub(super) fn queue(shared: &Arc<Shared>) -> &mpsc::UnboundedSender<Batch> {
    shared.live_writer.get_or_init(|| {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write(Arc::downgrade(shared), rx));
        tx
    })
}

async fn write(shared: Weak<Shared>, mut rx: mpsc::UnboundedReceiver<Batch>) {
    while let Some(first) = rx.recv().await {
        tokio::time::sleep(GATHER).await;
        let mut batches = vec![first];
        while let Ok(more) = rx.try_recv() {
            batches.push(more);
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let (replies, batches): (Vec<_>, Vec<_>) = batches
            .into_iter()
            .map(|b| {
                let Batch { reply, .. } = b;
                (reply, (b.job_id, b.root_id, b.records, b.live, b.check))
            })
            .unzip();
        let written = shared
            .with_store(move |store, sh| {
                let mut stored = Vec::new();
                let stops = store.write(|tx| {
                    stored.clear();
                    let now = sh.clock.now_ms();
                    let cfg = sh.config();
                    let rows: Vec<Vec<NewActivity<'_>>> = batches
                        .iter()
                        .map(|(_, _, records, _, _)| {
                            records.iter().map(super::new_activity).collect()
                        })
                        .collect();
                    let jobs: Vec<JobBatch<'_>> = batches
                        .iter()
                        .zip(&rows)
                        .map(|((job_id, root_id, _, live, _), batch)| JobBatch {
                            job_id,
                            root_id,
                            batch,
                            then: Then::Running(*live),
                        })
                        .collect();
                    store_activity::append_all(tx, now, &jobs, Some(&mut stored))?;
                    let mut stops = Vec::with_capacity(batches.len());
                    for (job_id, root_id, _, live, check) in &batches {
                        let why = if *check {
                            over_budget(tx, &cfg.orchestrate, root_id, job_id, *live)?
                        } else {
                            None
                        };
                        if let Some(why) = &why {
                            events::append(
                                tx,
                                NewEvent::job(now, root_id, job_id, EventKind::BudgetStop)
                                    .message(format!("stopping {job_id} while it runs: {why}"))
                                    .data(
                                        json!({"tokens": live.tokens, "cost_usd": live.cost_usd}),
                                    ),
                            )?;
                        }
                        stops.push(why);
                    }
                    Ok::<_, StoreError>(stops)
                })?;
                // Only once committed: the watch must not keep what a rollback undid.
                sh.heard.tell(stored);
                Ok::<_, StoreError>(stops)
            })
            .await;
        match written {
            Ok(stops) => {
                for (reply, why) in replies.into_iter().zip(stops) {
                    let _ = reply.send(Ok(why));
                }
            }
            Err(e) => {
                let e = e.to_string();
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }
}
