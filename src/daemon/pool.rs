//! The daemon's pool: its start-up (`startup.rs`), its loop (`drive.rs`) of passes over the
//! store (`tick.rs`: claim ahead for the slots ended jobs freed, settle those jobs and claim
//! up to the free slots, terminate force-killed jobs) on every store change, finished job or
//! `[daemon].tick`, until idle or told to stop; then the graceful shut-down (`stop.rs`).
//!
//! Owns the in-flight bookkeeping (locks held, per-repo counts, kill switches), the status
//! file, and applies the config `reload.rs` reads; each job's own work is `exec::execute`.

mod drive;
mod lost;
mod startup;
mod stop;
mod tick;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;

use super::claim::Claimed;
use super::exec::{self, Finished, Plan};
use super::lease::Registration;
use super::lock::DaemonLock;
use super::outage::{DiskFull, Gone, StoreFile};
use super::reload::Reload;
use super::shutdown::ShutdownHandle;
use super::status::{self, RunningJob, StatusFile};
use super::store_watch::StoreWatch;
use super::{Daemon, DaemonError, DaemonExit, Shared, human_notify, worktree};
use crate::clock::Millis;
use crate::config::Config;
use crate::runtime::KillRequest;

/// How often the status file is rewritten for its heartbeat alone.
const HEARTBEAT_EVERY_MS: Millis = 1_000;

/// One job this daemon is running.
struct InFlight {
    agent: String,
    repo: Option<String>,
    lock_key: Option<String>,
    started_ms: Millis,
    kill: watch::Sender<Option<KillRequest>>,
}

struct Pool {
    shared: Arc<Shared>,
    parallel: usize,
    /// `--parallel` from the command line, which a reload does not override.
    parallel_flag: Option<usize>,
    reload: Option<Reload>,
    until_idle: bool,
    only_root: Option<String>,
    git_checkouts: Arc<HashSet<String>>,
    worktrees_dir: PathBuf,
    status_path: PathBuf,
    started_ms: Millis,
    last_status_ms: Millis,
    /// The running jobs the status file last named.
    status_running: Vec<RunningJob>,
    last_sweep_ms: Millis,
    last_stall_watch_ms: Millis,
    tick_ms: Millis,
    inflight: HashMap<String, InFlight>,
    task_jobs: HashMap<tokio::task::Id, String>,
    tasks: JoinSet<Finished>,
    /// Jobs whose runs ended, settled by the next tick in the transaction that claims
    /// their successors.
    done: Vec<Finished>,
    /// What the stall watch remembers between sweeps (`engine::stall::Memory`).
    stalls: crate::engine::stall::Memory,
    /// `PRAGMA data_version` at the last tick: it moves only when another connection
    /// (a CLI call, the control room, the relay) committed.
    data_version: Option<i64>,
    /// Running `[notify] command`s, awaited before the daemon returns.
    notifying: JoinSet<()>,
    registration: Arc<Registration>,
    last_beat_ms: Millis,
    /// `claim_ahead` on SQLite only: on PostgreSQL every commit waits for the server's flush
    /// under the writers' lock, a cost above what refilling a slot sooner gains.
    claims_ahead: bool,
    /// The SQLite file this daemon opened, to notice it deleted or replaced.
    store_file: Option<StoreFile>,
    /// What went away under the daemon, once something did: it then stops and fails.
    gone: Option<Gone>,
    disk_full: DiskFull,
}

impl Pool {
    /// Applies config.toml when SIGHUP or a change of the file asks for it (see
    /// `reload.rs`); true when it did.
    fn maybe_reload(&mut self) -> bool {
        let now = self.shared.clock.now_ms();
        let Some(new) = self
            .reload
            .as_mut()
            .and_then(|r| r.check(now, self.tick_ms))
        else {
            return false;
        };
        self.apply(new);
        true
    }

    fn apply(&mut self, new: Config) {
        self.parallel = self.parallel_flag.unwrap_or(new.daemon.parallel);
        self.tick_ms = new.daemon.tick.0.max(1);
        self.git_checkouts = Arc::new(worktree::git_checkouts(&new));
        *self
            .shared
            .config
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(new);
    }

    /// How long the loop sleeps without a wake-up: the tick, or less when the next
    /// heartbeat is due sooner (a lease must never lapse because the tick is long).
    fn tick_duration(&self) -> Duration {
        let beat_in =
            self.last_beat_ms + self.registration.beat_every() - self.shared.clock.now_ms();
        Duration::from_millis(self.tick_ms.min(beat_in.max(0)).max(1) as u64)
    }

    /// Runs `[notify] command` for each gate, detached: a slow command never holds a tick.
    fn notify(&mut self, gates: Vec<human_notify::Pending>) {
        let config = self.shared.config();
        let timeout = Duration::from_millis(config.notify.command_timeout.0.max(1) as u64);
        for gate in gates {
            self.notifying.spawn(human_notify::run(
                self.shared.clone(),
                config.notify.command.clone(),
                timeout,
                self.shared.home.root().to_path_buf(),
                gate,
            ));
        }
    }

