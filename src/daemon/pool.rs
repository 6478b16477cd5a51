//! The daemon's loop: recover, then tick — claim ahead for the slots ended jobs freed,
//! settle those jobs and claim up to the free slots, terminate force-killed jobs, refresh
//! the status file — on every store change, finished job or `[daemon].tick`, until idle or
//! told to stop; then the graceful shutdown.
//!
//! Owns the in-flight bookkeeping (locks held, per-repo counts, kill switches) and applies
//! the config `reload.rs` reads; each job's own work is `exec::execute`.

use crate::store::Tx;
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;

use super::Shared;
use super::claim::{self, ClaimContext, Claimed};
use super::exec::{self, Finished, Plan};
use super::lock::DaemonLock;
use super::registry::{self, Registration};
use super::reload::Reload;
use super::shutdown::on_hangup;
use super::status::{self, RunningJob, StatusFile};
use super::store_watch::StoreWatch;
use super::{Daemon, DaemonError, DaemonExit, human_notify, recovery, shutdown, worktree};
use crate::clock::Millis;
use crate::config::Config;
use crate::domain::JobState;
use crate::engine;
use crate::runtime::KillRequest;
use crate::store::{Backend, Location, Store, StoreError, jobs};

/// One job this daemon is running.
struct InFlight {
    agent: String,
    repo: Option<String>,
    lock_key: Option<String>,
    started_ms: Millis,
    kill: watch::Sender<Option<KillRequest>>,
}

/// What one tick learned from the store.
struct TickReport {
    claimed: Vec<(Claimed, Result<Plan, String>)>,
    force_killed: Vec<String>,
    /// Human gates to run `[notify] command` for.
    notify: Vec<human_notify::Pending>,
    /// Queued + running jobs in the store, when `until_idle` asked for it.
    live: Option<u64>,
    /// `PRAGMA data_version` as this tick read it.
    data_version: i64,
}

impl TickReport {
    fn empty(data_version: i64) -> Self {
        Self {
            claimed: Vec::new(),
            force_killed: Vec::new(),
            notify: Vec::new(),
            live: None,
            data_version,
        }
    }
}

/// Settles each finished job in `tx`, each under its own savepoint: one whose settlement
/// fails is logged and left `running` (recovery fails it) without undoing the others.
fn settle_all(
    tx: &Tx<'_>,
    sh: &Shared,
    config: &Config,
    done: &mut [Finished],
) -> Result<(), DaemonError> {
    let env = sh.env(config);
    for f in done.iter_mut() {
        let settled = crate::store::savepoint(tx, || f.settle(tx, env))?;
        if let Err(e) = settled {
            tracing::error!(job = %f.job_id(), "settling failed: {e}");
        }
    }
    Ok(())
}

