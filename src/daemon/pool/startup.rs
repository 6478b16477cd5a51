//! The pool's start-up: the home's private folders and what a dead daemon left in them, the
//! store and what every job shares, this daemon's lease, the restart recovery, and what
//! wakes the loop (signals, the store watcher, the config reload).
//!
//! Runs once before the loop; must not claim or run a job.

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::super::lease::{self, Registration};
use super::super::outage::{DiskFull, StoreFile};
use super::super::reload::Reload;
use super::super::shutdown::on_hangup;
use super::super::store_watch::StoreWatch;
use super::super::{Daemon, DaemonError, Shared, recovery, shutdown, status, worktree};
use super::{Pool, Wakers};
use crate::store::{Backend, Location, Store, StoreError};

/// Makes a folder of the home, only this user's. Not recursively: a home removed while
/// its daemon starts must not be made again under it (the daemon would then run on for
/// it); the start fails instead.
fn private_dir(p: &Path) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(p) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}

/// The chat relay for moot seats; a daemon without one still runs every other job.
fn start_relay(d: &Daemon) -> Option<Arc<crate::chat::relay::RelayHandle>> {
    match crate::chat::relay::Relay::start(&d.home) {
        Ok(r) => Some(Arc::new(r)),
        Err(e) => {
            tracing::warn!("chat relay not started: {e}");
            None
        }
    }
}

/// The home's folders this daemon works in, made if missing.
struct Dirs {
    scratch: PathBuf,
    prompt: PathBuf,
    worktrees: PathBuf,
}

impl Dirs {
    fn make(root: &Path, worktrees: PathBuf) -> Result<Self, DaemonError> {
        // What an agent is handed (its prompt, scratch and temporary folders) lives
        // outside the home, whose path it must not learn.
        let runs = crate::runtime::run_root()?;
        let dirs = Dirs {
            scratch: runs.join("scratch"),
            prompt: runs,
            worktrees,
        };
        for dir in [&dirs.scratch, &root.join("runs")] {
            private_dir(dir)?;
        }
        // Outside the home, so made with its parents (the state folder may be new).
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dirs.worktrees)
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("worktrees folder {}: {e}", dirs.worktrees.display()),
                )
            })?;
        // This daemon holds the home's lock, so spare records left in it belong to a
        // daemon that died; a record itself waits for recovery.
        crate::runtime::spare::remove_all(&root.join("runs"));
        Ok(dirs)
    }
}

/// Registers this daemon and recovers what its predecessors left running.
async fn register_and_recover(
    shared: &Arc<Shared>,
    reg: Arc<Registration>,
    parallel: usize,
) -> Result<(), DaemonError> {
    let recovered = shared
        .with_store(move |store, sh| {
            // On a SQLite file this daemon holds the store's only lock: every other
            // registered daemon is dead and every running job an orphan. A shared
            // PostgreSQL store has live daemons elsewhere, whose jobs (and this host's
            // from before a crash) are recovered only once their lease runs out.
            let now = sh.clock.now_ms();
            let exclusive = store.backend() == Backend::Sqlite;
            lease::register(store, &reg, parallel, now, exclusive)?;
            resume_lands(store, sh);
            if !exclusive {
                recovery::sweep_records(store, sh.home.root());
                return lease::beat(store, sh, &reg, now);
            }
            let recovered = recovery::recover(
                store,
                sh.home.root(),
                sh.clock.as_ref(),
                &sh.config(),
                &*sh.hooks,
            )?;
            recovery::sweep_records(store, sh.home.root());
            Ok::<_, DaemonError>(recovered)
        })
        .await?;
    if !recovered.is_empty() {
        tracing::warn!(
            "daemon: recovered {} orphaned running jobs",
            recovered.len()
        );
    }
    Ok(())
}