    fn start(&mut self, c: Claimed, plan: Result<Plan, String>) {
        let (kill_tx, kill_rx) = watch::channel(None);
        let id = c.job.id.clone();
        self.inflight.insert(
            id.clone(),
            InFlight {
                agent: c.job.agent.clone(),
                repo: c.job.repo.clone(),
                lock_key: c.lock_key.clone(),
                started_ms: c.job.started_ms.unwrap_or(self.started_ms),
                kill: kill_tx,
            },
        );
        let shared = self.shared.clone();
        let handle = self
            .tasks
            .spawn(async move { exec::execute(shared, c, plan, kill_rx).await });
        self.task_jobs.insert(handle.id(), id);
    }

    fn finished(&mut self, res: Result<(tokio::task::Id, Finished), tokio::task::JoinError>) {
        let task = match &res {
            Ok((id, _)) => *id,
            Err(e) => e.id(),
        };
        let mut loss = None;
        if let Some(job) = self.task_jobs.remove(&task) {
            if let Err(e) = &res {
                tracing::error!(job = %job, "job task ended abnormally: {e}");
            }
            loss = self.loss_of(&job);
            self.inflight.remove(&job);
        }
        if let Ok((_, mut f)) = res {
            if let Some(loss) = loss {
                f.release_for(loss);
            }
            self.done.push(f);
        }
    }

    fn kill(&self, job: &str, why: &str) {
        if let Some(f) = self.inflight.get(job)
            && f.kill.borrow().is_none()
        {
            let _ = f.kill.send(Some(KillRequest(why.into())));
        }
    }

    /// Writes the status file at most every 250 ms, or every 50 ms when jobs just started:
    /// a burst of trivial jobs would otherwise pay a file write and rename each (a fifth of
    /// the daemon's own cost per job); a start skipped here shows on the next tick. While
    /// the same jobs run, only the heartbeat moves, rewritten once a second: readers call a
    /// daemon stale after ten, and a streaming fleet paid a file a quarter second for it.
    fn write_status(&mut self, force: bool) {
        let now = self.shared.clock.now_ms();
        let every = if force { 50 } else { 250 };
        if now - self.last_status_ms < every {
            return;
        }
        let unchanged = self.inflight.len() == self.status_running.len()
            && self
                .inflight
                .iter()
                .zip(&self.status_running)
                .all(|((id, f), r)| {
                    r.id == *id && r.agent == f.agent && r.started_ms == f.started_ms
                });
        if unchanged && now - self.last_status_ms < HEARTBEAT_EVERY_MS {
            return;
        }
        self.last_status_ms = now;
        let running = self
            .inflight
            .iter()
            .map(|(id, f)| RunningJob {
                id: id.clone(),
                agent: f.agent.clone(),
                started_ms: f.started_ms,
            })
            .collect();
        let file = StatusFile {
            pid: std::process::id(),
            started_ms: self.started_ms,
            parallel: self.parallel,
            last_tick_ms: now,
            running,
        };
        if let Err(e) = status::write(&self.status_path, &file) {
            tracing::warn!("writing the daemon status: {e}");
        }
        self.status_running = file.running;
    }
}

/// What wakes the loop besides a finished job and the tick.
struct Wakers {
    stop: ShutdownHandle,
    /// Rung by SIGHUP and by PostgreSQL's change feed.
    wake: Arc<Notify>,
    store_watch: Option<StoreWatch>,
}

/// Runs the daemon holding `lock`: start-up, the loop, then the shut-down. A daemon whose
/// store or home went away fails once it has stopped (see `outage`).
pub(super) async fn run(d: Daemon, lock: DaemonLock) -> Result<DaemonExit, DaemonError> {
    let store = crate::store::Location::of_home(&d.home).map(|l| l.display());
    run_holding(d, lock).await.map_err(|e| match store {
        // What is full, not only that something is: the store's own error names no file.
        Ok(store) if super::outage::is_disk_full(&e) => DaemonError::DiskFull {
            store,
            cause: e.to_string(),
        },
        _ => e,
    })
}

async fn run_holding(mut d: Daemon, lock: DaemonLock) -> Result<DaemonExit, DaemonError> {
    let (mut pool, mut wakers) = startup::open(&d).await?;
    tracing::info!(parallel = pool.parallel, lock = %lock.path().display(), "daemon: started");
    if let Some(started) = d.on_started.take() {
        started();
    }
    let exit = match pool.drive(&mut wakers).await? {
        Some(exit) => exit,
        None => pool.drain(wakers.stop.is_immediate()).await,
    };
    let gone = pool.gone.take();
    let runs = pool.shared.home.root().join("runs");
    let left = pool
        .close(gone.as_ref().is_none_or(Gone::store_usable))
        .await?;
    tracing::info!(?exit, "daemon: stopped");
    drop(lock);
    match gone {
        Some(gone) => Err(gone.into_error(left, &runs)),
        None => Ok(exit),
    }
}
