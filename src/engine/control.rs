//! Operator controls and the daemon's tick: kill a tree, cancel a job, sweep TTLs and
//! stopped trees, and tell the daemon which running jobs to terminate.
//!
//! Each is one call inside the caller's transaction; the daemon owns the processes.

use crate::store::Tx;
use serde::Serialize;

use super::bounds::{active_ms, stop_reason};
use super::ctx::Ctx;
use super::{EngineError, Env, lost};
use crate::Invalid;
use crate::domain::{EventKind, JobKind, JobState, RunState};
use crate::store::escalations;
use crate::store::jobs::{self, FollowUp};
use crate::store::runs;

/// What a `kill_root` did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KillReport {
    pub root_id: String,
    pub cancelled: Vec<String>,
    /// Running jobs left to finish (or to be terminated by the daemon with `--force`).
    pub running: Vec<String>,
    pub run_state: RunState,
}

/// The refusal of `verb` on `what`, which already ended in `state`.
fn already_ended(what: &str, state: impl std::fmt::Display, verb: &str) -> EngineError {
    Invalid(format!("{what} is already {state}; nothing to {verb}")).into()
}

/// `job kill ROOT [--force]`: stops the tree gracefully (any job id of the tree names it).
pub fn kill_root(
    tx: &Tx<'_>,
    env: Env<'_>,
    id: &str,
    force: bool,
) -> Result<KillReport, EngineError> {
    let job = jobs::require(tx, id)?;
    let root = job.root_id.clone();
    let mut run = runs::require(tx, &root)?;
    if run.state.is_terminal() {
        return Err(already_ended(&format!("run {root}"), run.state, "kill"));
    }
    let ctx = Ctx::new(tx, env);
    run.killed = true;
    run.kill_force |= force;
    run.updated_ms = ctx.now;
    runs::put(tx, &run)?;
    ctx.event(
        &root,
        Some(&root),
        EventKind::DelegationKilled,
        format!(
            "operator killed delegation tree rooted at {root}; new delegations and queued child legs stop, in-flight jobs {}",
            if force { "are terminated" } else { "finish" }
        ),
        Some(serde_json::json!({"force": force})),
    )?;
    let cancelled = stop_tree(&ctx, &root, "killed")?;
    let running = jobs::by_root_in_state(tx, &root, JobState::Running)?
        .into_iter()
        .map(|j| j.id)
        .collect();
    Ok(KillReport {
        root_id: root.clone(),
        cancelled,
        running,
        run_state: runs::require(tx, &root)?.state,
    })
}

/// Cancels queued legs (and a queued root), closes open rounds, and moves every batch on;
/// ends the run when nothing is left to run. Returns the cancelled job ids.
fn stop_tree(ctx: &Ctx<'_, '_>, root: &str, verb: &str) -> Result<Vec<String>, EngineError> {
    let mut cancelled = Vec::new();
    for mut j in jobs::by_root_in_state(ctx.tx, root, JobState::Queued)? {
        if j.kind == JobKind::Continuation {
            // The queued synthesis becomes the tree's one finalize: same slot, same id.
            let reason = runs::require(ctx.tx, root)
                .ok()
                .and_then(|r| stop_reason(&r))
                .unwrap_or_else(|| verb.to_string());
            j.kind = JobKind::Finalize;
            j.prompt.push_str(&format!(
                "\nA termination backstop was reached ({reason}). This is now your FINAL \
                 continuation: return an EMPTY delegations list. Any delegations you return now \
                 will be ignored.\n"
            ));
            j.updated_ms = ctx.now;
            jobs::put(ctx.tx, &j)?;
            let parent = j.parent_id.clone().unwrap_or_default();
            ctx.event(
                root,
                Some(&parent),
                EventKind::DelegationFinalizeEnqueued,
                format!(
                    "termination backstop tripped ({reason}); queued continuation {} now finalizes",
                    j.id
                ),
                Some(serde_json::json!({"job": j.id, "reason": reason})),
            )?;
            continue;
        }
        if matches!(j.kind, JobKind::Leg | JobKind::Root) {
            ctx.finish_job(
                &mut j,
                JobState::Cancelled,
                format!(
                    "delegation tree rooted at {root} stopped; queued job cancelled before start"
                ),
            )?;
            cancelled.push(j.id.clone());
        }
    }
    // An interrupted job waits for a human the stopped tree no longer has a use for.
    for mut j in jobs::by_root_in_state(ctx.tx, root, JobState::Interrupted)? {
        ctx.finish_job(
            &mut j,
            JobState::Cancelled,
            format!("delegation tree rooted at {root} stopped; interrupted job cancelled"),
        )?;
        cancelled.push(j.id.clone());
    }
    ctx.close_rounds_for_stop(root, verb)?;
    lost::unpause(ctx, root)?;
    for id in &cancelled {
        let j = jobs::require(ctx.tx, id)?;
        ctx.propagate(&j)?;
    }
    // Deepest first, so a leg's own batch settles before its parent's is re-read.
    let mut batches: Vec<_> = jobs::by_root(ctx.tx, root)?
        .into_iter()
        .filter(|j| j.followup == FollowUp::Batch)
        .collect();
    batches.sort_by_key(|j| std::cmp::Reverse(j.depth));
    for b in batches {
        ctx.advance_batch(&b.id)?;
    }
    end_if_idle(ctx, root)?;
    Ok(cancelled)
}

