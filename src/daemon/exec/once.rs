//! One run of a job's runtime: its environment and request, the process under the job's
//! deadline and kill channel, and its pid recorded for crash recovery once it has run a
//! moment.
//!
//! Runs and interprets only; whether the output settles the job is `runs.rs`'s.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::super::Shared;
use super::Plan;
use crate::clock::Clock;
use crate::domain::JobState;
use crate::runtime::{self, KillRequest, Request, RuntimeOutput, process};
use crate::store::jobs::{self, Job};
use crate::store::{Store, StoreError};

/// A runtime that is still running this long after its start gets its pid recorded (for
/// crash recovery); trivial jobs that end sooner skip that write, which would otherwise be
/// a large share of their cost.
pub(crate) const PID_RECORD_DELAY: Duration = Duration::from_millis(25);

/// Records the runtime pid while the job still runs (a settled job is left alone).
fn record_pid(
    store: &mut Store,
    clock: &dyn Clock,
    job_id: &str,
    pid: u32,
) -> Result<(), StoreError> {
    store.write(|tx| {
        if let Some(mut j) = jobs::get(tx, job_id)?
            && j.state == JobState::Running
        {
            j.runtime_pid = Some(i64::from(pid));
            j.updated_ms = clock.now_ms();
            jobs::put(tx, &j)?;
        }
        Ok(())
    })
}

/// Ends a run's scratch (its folder of its own goes when `run_once` returns): first, a
/// stash the agent left in its git layer is kept as tags of its job, since the layer goes
/// with the scratch; said in the log when that failed.
async fn keep_layer(
    prepared: runtime::Prepared,
    dir: &Path,
    writable: &crate::runtime::sandbox::Grant,
) {
    if let (Some(upper), Some(grant)) = (&prepared.git_layer, &writable.git) {
        let (dir, branch, upper) = (dir.to_path_buf(), grant.branch.clone(), upper.clone());
        let kept =
            tokio::task::spawn_blocking(move || crate::worktree::keep_stash(&dir, &branch, &upper))
                .await;
        match kept {
            Ok(Ok(tags)) if !tags.is_empty() => {
                tracing::info!("the agent left its stash: kept as {}", tags.join(", "))
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!("keeping the agent's stash: {e}"),
            Err(e) => tracing::warn!("keeping the agent's stash: {e}"),
        }
    }
    drop(prepared);
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn run_once(
    shared: &Arc<Shared>,
    plan: &Plan,
    job: &Job,
    prompt: &str,
    (dir, writable): (&Path, &crate::runtime::sandbox::Grant),
    (repair, seat_env): (u32, &[(String, String)]),
    deadline: Instant,
    (kill, lines): (
        watch::Receiver<Option<KillRequest>>,
        Option<process::LineSender>,
    ),
) -> RuntimeOutput {
    let mut env = runtime::agent_env(plan.kind, &shared.config().runtime(plan.kind).env);
    let identity = runtime::JobIdentity {
        id: &job.id,
        root_id: &job.root_id,
        parent_id: job.parent_id.as_deref(),
        delegation_id: job.delegation_id.as_deref(),
        kind: job.kind,
        action: job.action,
        repo: job.repo.as_deref(),
        attempt: job.attempt,
    };
    env.extend(runtime::job_env(&identity, repair));
    env.extend(seat_env.iter().cloned());
    // A job with no checkout of its own works in a folder of its own run, outside the home.
    let work = if dir == shared.scratch_dir {
        match runtime::private_dir(&shared.prompt_dir, "work") {
            Ok(w) => Some(w),
            Err(e) => {
                return RuntimeOutput {
                    error: Some(format!("making the run's folder: {e}")),
                    ..RuntimeOutput::default()
                };
            }
        }
    } else {
        None
    };
    let dir = work.as_ref().map_or(dir, |w| w.0.as_path());
    let req = Request {
        kind: plan.kind,
        binary: plan.binary.clone(),
        command: plan.command.as_deref(),
        model: plan.model.as_deref(),
        effort: plan.effort.as_deref(),
        policy: plan.policy,
        prompt,
        cwd: dir,
        writable,
        scratch: &shared.prompt_dir,
        home: shared.home.root(),
        sockets: &[crate::chat::relay::ENV_SOCKET],
        env,
    };
    let prepared = match runtime::prepare(&req) {
        Ok(p) => p,
        Err(e) => {
            return RuntimeOutput {
                error: Some(e.to_string()),
                ..RuntimeOutput::default()
            };
        }
    };
    let remaining = deadline.saturating_duration_since(Instant::now());
    let (pid_tx, pid_rx) = tokio::sync::oneshot::channel::<u32>();
    let result = {
        let record = super::super::record_path(shared.home.root(), &job.id, plan.kind);
        let run = process::run_recorded(
            &prepared.invocation,
            Some(&record),
            Some(remaining),
            kill,
            |pid| {
                let _ = pid_tx.send(pid);
            },
            lines,
        );
        tokio::pin!(run);
        let mut pid_rx = Some(pid_rx);
        let mut record_at: Option<(u32, tokio::time::Instant)> = None;
        let mut recording: Option<tokio::task::JoinHandle<()>> = None;
        let result = loop {
            tokio::select! {
                r = &mut run => break r,
                Ok(pid) = async { pid_rx.as_mut().expect("guarded").await }, if pid_rx.is_some() => {
                    pid_rx = None;
                    record_at = Some((pid, tokio::time::Instant::now() + PID_RECORD_DELAY));
                }
                _ = tokio::time::sleep_until(record_at.map_or_else(tokio::time::Instant::now, |r| r.1)),
                    if record_at.is_some() => {
                    let (pid, _) = record_at.take().expect("guarded");
                    let (shared, id) = (shared.clone(), job.id.clone());
                    recording = Some(tokio::spawn(async move {
                        let res = shared
                            .with_store(move |store, sh| record_pid(store, sh.clock.as_ref(), &id, pid))
                            .await;
                        if let Err(e) = res {
                            tracing::warn!("recording the runtime pid: {e}");
                        }
                    }));
                }
            }
        };
        // The pid write must land before the settlement that follows.
        if let Some(h) = recording {
            let _ = h.await;
        }
        result
    };
    keep_layer(prepared, dir, writable).await;
    match result {
        Ok(out) => runtime::interpret(plan.kind, &out),
        Err(e) => RuntimeOutput {
            error: Some(format!("runtime {}: {e}", plan.kind)),
            ..RuntimeOutput::default()
        },
    }
}
