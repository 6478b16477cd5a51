//! A review round: a settled root job sent back to the same agent as its next attempt, under
//! its own id (so a write job works on in the same worktree and branch), with a new prompt
//! (the review comments on top), and its run opened again until the round settles.
//!
//! Owns the job's and run's move back to work; what the comments say and where the work
//! lives are `crate::worktree`'s.

use serde_json::json;

use super::ctx::Ctx;
use super::{EngineError, Env};
use crate::Invalid;
use crate::domain::{EventKind, JobKind, JobState, RunState};
use crate::store::Tx;
use crate::store::jobs;
use crate::store::runs;

/// Queues `job_id` again as its next attempt with `prompt`; the attempt number.
pub fn send_back(
    tx: &Tx<'_>,
    env: Env<'_>,
    job_id: &str,
    prompt: String,
    note: &str,
) -> Result<u32, EngineError> {
    let ctx = Ctx::new(tx, env);
    let mut job = jobs::require(tx, job_id)?;
    if job.kind != JobKind::Root {
        return Err(Invalid(format!(
            "{job_id} is a {}; only a root job is sent back",
            job.kind
        ))
        .into());
    }
    if !matches!(
        job.state,
        JobState::Succeeded | JobState::Failed | JobState::Blocked
    ) {
        return Err(Invalid(format!(
            "{job_id} is {}; a job is sent back once it has ended",
            job.state
        ))
        .into());
    }
    let mut run = runs::require(tx, &job.root_id)?;
    if run.killed {
        return Err(Invalid(format!("{}'s tree was killed", job.root_id)).into());
    }
    let before = json!({"state": job.state, "result": job.result, "error": job.error});
    job.state = JobState::Queued;
    job.attempt += 1;
    job.prompt = prompt;
    job.result = None;
    job.error = None;
    job.raw_output = None;
    job.runtime_pid = None;
    job.started_ms = None;
    job.finished_ms = None;
    job.updated_ms = ctx.now;
    jobs::put(tx, &job)?;
    run.state = RunState::Running;
    run.finished_ms = None;
    run.jobs += 1;
    run.updated_ms = ctx.now;
    runs::put(tx, &run)?;
    ctx.job_event(
        &job,
        EventKind::ReviewRound,
        format!("{note}; runs again as attempt {}", job.attempt),
        Some(json!({"attempt": job.attempt, "previous": before})),
    )?;
    Ok(job.attempt)
}
