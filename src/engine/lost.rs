//! A running job whose daemon was lost (its lease ran out, its host or process is gone, it
//! stopped without settling, or it lost its store long enough to stop its agents): read-only
//! work (`ask`, `review`) runs again as its next attempt; an `implement`, whose writes may
//! be half done, waits `interrupted` for a human to retry or cancel it. Also those two
//! verbs on an interrupted job.
//!
//! Owns the job's move out of `running` for a loss and back; deciding that a daemon is lost
//! and fencing its late settlement are the daemon's (`daemon::lease`, `daemon::exec`).

use serde_json::json;

use super::ctx::Ctx;
use super::{EngineError, Env, Outcome, ResumeVerb, Settlement};
use crate::Invalid;
use crate::domain::{Action, EventKind, JobState, RunState};
use crate::store::Tx;
use crate::store::events;
use crate::store::jobs::{self, Job};
use crate::store::{escalations, runs};

/// How often one job may run again because its daemon was lost before it fails: a job that
/// takes every host it lands on down must not circle the fleet for ever.
pub const MAX_RERUNS: usize = 3;

/// What happened to the daemon that ran a job, as its events say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// It stopped renewing its lease (paused, partitioned, or gone; nobody can tell which).
    LeaseLost,
    /// It is known to be gone: its process died, or its host.
    HostLost,
    /// It could not reach the store for most of its lease and stopped its agents.
    StoreUnreachable,
    /// It stopped (deregistered) while the job was still `running` in the store.
    DaemonStopped,
}

impl Loss {
    pub fn as_str(self) -> &'static str {
        match self {
            Loss::LeaseLost => "lease lost",
            Loss::HostLost => "host lost",
            Loss::StoreUnreachable => "store unreachable",
            Loss::DaemonStopped => "daemon stopped",
        }
    }
}

/// Where a lost job went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// Queued again as this attempt.
    Requeued(u32),
    /// Waiting for a human.
    Interrupted,
    /// Ran again too often; failed.
    Failed,
}

/// Moves `job_id`, running under the daemon that was lost, out of `running` for `loss`
/// (`detail` names the daemon): see the module doc. The caller has checked, in `tx`, that
/// the job is still the lost daemon's claim.
pub fn release(
    tx: &Tx<'_>,
    env: Env<'_>,
    job_id: &str,
    loss: Loss,
    detail: &str,
) -> Result<Released, EngineError> {
    let ctx = Ctx::new(tx, env);
    let mut job = jobs::require(tx, job_id)?;
    let data = json!({"reason": loss.as_str(), "daemon": job.daemon_id, "attempt": job.attempt});
    if job.action == Action::Implement {
        job.state = JobState::Interrupted;
        job.runtime_pid = None;
        job.updated_ms = ctx.now;
        jobs::put(tx, &job)?;
        ctx.job_event(
            &job,
            EventKind::Interrupted,
            format!(
                "{}: {detail}; its writes may be half done, so it is not re-run blindly: \
                 `gitmoot job resume {} retry` runs it again, `gitmoot job cancel {}` ends it",
                loss.as_str(),
                job.id,
                job.id
            ),
            Some(data),
        )?;
        ctx.pause(&job.root_id)?;
        return Ok(Released::Interrupted);
    }
    let reruns = events::for_job(tx, &job.id)?
        .iter()
        .filter(|e| e.kind == EventKind::JobRequeued.as_str())
        .count();
    if reruns >= MAX_RERUNS {
        let reason = format!(
            "{}: {detail}; it already ran again {reruns} times after its daemon was lost",
            loss.as_str()
        );
        super::settle(tx, env, &job.id, Settlement::of(Outcome::Failed(reason)))?;
        return Ok(Released::Failed);
    }
    requeue(
        &ctx,
        &mut job,
        format!("{}: {detail}", loss.as_str()),
        Some(data),
    )?;
    Ok(Released::Requeued(job.attempt))
}

/// Queues `job` again as its next attempt, as a claim finds it.
fn requeue(
    ctx: &Ctx<'_, '_>,
    job: &mut Job,
    why: String,
    data: Option<serde_json::Value>,
) -> Result<(), EngineError> {
    job.state = JobState::Queued;
    job.attempt += 1;
    job.runtime_pid = None;
    job.started_ms = None;
    job.worktree = None;
    job.updated_ms = ctx.now;
    jobs::put(ctx.tx, job)?;
    ctx.job_event(
        job,
        EventKind::JobRequeued,
        format!("{why}; runs again as attempt {}", job.attempt),
        data,
    )
}

/// `job resume JOB retry|abort` on an interrupted job: `retry` queues it again as its next
/// attempt, `abort` cancels it (as `job cancel` does).
pub fn resume(
    tx: &Tx<'_>,
    env: Env<'_>,
    job_id: &str,
    verb: ResumeVerb,
) -> Result<(), EngineError> {
    let ctx = Ctx::new(tx, env);
    let mut job = jobs::require(tx, job_id)?;
    match verb {
        ResumeVerb::Retry => {
            requeue(
                &ctx,
                &mut job,
                "retried by a human after it was interrupted".into(),
                None,
            )?;
            unpause(&ctx, &job.root_id)
        }
        ResumeVerb::Abort => super::cancel_job(tx, env, job_id),
        ResumeVerb::Continue => Err(Invalid(format!(
            "job {job_id} was interrupted; resume it with retry or abort (or `gitmoot job cancel {job_id}`)"
        ))
        .into()),
    }
}

/// `unpause` for a caller outside the engine: a late settlement of an interrupted job.
pub fn resume_clock(tx: &Tx<'_>, env: Env<'_>, root: &str) -> Result<(), EngineError> {
    unpause(&Ctx::new(tx, env), root)
}

/// The run's clock resumes once nothing in it waits for a human any more.
pub(super) fn unpause(ctx: &Ctx<'_, '_>, root: &str) -> Result<(), EngineError> {
    let waiting = !escalations::open_for_root(ctx.tx, root)?.is_empty()
        || !jobs::by_root_in_state(ctx.tx, root, JobState::Interrupted)?.is_empty();
    if waiting {
        return Ok(());
    }
    let mut run = runs::require(ctx.tx, root)?;
    if let Some(since) = run.paused_since_ms.take() {
        run.paused_ms += ctx.now - since;
    }
    if run.state == RunState::AwaitingHuman {
        run.state = RunState::Running;
    }
    run.updated_ms = ctx.now;
    runs::put(ctx.tx, &run)?;
    Ok(())
}
