//! Crash recovery on start: every job still `running` belonged to a daemon that died
//! (this one holds the home's lock, so no other is alive). Its leftover processes are
//! killed and its worktree removed. A job whose agent finished before the daemon died is
//! settled from its recorded output (`<home>/runs/<job>.<runtime>.out`); any other is
//! settled through the engine as failed with
//! `daemon restarted while the job was running` — the engine re-queues it as a new
//! attempt when it has retries left and moves its tree on, so nothing stays running.
//!
//! Owns only that pass; it runs before the pool claims anything.

use serde_json::json;

use crate::clock::Clock;
use crate::config::Config;
use crate::domain::{EventKind, JobState};
use crate::engine::lost::Loss;
use crate::engine::{self, EngineError, Hooks, Outcome, Settlement};
use std::path::{Path, PathBuf};

use crate::contract;
use crate::domain::RuntimeKind;
use crate::runtime::{self, RuntimeOutput, process};
use crate::store::Store;
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, JobFilter};

pub const RECOVERED_REASON: &str = "daemon restarted while the job was running";

/// The output a finished agent of a dead daemon left in its record, read as its runtime
/// reads it: `Some` only when it holds a valid result (its exit code died with the
/// daemon, so the result alone says the work was done).
fn finished_output(home: &Path, job_id: &str) -> Option<(RuntimeKind, RuntimeOutput, PathBuf)> {
    [
        RuntimeKind::Claude,
        RuntimeKind::Codex,
        RuntimeKind::Kimi,
        RuntimeKind::Shell,
    ]
    .into_iter()
    .find_map(|kind| {
        let path = super::record_path(home, job_id, kind);
        let (bytes, cut) = process::read_record(&path).ok()?;
        let out = runtime::interpret(
            kind,
            &process::ProcessOutput {
                stdout: bytes,
                stdout_truncated: cut,
                stderr_tail: Vec::new(),
                exit: process::Exit::Code(0),
                elapsed: std::time::Duration::ZERO,
            },
        );
        Some((kind, out, path))
    })
}

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
pub(crate) fn recover(
    store: &mut Store,
    home: &Path,
    clock: &dyn Clock,
    config: &Config,
    hooks: &dyn Hooks,
) -> Result<Vec<String>, EngineError> {
    let (mut orphans, unreadable) = jobs::list_readable(
        store.conn(),
        &JobFilter {
            state: Some(JobState::Running),
            ..JobFilter::default()
        },
    )?;
    // A corrupt running row fails alone; it must not keep the daemon from starting.
    for u in &unreadable {
        let readable = store.write(|tx| jobs::quarantine(tx, u, clock.now_ms()))?;
        if readable {
            orphans.push(jobs::require(store.conn(), &u.id)?);
        }
    }
    // A session job runs in an operator's session, not under any daemon.
    orphans.retain(|j| j.dispatched_by != engine::session::SESSION);
    // Jobs cancelled while they ran keep their runtime pid until settled; a crash
    // between the cancel and the settlement leaves them here.
    for id in engine::jobs_to_terminate(&store.conn())? {
        if !orphans.iter().any(|j| j.id == id) {
            orphans.push(jobs::require(store.conn(), &id)?);
        }
    }
    let env = engine::Env {
        clock,
        cfg: &config.orchestrate,
        hooks,
    };
    recover_jobs(
        store,
        home,
        env,
        config,
        orphans,
        Local::Yes,
        Unfinished::Fail,
    )
}

