//! Crash recovery on start: every job still `running` belonged to a daemon that died
//! (this one holds the home's lock, so no other is alive). Its leftover process group is
//! killed, its worktree removed, and it is settled through the engine as failed with
//! `daemon restarted while the job was running` — the engine re-queues it as a new
//! attempt when it has retries left and moves its tree on, so nothing stays running.
//!
//! Owns only that pass; it runs before the pool claims anything.

use serde_json::json;

use crate::clock::Clock;
use crate::config::Config;
use crate::domain::JobState;
use crate::engine::{self, EngineError, Hooks, Outcome, Settlement, Usage};
use crate::runtime::process;
use crate::store::Store;
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, JobFilter};

pub const RECOVERED_REASON: &str = "daemon restarted while the job was running";

/// Whether `pid` is still the runtime child of `job_id` (its environment names the job),
/// so a recycled pid is never killed.
fn belongs_to(pid: i32, job_id: &str) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let needle = format!("GITMOOT_JOB_ID={job_id}");
    env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
}

/// Recovers every orphaned running job (and settles cancelled ones that were running);
/// returns their ids.
pub fn recover(
    store: &mut Store,
    clock: &dyn Clock,
    config: &Config,
    hooks: &dyn Hooks,
) -> Result<Vec<String>, EngineError> {
    let mut orphans = jobs::list(
        store.conn(),
        &JobFilter {
            state: Some(JobState::Running),
            ..JobFilter::default()
        },
    )?;
    // A session job runs in an operator's session, not under any daemon.
    orphans.retain(|j| j.dispatched_by != engine::session::SESSION);
    // Jobs cancelled while they ran keep their runtime pid until settled; a crash
    // between the cancel and the settlement leaves them here.
    for id in engine::jobs_to_terminate(store.conn())? {
        if !orphans.iter().any(|j| j.id == id) {
            orphans.push(jobs::require(store.conn(), &id)?);
        }
    }
    let mut recovered = Vec::new();
    for job in orphans {
        let pid = job.runtime_pid.unwrap_or(0) as i32;
        let killed = pid > 1 && process::is_alive(pid) && belongs_to(pid, &job.id);
        if killed {
            process::signal_group(pid, libc::SIGKILL);
        }
        if let (Some(wt), Some(checkout)) = (
            &job.worktree,
            job.repo
                .as_ref()
                .and_then(|r| config.repos.get(r))
                .and_then(|r| r.path.clone()),
        ) {
            super::worktree::remove(&checkout, std::path::Path::new(wt));
        }
        let was_running = job.state == JobState::Running;
        store.write(|tx| -> Result<(), EngineError> {
            if was_running {
                events::append(
                    tx,
                    NewEvent {
                        ts_ms: clock.now_ms(),
                        root_id: Some(&job.root_id),
                        job_id: Some(&job.id),
                        kind: "job_recovery_failed",
                        message: format!(
                            "daemon recovery: {RECOVERED_REASON} (runtime pid {}, {})",
                            job.runtime_pid.map_or("-".to_string(), |p| p.to_string()),
                            if killed {
                                "leftover processes killed"
                            } else {
                                "no process left"
                            }
                        ),
                        data: Some(json!({"runtime_pid": job.runtime_pid, "killed": killed})),
                    },
                )?;
            }
            engine::settle(
                tx,
                clock,
                &config.orchestrate,
                hooks,
                &job.id,
                Settlement {
                    outcome: Outcome::Failed(RECOVERED_REASON.into()),
                    raw_output: None,
                    output_truncated: false,
                    usage: Usage::default(),
                },
            )?;
            Ok(())
        })?;
        recovered.push(job.id);
    }
    Ok(recovered)
}