/// Finishes or drops the lands this host's CLI or control room left midway (killed), as
/// every CLI start does: a daemon that cannot is still started, the next start tries again.
fn resume_lands(store: &mut Store, sh: &Shared) {
    let config = sh.config();
    let env = crate::engine::Env {
        clock: sh.clock.as_ref(),
        cfg: &config.orchestrate,
        hooks: &*sh.hooks,
    };
    match crate::worktree::resume_lands(store, env, &config) {
        Ok(done) => {
            for r in done {
                tracing::warn!("daemon: {}", r.line());
            }
        }
        Err(e) => tracing::warn!("daemon: interrupted lands left as they are: {e}"),
    }
}

/// What asks the loop to look again: the signals, a store change; and the config reload,
/// which SIGHUP also asks for.
fn wakers(
    d: &Daemon,
    location: &Location,
    shared: &Shared,
) -> Result<(Wakers, Option<Reload>), DaemonError> {
    let wake = Arc::new(Notify::new());
    if d.signals {
        shutdown::on_signals(d.shutdown.clone(), wake.clone())?;
    }
    let store_watch = StoreWatch::for_location(location, &wake);
    let reload = match &d.config_file {
        Some(path) => {
            let hangup = Arc::new(AtomicBool::new(false));
            if d.signals {
                on_hangup(hangup.clone(), wake.clone())?;
            }
            Some(Reload::new(path.clone(), hangup, shared.clock.now_ms()))
        }
        None => None,
    };
    let wakers = Wakers {
        stop: d.shutdown.clone(),
        wake,
        store_watch,
    };
    Ok((wakers, reload))
}

/// Starts the daemon up to its first pass: the pool and what wakes it.
pub(super) async fn open(d: &Daemon) -> Result<(Pool, Wakers), DaemonError> {
    let parallel = d.effective_parallel()?;
    let dirs = Dirs::make(
        d.home.root(),
        crate::worktree::root(d.home.root(), d.config.daemon.worktrees.as_deref()),
    )?;
    let location = Location::of_home(&d.home).map_err(StoreError::from)?;
    let store = Store::open_location(&location)?;
    let store_file = StoreFile::of(&location);
    store.tune_for_batches()?;
    let git_checkouts = worktree::git_checkouts(&d.config);
    let shared = Arc::new(Shared {
        home: d.home.clone(),
        store: std::sync::Mutex::new(store),
        config: std::sync::RwLock::new(Arc::new(d.config.clone())),
        hooks: d.hooks.clone(),
        clock: d.clock.clone(),
        scratch_dir: dirs.scratch,
        prompt_dir: dirs.prompt,
        relay: start_relay(d),
        live_writer: std::sync::OnceLock::new(),
        heard: Default::default(),
        lost_homes: Default::default(),
    });
    let registration = Arc::new(Registration {
        id: crate::store::daemons::new_id(d.only_root.is_some()),
        host: lease::hostname(),
        labels: d
            .labels
            .clone()
            .unwrap_or_else(|| d.config.daemon.labels.clone()),
        lease_ms: d.config.daemon.lease.0.max(1),
    });
    register_and_recover(&shared, registration.clone(), parallel).await?;
    let (wakers, reload) = wakers(d, &location, &shared)?;
    let shared_now = shared.clock.now_ms();
    let pool = Pool {
        started_ms: shared.clock.now_ms(),
        shared,
        parallel,
        parallel_flag: d.parallel,
        reload,
        until_idle: d.until_idle,
        only_root: d.only_root.clone(),
        git_checkouts: Arc::new(git_checkouts),
        worktrees_dir: dirs.worktrees,
        status_path: status::path(&d.home),
        last_status_ms: 0,
        status_running: Vec::new(),
        last_sweep_ms: 0,
        last_stall_watch_ms: 0,
        tick_ms: d.config.daemon.tick.0.max(1),
        inflight: HashMap::new(),
        task_jobs: HashMap::new(),
        tasks: JoinSet::new(),
        done: Vec::new(),
        stalls: Default::default(),
        data_version: None,
        notifying: JoinSet::new(),
        last_beat_ms: shared_now,
        registration,
        claims_ahead: matches!(location, Location::Sqlite(_)),
        store_file,
        gone: None,
        disk_full: DiskFull::new(&location),
    };
    Ok((pool, wakers))
}