/// A stopped tree with nothing queued or running ends now, whatever is still unresolved.
fn end_if_idle(ctx: &Ctx<'_, '_>, root: &str) -> Result<(), EngineError> {
    let mut run = runs::require(ctx.tx, root)?;
    if run.state.is_terminal() || jobs::live_in_root(ctx.tx, root)? > 0 {
        return Ok(());
    }
    if stop_reason(&run).is_none() {
        return Ok(());
    }
    let root_job = jobs::require(ctx.tx, root)?;
    ctx.propagate(&root_job)?;
    run = runs::require(ctx.tx, root)?;
    if !run.state.is_terminal() && jobs::live_in_root(ctx.tx, root)? == 0 {
        let before = run.clone();
        run.state = if run.killed {
            RunState::Killed
        } else {
            RunState::Blocked
        };
        ctx.close_run(&before, &mut run)?;
    }
    Ok(())
}

/// `job cancel ID`: a queued or running job ends cancelled and its parent moves on. A
/// running one stays listed by `jobs_to_terminate` until the daemon reports it gone.
pub fn cancel_job(tx: &Tx<'_>, env: Env<'_>, id: &str) -> Result<(), EngineError> {
    let mut job = jobs::require(tx, id)?;
    if job.state.is_terminal() {
        return Err(already_ended(&format!("job {id}"), job.state, "cancel"));
    }
    let ctx = Ctx::new(tx, env);
    let from = job.state;
    ctx.finish_job(
        &mut job,
        JobState::Cancelled,
        format!("cancel requested from {from}"),
    )?;
    if from == JobState::Interrupted {
        lost::unpause(&ctx, &job.root_id)?;
    }
    ctx.propagate(&job)
}

/// Running jobs the daemon must terminate now: those of a tree killed with `--force`, and
/// running jobs cancelled by hand (they keep their `runtime_pid` until settled).
pub fn jobs_to_terminate(conn: &Tx<'_>) -> Result<Vec<String>, EngineError> {
    Ok(jobs::to_terminate(conn)?)
}

/// Whether the daemon may start this queued job (a stopped tree starts no new legs).
pub fn may_start(conn: &Tx<'_>, job: &jobs::Job) -> Result<bool, EngineError> {
    let run = runs::require(conn, &job.root_id)?;
    Ok(job.state == JobState::Queued
        && !run.state.is_terminal()
        && !(stop_reason(&run).is_some() && job.kind == JobKind::Leg))
}

/// What one sweep did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SweepReport {
    /// Rounds auto-finalized by the escalation TTL.
    pub expired_rounds: Vec<i64>,
    /// Stopped runs that ended with nothing left to run.
    pub ended: Vec<String>,
}

/// The daemon's tick: TTL auto-finalize and stopped trees ending.
pub fn sweep(tx: &Tx<'_>, env: Env<'_>) -> Result<SweepReport, EngineError> {
    let ctx = Ctx::new(tx, env);
    let mut report = SweepReport::default();
    for mut r in escalations::open(tx)? {
        if r.opened_ms + env.cfg.escalation_ttl.0 > ctx.now {
            continue;
        }
        ctx.resolve_round(&mut r, "ttl", None, None)?;
        ctx.after_round_timeout(&r)?;
        report.expired_rounds.push(r.id);
    }
    for run in runs::live(tx)? {
        // The wall-clock bound is only checked when a coordinator fans out (`bounds`); the
        // tick just lets this process's clock see the tree early, so it measures its age.
        active_ms(&run, ctx.clock, ctx.now);
        if stop_reason(&run).is_some() {
            end_if_idle(&ctx, &run.root_id)?;
            if runs::require(tx, &run.root_id)?.state.is_terminal() {
                report.ended.push(run.root_id.clone());
            }
        }
    }
    Ok(report)
}
