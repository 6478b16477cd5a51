//! What the pool does when it was itself lost for a while: its store unreachable (the
//! settlements it could not write are written once the store is back, and a claim whose
//! commit it never heard of is released), or its lease taken over while it was paused
//! (what its agents finished meanwhile is settled — fenced — and the rest stopped).
//!
//! Owns those passes only; whether a finished run may still settle its job is
//! `exec::Finished::settle`'s, and releasing a job is the engine's (`engine::lost`).

use std::collections::HashSet;
use std::time::Duration;

use super::super::DaemonError;
use super::Pool;
use super::tick::settle_all;
use crate::engine::lost::{self, Loss};
use crate::store::daemons;

/// Why the pool stops the agents still running once it learns its lease was taken over.
pub(super) const LEASE_LOST: &str =
    "terminated: the daemon's lease was taken over while it was paused; another daemon has the job";

/// How long a daemon that learned its lease was taken over waits for agents that finished
/// while it was paused: their runs end as soon as its loop reads their exit.
const FINISHED_GRACE: Duration = Duration::from_secs(2);

impl Pool {
    /// Once the store is back after an outage: the jobs running under this daemon in the
    /// store that it neither runs nor holds finished (a claim whose commit reached the
    /// server while its answer was lost) run again, as a lost daemon's would.
    pub(super) async fn reconcile(&mut self) -> Result<(), DaemonError> {
        let mine: HashSet<String> = self
            .inflight
            .keys()
            .cloned()
            .chain(self.done.iter().map(|f| f.job_id().to_string()))
            .collect();
        let id = self.registration.id.clone();
        self.shared
            .with_store(move |store, sh| {
                let config = sh.config();
                store.write(|tx| -> Result<(), DaemonError> {
                    for job in daemons::running_jobs(tx, &id)? {
                        if mine.contains(&job) {
                            continue;
                        }
                        let detail = format!(
                            "daemon {id} lost the store as it claimed the job and never ran it"
                        );
                        lost::release(tx, sh.env(&config), &job, Loss::StoreUnreachable, &detail)?;
                    }
                    Ok(())
                })
            })
            .await
    }

    /// This daemon's lease was taken over (it was paused past it): the agents that finished
    /// meanwhile are settled if their jobs were not claimed again, the rest are stopped and
    /// left to the takeover. The daemon stops next.
    pub(super) async fn after_lease_lost(&mut self) {
        self.finish_or_terminate(FINISHED_GRACE, LEASE_LOST).await;
        self.done.iter_mut().for_each(|f| f.after_lease_taken());
        if let Err(e) = self.settle_done().await {
            tracing::error!("settling after the lease was lost: {e}");
        }
    }

    /// Settles the jobs that ended, with no claim; `Ok(false)` when the store was lost on
    /// the way (they are kept for the next try).
    pub(super) async fn settle_done(&mut self) -> Result<bool, DaemonError> {
        if self.done.is_empty() {
            return Ok(true);
        }
        let mut done = std::mem::take(&mut self.done);
        let (res, done) = self
            .shared
            .with_store(move |store, sh| {
                let config = sh.config();
                let res = store.write(|tx| settle_all(tx, sh, &config, &mut done));
                (res, done)
            })
            .await;
        match res {
            Ok(()) => {
                done.into_iter().for_each(|f| f.cleanup());
                Ok(true)
            }
            // Kept for the next try: the store is back, or has room again, later.
            Err(e) if e.is_connection_lost() || super::super::outage::is_disk_full(&e) => {
                self.done = done;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Whether a finished run was cut off because this daemon was lost, and how.
    pub(super) fn loss_of(&self, job: &str) -> Option<Loss> {
        let f = self.inflight.get(job)?;
        let why = f.kill.borrow().as_ref()?.0.clone();
        match why.as_str() {
            super::super::lease::FENCED => Some(Loss::StoreUnreachable),
            LEASE_LOST => Some(Loss::LeaseLost),
            _ => None,
        }
    }
}