/// Removes the stdout records of jobs that are not running. A daemon lists an ended
/// run's record for the next run to take over (see `runtime::spare`), so one that died
/// leaves those behind under their jobs' names; a record of a running job waits for its
/// recovery. A job whose row cannot be read keeps its record.
pub(crate) fn sweep_records(store: &Store, home: &Path) {
    let Ok(entries) = std::fs::read_dir(home.join("runs")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(super::record_job) else {
            continue;
        };
        let ended = jobs::get(store.conn(), &id)
            .is_ok_and(|j| j.is_none_or(|j| j.state != JobState::Running));
        if ended {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether the daemon whose jobs are recovered ran on this host: only then are its
/// leftover processes ours to kill and its stdout records ours to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Local {
    Yes,
    No,
}

/// What becomes of a recovered job whose agent left no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unfinished {
    /// This home's daemon restarted (SQLite): failed with `RECOVERED_REASON`; the engine
    /// retries a leg with retries left as a new attempt.
    Fail,
    /// A daemon of a shared store was lost: read-only work runs again, an `implement`
    /// waits `interrupted` (`engine::lost`).
    Release(Loss),
}

/// Settles `orphans`, running jobs whose daemon is gone: from the agent's recorded output
/// when it finished, else as `unfinished` says. Each is taken only while it is still the
/// claim it was read as (several daemons may recover at once). Returns their ids.
pub(crate) fn recover_jobs(
    store: &mut Store,
    home: &Path,
    env: engine::Env<'_>,
    config: &Config,
    orphans: Vec<jobs::Job>,
    local: Local,
    unfinished: Unfinished,
) -> Result<Vec<String>, EngineError> {
    // Whatever the dead daemon's agents left behind (grandchildren outside the group
    // survive the leader's death signal) dies now, found by the job marker.
    if local == Local::Yes {
        let ids: Vec<&str> = orphans.iter().map(|j| j.id.as_str()).collect();
        process::kill_marked(&ids);
    }
    let mut recovered = Vec::new();
    for job in orphans {
        let pid = job.runtime_pid.unwrap_or(0) as i32;
        let killed =
            local == Local::Yes && pid > 1 && crate::pid::is_alive(pid) && belongs_to(pid, &job.id);
        if killed {
            process::signal_group(pid, libc::SIGKILL);
        }
        if let (true, Some(wt), Some(checkout)) = (
            local == Local::Yes,
            &job.worktree,
            job.repo
                .as_ref()
                .and_then(|r| config.repos.get(r))
                .and_then(|r| r.path.clone()),
        ) {
            super::worktree::remove(&checkout, std::path::Path::new(wt));
        }
        // Its agent may have finished before the daemon died: then its record holds the
        // result and the job is settled with it, not failed and done twice.
        let finished = (local == Local::Yes)
            .then(|| finished_output(home, &job.id))
            .flatten();
        let parsed = finished
            .as_ref()
            .filter(|_| job.state == JobState::Running)
            .and_then(|(_, out, _)| {
                out.error
                    .is_none()
                    .then(|| contract::parse(&out.text).ok())
                    .flatten()
                    .map(|r| (r, out.clone()))
            });
        let path = finished.map(|(_, _, path)| path);
        let taken =
            store.write(|tx| settle_one(tx, env, config, &job, parsed, killed, unfinished))?;
        if let Some(path) = path {
            let _ = std::fs::remove_file(path);
        }
        if taken {
            recovered.push(job.id);
        }
    }
    Ok(recovered)
}

/// Settles one orphan in `tx` from its recorded result, or as `unfinished` says; false
/// when the job is no longer the claim it was read as (another daemon took it).
fn settle_one(
    tx: &crate::store::Tx<'_>,
    env: engine::Env<'_>,
    config: &Config,
    job: &jobs::Job,
    parsed: Option<(contract::GitmootResult, RuntimeOutput)>,
    killed: bool,
    unfinished: Unfinished,
) -> Result<bool, EngineError> {
    let now = jobs::require(tx, &job.id)?;
    if (&now.state, &now.daemon_id, now.attempt) != (&job.state, &job.daemon_id, job.attempt) {
        return Ok(false);
    }
    let was_running = job.state == JobState::Running;
    let event = |kind, message: String, data| {
        let event = NewEvent::job(env.clock.now_ms(), &job.root_id, &job.id, kind).message(message);
        events::append(tx, NewEvent { data, ..event })
    };
    let settlement = match (parsed, unfinished) {
        (Some((result, out)), _) => {
            // Stored exactly as a run read live would be: redacted, capped, priced.
            let model = super::exec::plan(tx, job, config)
                .ok()
                .and_then(Result::ok)
                .and_then(|p| p.model);
            event(
                EventKind::JobRecovered,
                "daemon recovery: the agent finished while the daemon was down; settled from its recorded output".to_string(),
                None,
            )?;
            super::settlement(
                Outcome::Parsed(result),
                &out.text,
                out.truncated,
                &out.usage,
                out.vendor_cost_usd,
                model.as_deref(),
            )
        }
        (None, Unfinished::Release(loss)) if was_running => {
            let detail = format!(
                "daemon {} was lost while the job ran{}",
                job.daemon_id.as_deref().unwrap_or("-"),
                if killed {
                    "; its leftover processes were killed"
                } else {
                    ""
                }
            );
            engine::lost::release(tx, env, &job.id, loss, &detail)?;
            return Ok(true);
        }
        (None, _) => {
            if was_running {
                event(
                    EventKind::JobRecoveryFailed,
                    format!(
                        "daemon recovery: {RECOVERED_REASON} (runtime pid {}, {})",
                        job.runtime_pid.map_or("-".to_string(), |p| p.to_string()),
                        if killed {
                            "leftover processes killed"
                        } else {
                            "no process left"
                        }
                    ),
                    Some(json!({"runtime_pid": job.runtime_pid, "killed": killed})),
                )?;
            }
            Settlement::of(Outcome::Failed(RECOVERED_REASON.into()))
        }
    };
    engine::settle(tx, env, &job.id, settlement)?;
    Ok(true)
}
