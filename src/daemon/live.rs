//! A running job's live activity: reads the runtime's output lines as they arrive (over
//! every run of the job, repairs included), turns them into activity records, and hands
//! them in batches, on the boundaries every job shares (200 ms apart with a few agents, up
//! to a second with a fleet: `runtime::process::cadence`), with the job's running spend to
//! the daemon's one activity writer (`live/writer.rs`), which writes the batches of one
//! boundary in one transaction. A root whose token or USD budget the running spend reaches
//! has this leg stopped gracefully, with the reason in its events.
//!
//! Owns batching and the live budget stop; parsing is `runtime::activity`, storage
//! `store::activity`. The last batch is not written here: it rides on the settlement's
//! transaction (`write_final`), so a short job costs no extra write.

mod writer;

pub(crate) use writer::{Batch, Heard};

use crate::store::Tx;
use std::borrow::Cow;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};

use super::Shared;
use crate::domain::RuntimeKind;
use crate::engine;
use crate::redact::redact;
use crate::runtime::KillRequest;
use crate::runtime::activity::{Activity, LiveUsage, StreamParser};
use crate::runtime::process::{LineReceiver, LineSender, line_channel};
use crate::store::activity::{self as store_activity, LiveSpend, MAX_BYTES, MAX_RECORDS};
use crate::store::activity::{NewActivity, Then};
use crate::store::jobs::Job;
use crate::store::{StoreError, runs};

/// Lines buffered between the child's output and the parser, and the bytes they may hold.
const LINE_QUEUE: usize = 4096;
const LINE_BYTES: usize = 256 * 1024;

/// What was not written yet when the job's last run ended.
#[derive(Debug, Default)]
pub struct Leftover {
    pub batch: Vec<Activity>,
    pub usage: LiveUsage,
    /// A batch was written while the job ran, so its row must be closed.
    pub wrote: bool,
}

/// The recorder of one job.
pub struct Recorder {
    lines: LineSender,
    sync: mpsc::UnboundedSender<oneshot::Sender<LiveUsage>>,
    task: tokio::task::JoinHandle<Leftover>,
}

impl Recorder {
    /// Starts recording `job`'s output; `stop` terminates the job's runtime when its
    /// root's budget is reached.
    pub fn start(
        shared: &Arc<Shared>,
        job: &Job,
        kind: RuntimeKind,
        model: Option<String>,
        stop: watch::Sender<Option<KillRequest>>,
    ) -> Self {
        let (lines, rx) = line_channel(LINE_QUEUE, LINE_BYTES);
        let (sync, sync_rx) = mpsc::unbounded_channel();
        let ctx = Ctx {
            shared: shared.clone(),
            job_id: job.id.clone(),
            root_id: job.root_id.clone(),
            model,
            stop,
            stopped: false,
        };
        let task = tokio::spawn(record(ctx, StreamParser::new(kind), rx, sync_rx));
        Self { lines, sync, task }
    }

    /// Where a run sends its output lines.
    pub fn lines(&self) -> LineSender {
        self.lines.clone()
    }

    /// The job's usage so far, once every line already sent has been read.
    pub async fn usage(&self) -> LiveUsage {
        let (tx, rx) = oneshot::channel();
        if self.sync.send(tx).is_err() {
            return LiveUsage::default();
        }
        rx.await.unwrap_or_default()
    }

    /// Stops recording; what is still unwritten goes to the settlement.
    pub async fn finish(self) -> Leftover {
        drop(self.lines);
        drop(self.sync);
        self.task.await.unwrap_or_default()
    }
}

struct Ctx {
    shared: Arc<Shared>,
    job_id: String,
    root_id: String,
    model: Option<String>,
    stop: watch::Sender<Option<KillRequest>>,
    stopped: bool,
}

/// The job's share of the store's activity caps this recorder has passed on. Past them
/// the store keeps nothing more, so nothing more is held (or redacted) for it: the records
/// waiting for a flush stay within the caps however fast the agent prints.
#[derive(Default)]
struct Kept {
    records: u64,
    bytes: u64,
    full: bool,
}

impl Kept {
    /// Whether `a` is passed on: every record up to the caps, and the first past them so
    /// the store writes its `truncated` record.
    fn admit(&mut self, a: &Activity) -> bool {
        if self.full {
            return false;
        }
        self.records += 1;
        self.bytes += a.size() as u64;
        self.full = self.records >= MAX_RECORDS || self.bytes > MAX_BYTES;
        true
    }
}