/// Makes a folder of the home, only this user's. Not recursively: a home removed while
/// its daemon starts must not be made again under it (the daemon would then run on for
/// it); the start fails instead.
fn private_dir(p: &Path) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(p) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
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
    last_sweep_ms: Millis,
    tick_ms: Millis,
    inflight: HashMap<String, InFlight>,
    task_jobs: HashMap<tokio::task::Id, String>,
    tasks: JoinSet<Finished>,
    /// Jobs whose runs ended, settled by the next tick in the transaction that claims
    /// their successors.
    done: Vec<Finished>,
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

    /// One pass over the store. `woke_only`: nothing but the store watcher asked for it,
    /// so when no other connection committed since the last pass (our own commits wake the
    /// watcher too) and no sweep is due, there is nothing to do.
    fn tick(&mut self, woke_only: bool) -> Result<TickReport, DaemonError> {
        let mut done = std::mem::take(&mut self.done);
        let last_version = self.data_version;
        let free = self.parallel.saturating_sub(self.inflight.len());
        let ctx = self.claim_context(HashSet::new());
        let any_inflight = !self.inflight.is_empty();
        let until_idle = self.until_idle;
        let now = self.shared.clock.now_ms();
        // The engine's sweep (TTL, wall clock, stopped trees) scans every live run: once
        // per `[daemon].tick`, not on each of the many wake-ups a busy store causes.
        let sweep_due = now - self.last_sweep_ms >= self.tick_ms;
        if sweep_due {
            self.last_sweep_ms = now;
        }
        let beat_due = now - self.last_beat_ms >= self.registration.beat_every();
        if beat_due {
            self.last_beat_ms = now;
        }
        let reg = self.registration.clone();
        let report =
            self.shared
                .with_store_here(|store, sh| -> Result<TickReport, DaemonError> {
                    let version = store.data_version()?;
                    let idle = woke_only && !sweep_due && !beat_due && done.is_empty();
                    if idle && last_version == Some(version) {
                        return Ok(TickReport::empty(version));
                    }
                    if beat_due {
                        registry::beat(store, sh, &reg, now)?;
                    }
                    let config = &ctx.config;
                    if sweep_due {
                        store.write(|tx| engine::sweep(tx, sh.env(config)))?;
                        if config.chat.auto_respond {
                            let asked = store.write(|tx| {
                                crate::chat::autorespond_sweep(tx, sh.clock.as_ref(), config)
                            });
                            if let Err(e) = asked {
                                tracing::warn!("auto-respond sweep: {e}");
                            }
                        }
                    }
                    // The jobs that ended settle and their successors are claimed in one
                    // transaction: one commit per pass however many jobs it handles. A failed
                    // claim is undone alone; the settlements still commit before it is reported.
                    let claimed = if free > 0 || !done.is_empty() {
                        let claimed = store.write(|tx| -> Result<_, DaemonError> {
                            settle_all(tx, sh, config, &mut done)?;
                            if free == 0 {
                                return Ok(Ok(Vec::new()));
                            }
                            Ok(crate::store::savepoint(tx, || {
                                claim::claim(tx, sh.clock.as_ref(), free, &ctx)
                            })?)
                        })?;
                        for f in done {
                            f.cleanup();
                        }
                        claimed?
                    } else {
                        Vec::new()
                    };
                    // Every tick, not per sweep: a `--until-idle` daemon may stop on the tick a tree paused.
                    let notify = if !config.notify.command.trim().is_empty() {
                        store.write(|tx| human_notify::claim_pending(tx, sh.clock.as_ref()))?
                    } else {
                        Vec::new()
                    };
                    // Only another connection kills or cancels (the CLI, a control room):
                    // with nothing committed elsewhere since the last pass, the answer is
                    // the one that pass acted on; the sweep asks anyway.
                    let others_wrote = last_version != Some(version);
                    let force = if any_inflight && (others_wrote || sweep_due) {
                        engine::jobs_to_terminate(&store.conn())?
                    } else {
                        Vec::new()
                    };
                    let claimed = exec::planned(store, claimed, config);
                    let live = if until_idle && claimed.is_empty() && !any_inflight {
                        Some(
                            jobs::count_state(store.conn(), JobState::Queued)?
                                + jobs::count_daemon_running(store.conn())?,
                        )
                    } else {
                        None
                    };
                    Ok(TickReport {
                        claimed,
                        force_killed: force,
                        notify,
                        live,
                        data_version: version,
                    })
                })?;
        self.data_version = Some(report.data_version);
        Ok(report)
    }

    /// What a claim pass needs to know of this daemon and its jobs in flight; `settling`
    /// names the trees it must leave alone.
    fn claim_context(&self, settling: HashSet<String>) -> ClaimContext {
        let mut running_per_repo: HashMap<String, usize> = HashMap::new();
        for f in self.inflight.values() {
            if let Some(r) = &f.repo {
                *running_per_repo.entry(r.clone()).or_default() += 1;
            }
        }
        ClaimContext {
            config: self.shared.config(),
            git_checkouts: self.git_checkouts.clone(),
            held: self
                .inflight
                .values()
                .filter_map(|f| f.lock_key.clone())
                .collect(),
            running_per_repo,
            worktrees_dir: self.worktrees_dir.clone(),
            scratch_dir: self.shared.scratch_dir.clone(),
            only_root: self.only_root.clone(),
            daemon_id: Some(self.registration.id.clone()),
            labels: self.registration.labels.clone(),
            settling,
        }
    }

    /// Before the jobs that ended settle, claims for the slots they freed among the other
    /// trees, in a transaction of its own, and starts what it got: those slots refill
    /// while the settlements are written. The ended jobs' own trees wait for the pass that
    /// settles them.
    /// True when it started any.
    fn claim_ahead(&mut self) -> Result<bool, DaemonError> {
        let free = self.parallel.saturating_sub(self.inflight.len());
        if !self.claims_ahead || free == 0 || self.done.is_empty() {
            return Ok(false);
        }
        let ctx = self.claim_context(self.done.iter().map(|f| f.root_id().to_string()).collect());
        let claimed = self
            .shared
            .with_store_here(|store, sh| -> Result<_, DaemonError> {
                let claimed = store.write(|tx| claim::claim(tx, sh.clock.as_ref(), free, &ctx))?;
                Ok(exec::planned(store, claimed, &ctx.config))
            })?;
        let started = !claimed.is_empty();
        for (c, plan) in claimed {
            self.start(c, plan);
        }
        Ok(started)
    }

    /// Settles the jobs that ended since the last tick, with no claim (the daemon stops).
    async fn settle_done(&mut self) {
        let mut done = std::mem::take(&mut self.done);
        if done.is_empty() {
            return;
        }
        let res = self
            .shared
            .with_store(move |store, sh| {
                let config = sh.config();
                let res = store.write(|tx| settle_all(tx, sh, &config, &mut done));
                if res.is_ok() {
                    for f in done {
                        f.cleanup();
                    }
                }
                res
            })
            .await;
        if let Err(e) = res {
            tracing::error!("settling the last jobs failed (recovery settles them): {e}");
        }
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
        if let Some(job) = self.task_jobs.remove(&task) {
            if let Err(e) = &res {
                tracing::error!(job = %job, "job task ended abnormally: {e}");
            }
            self.inflight.remove(&job);
        }
        if let Ok((_, f)) = res {
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
    /// the daemon's own cost per job); a start skipped here shows on the next tick.
    fn write_status(&mut self, force: bool) {
        let now = self.shared.clock.now_ms();
        let every = if force { 50 } else { 250 };
        if now - self.last_status_ms < every {
            return;
        }
        self.last_status_ms = now;
        let file = StatusFile {
            pid: std::process::id(),
            started_ms: self.started_ms,
            parallel: self.parallel,
            last_tick_ms: now,
            running: self
                .inflight
                .iter()
                .map(|(id, f)| RunningJob {
                    id: id.clone(),
                    agent: f.agent.clone(),
                    started_ms: f.started_ms,
                })
                .collect(),
        };
        if let Err(e) = status::write(&self.status_path, &file) {
            tracing::warn!("writing the daemon status: {e}");
        }
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

pub(super) async fn run(d: Daemon, lock: DaemonLock) -> Result<DaemonExit, DaemonError> {
    let parallel = d.effective_parallel()?;
    let root = d.home.root().to_path_buf();
    let (scratch_dir, prompt_dir, worktrees_dir) = (
        root.join("scratch"),
        root.join("tmp"),
        root.join("worktrees"),
    );
    for dir in [
        &scratch_dir,
        &prompt_dir,
        &worktrees_dir,
        &root.join("runs"),
    ] {
        private_dir(dir)?;
    }
    // Prompt files and run folders live only while their run does (spares while their
    // daemon does); this daemon holds the home's lock, so any left in the folder belong
    // to a daemon that died. So do spare records; a record itself waits for recovery.
    if let Ok(entries) = std::fs::read_dir(&prompt_dir) {
        for entry in entries.flatten() {
            let _ = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(entry.path()),
                _ => std::fs::remove_file(entry.path()),
            };
        }
    }
    crate::runtime::spare::remove_all(&root.join("runs"));
    let location = Location::of_home(&d.home).map_err(StoreError::from)?;
    let store = Store::open_location(&location)?;
    store.tune_for_batches()?;
    let git_checkouts = worktree::git_checkouts(&d.config);
    let shared = Arc::new(Shared {
        home: d.home.clone(),
        store: std::sync::Mutex::new(store),
        config: std::sync::RwLock::new(Arc::new(d.config.clone())),
        hooks: d.hooks.clone(),
        clock: d.clock.clone(),
        scratch_dir,
        prompt_dir,
        relay: start_relay(&d),
    });
    let registration = Arc::new(Registration {
        id: format!("d-{}", crate::ids::random_hex(6)),
        host: registry::hostname(),
        labels: d
            .labels
            .clone()
            .unwrap_or_else(|| d.config.daemon.labels.clone()),
        lease_ms: d.config.daemon.lease.0.max(1),
    });
    let reg = registration.clone();
    let recovered = shared
        .with_store(move |store, sh| {
            // On the home's own SQLite file this daemon holds the only lock: every other
            // registered daemon is dead and every running job an orphan. A shared
            // PostgreSQL store has live daemons elsewhere, whose jobs (and this host's
            // from before a crash) are recovered only once their lease runs out.
            let now = sh.clock.now_ms();
            let exclusive = store.backend() == Backend::Sqlite;
            registry::register(store, &reg, parallel, now, exclusive)?;
            if !exclusive {
                recovery::sweep_records(store, sh.home.root());
                return registry::beat(store, sh, &reg, now);
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
    if d.signals {
        shutdown::on_signals(d.shutdown.clone())?;
    }
    let wake = Arc::new(Notify::new());
    let mut store_watch = StoreWatch::for_location(&location, &wake);
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
    let stop = d.shutdown.clone();
    let shared_now = shared.clock.now_ms();
    let mut pool = Pool {
        started_ms: shared.clock.now_ms(),
        shared,
        parallel,
        parallel_flag: d.parallel,
        reload,
        until_idle: d.until_idle,
        only_root: d.only_root.clone(),
        git_checkouts: Arc::new(git_checkouts),
        worktrees_dir,
        status_path: status::path(&d.home),
        last_status_ms: 0,
        last_sweep_ms: 0,
        tick_ms: d.config.daemon.tick.0.max(1),
        inflight: HashMap::new(),
        task_jobs: HashMap::new(),
        tasks: JoinSet::new(),
        done: Vec::new(),
        data_version: None,
        notifying: JoinSet::new(),
        last_beat_ms: shared_now,
        registration,
        claims_ahead: matches!(location, Location::Sqlite(_)),
    };
    tracing::info!(parallel, lock = %lock.path().display(), "daemon: started");
    let mut store_woke = false;
    let exit = loop {
        while let Some(res) = pool.tasks.try_join_next_with_id() {
            pool.finished(res);
        }
        while pool.notifying.try_join_next().is_some() {}
        if stop.is_requested() {
            break None;
        }
        // A detached daemon outlives its control room; once its home is deleted (a
        // throwaway test or demo home) there is nothing left to run for.
        if !root.exists() {
            tracing::warn!(home = %root.display(), "daemon: the home was removed; stopping");
            break None;
        }
        let reloaded = pool.maybe_reload();
        let tick = pool.tick_duration();
        // A store change cannot start anything while every slot is busy (our own writes
        // wake us too); kills and the sweep still run on the tick and on each finished job.
        let skip = store_woke && pool.inflight.len() >= pool.parallel && pool.done.is_empty();
        let store_woke_before = store_woke && !reloaded;
        store_woke = false;
        if skip {
            tokio::select! {
                Some(res) = pool.tasks.join_next_with_id(), if !pool.tasks.is_empty() => pool.finished(res),
                _ = tokio::time::sleep(tick) => {},
                _ = stop.requested() => {},
            }
            continue;
        }
        let pass = pool
            .claim_ahead()
            .and_then(|ahead| Ok((ahead, pool.tick(store_woke_before)?)));
        let (started_ahead, report) = match pass {
            Err(e) if e.is_connection_lost() => {
                let (shared, reg) = (pool.shared.clone(), pool.registration.clone());
                let ids: Vec<String> = pool.inflight.keys().cloned().collect();
                let fence = || ids.iter().for_each(|id| pool.kill(id, registry::FENCED));
                tokio::select! {
                    r = registry::reconnect(&shared, &reg, fence) => r?,
                    _ = stop.requested() => {},
                }
                continue;
            }
            other => other?,
        };
        for id in &report.force_killed {
            pool.kill(
                id,
                "terminated: the job was cancelled or its root killed with --force",
            );
        }
        pool.notify(report.notify);
        let started = !report.claimed.is_empty();
        for (c, plan) in report.claimed {
            pool.start(c, plan);
        }
        pool.write_status(started_ahead || started);
        if report.live == Some(0) {
            break Some(DaemonExit::Idle);
        }
        if started && pool.inflight.len() < pool.parallel {
            // Claim again at once: the pass may have stopped at its scan window.
            continue;
        }
        if let Some(w) = store_watch.as_mut() {
            match w.watch_while(pool.inflight.len() < pool.parallel) {
                Ok(true) => {
                    store_woke = true;
                    continue;
                }
                Ok(false) => {}
                Err(e) => tracing::warn!("daemon: watching the store: {e}"),
            }
        }
        tokio::select! {
            Some(res) = pool.tasks.join_next_with_id(), if !pool.tasks.is_empty() => pool.finished(res),
            _ = wake.notified() => store_woke = true,
            _ = async { store_watch.as_ref().expect("guarded").changed().await }, if store_watch.is_some() => store_woke = true,
            _ = tokio::time::sleep(tick) => {},
            _ = stop.requested() => {},
        }
    };
    let exit = match exit {
        Some(e) => e,
        None => {
            let grace_ms = pool.shared.config().daemon.shutdown_grace.0.max(0);
            let grace = Duration::from_millis(grace_ms as u64);
            let deadline = tokio::time::sleep(grace);
            tokio::pin!(deadline);
            while !pool.tasks.is_empty() {
                tokio::select! {
                    Some(res) = pool.tasks.join_next_with_id() => pool.finished(res),
                    _ = &mut deadline => break,
                }
            }
            let terminated = pool.inflight.len();
            let why = format!(
                "daemon shut down: terminated after the {} shutdown grace",
                crate::duration::format_ms(grace.as_millis() as i64)
            );
            let ids: Vec<String> = pool.inflight.keys().cloned().collect();
            for id in &ids {
                pool.kill(id, &why);
            }
            while let Some(res) = pool.tasks.join_next_with_id().await {
                pool.finished(res);
            }
            DaemonExit::Shutdown { terminated }
        }
    };
    pool.settle_done().await;
    // Each command is bounded by its own command_timeout.
    while pool.notifying.join_next().await.is_some() {}
    status::remove(&pool.status_path);
    crate::runtime::spare::remove_all(&pool.shared.prompt_dir);
    crate::runtime::spare::remove_all(&root.join("runs"));
    let reg = pool.registration.clone();
    pool.shared
        .with_store(move |store, sh| registry::deregister(store, &reg, sh.clock.now_ms()))
        .await?;
    tracing::info!(?exit, "daemon: stopped");
    drop(lock);
    Ok(exit)
}