async fn record(
    mut ctx: Ctx,
    mut parser: StreamParser,
    mut rx: LineReceiver,
    mut sync_rx: mpsc::UnboundedReceiver<oneshot::Sender<LiveUsage>>,
) -> Leftover {
    let mut pending: Vec<Activity> = Vec::new();
    let mut kept = Kept::default();
    let mut usage = LiveUsage::default();
    let mut flush_at: Option<tokio::time::Instant> = None;
    let mut wrote = false;
    loop {
        tokio::select! {
            // Lines first: a sync request is answered only once the lines queued before
            // it have been read.
            biased;
            line = rx.recv() => {
                let Some(line) = line else { break };
                // Secrets are cut before a record is kept, like every stored output.
                let admitted = parser.line(&line).into_iter().filter(|a| kept.admit(a));
                pending.extend(admitted.map(redacted));
                let now_usage = parser.usage();
                let spend_changed = now_usage != usage;
                usage = now_usage;
                if flush_at.is_none() && (!pending.is_empty() || spend_changed) {
                    // Every recorder flushes on the boundaries its readers read on, so the
                    // batches of one boundary meet in one of the writer's transactions.
                    flush_at = Some(crate::runtime::process::next_boundary());
                }
            }
            Some(reply) = sync_rx.recv() => {
                let _ = reply.send(parser.usage());
            }
            _ = tokio::time::sleep_until(flush_at.unwrap_or_else(tokio::time::Instant::now)),
                if flush_at.is_some() => {
                flush_at = None;
                let batch = std::mem::take(&mut pending);
                flush(&mut ctx, batch, usage).await;
                wrote = true;
            }
        }
    }
    Leftover {
        batch: pending,
        usage: parser.usage(),
        wrote,
    }
}

/// The spend budgets see: the vendor's cost when reported, else priced from the tokens.
fn spend(usage: &LiveUsage, model: Option<&str>) -> LiveSpend {
    LiveSpend {
        tokens: usage.tokens(),
        cost_usd: usage
            .cost_usd
            .unwrap_or_else(|| engine::price_usd(model, usage.tokens_in, usage.tokens_out)),
    }
}

async fn flush(ctx: &mut Ctx, records: Vec<Activity>, usage: LiveUsage) {
    let (reply, answer) = tokio::sync::oneshot::channel();
    let batch = writer::Batch {
        job_id: ctx.job_id.clone(),
        root_id: ctx.root_id.clone(),
        records,
        live: spend(&usage, ctx.model.as_deref()),
        check: !ctx.stopped,
        reply,
    };
    let res = match writer::queue(&ctx.shared).send(batch) {
        Ok(()) => answer
            .await
            .unwrap_or_else(|_| Err("the activity writer stopped".into())),
        Err(_) => Err("the activity writer stopped".into()),
    };
    match res {
        Ok(Some(why)) => {
            ctx.stopped = true;
            let _ = ctx.stop.send(Some(KillRequest(why)));
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(job = %ctx.job_id, "recording activity: {e}"),
    }
}

/// Why the root must stop now: its settled spend plus every running leg's live spend
/// reached the token or USD budget.
pub(super) fn over_budget(
    conn: &Tx<'_>,
    cfg: &crate::config::OrchestrateConfig,
    root_id: &str,
    job_id: &str,
    mine: LiveSpend,
) -> Result<Option<String>, StoreError> {
    let (budget, usd) = (cfg.max_delegation_token_budget, cfg.max_delegation_cost_usd);
    if budget == 0 && usd <= 0.0 {
        return Ok(None);
    }
    let Some(run) = runs::get(conn, root_id)? else {
        return Ok(None);
    };
    let others = store_activity::live_root_spend(conn, root_id, job_id)?;
    let tokens = run.tokens + others.tokens + mine.tokens;
    let cost = run.cost_usd + others.cost_usd + mine.cost_usd;
    Ok(if budget > 0 && tokens >= budget {
        Some(format!(
            "token budget {budget} reached while running (used {tokens})"
        ))
    } else if usd > 0.0 && cost >= usd {
        Some(format!(
            "cost budget ${usd:.4} reached while running (spent ${cost:.4})"
        ))
    } else {
        None
    })
}

fn redacted(mut a: Activity) -> Activity {
    if let Cow::Owned(clean) = redact(&a.summary) {
        a.summary = clean;
    }
    if let Some(Cow::Owned(clean)) = a.detail.as_deref().map(redact) {
        a.detail = Some(clean);
    }
    a
}

pub(super) fn new_activity(a: &Activity) -> NewActivity<'_> {
    NewActivity {
        kind: a.kind.as_str(),
        summary: &a.summary,
        detail: a.detail.as_deref(),
    }
}

/// Writes the last batch and closes the job's live figures, inside the settlement's
/// transaction. Jobs that streamed nothing and report no cache tokens write nothing.
pub(crate) fn write_final(
    conn: &Tx<'_>,
    job: &Job,
    now: crate::clock::Millis,
    left: &Leftover,
    cache: (u64, u64),
) -> Result<(), StoreError> {
    if !left.batch.is_empty() {
        let rows: Vec<NewActivity<'_>> = left.batch.iter().map(new_activity).collect();
        let then = Then::Finished {
            cache_read_tokens: cache.0,
            cache_creation_tokens: cache.1,
        };
        store_activity::append(conn, &job.id, &job.root_id, now, &rows, then)?;
    } else if left.wrote || cache != (0, 0) {
        store_activity::finish(conn, &job.id, &job.root_id, now, cache.0, cache.1)?;
    }
    Ok(())
}
