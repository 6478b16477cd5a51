//! One pass of the pool over the store: the heartbeat and the engine's sweep (with the
//! briefs of ended runs) when due, the
//! ended jobs settled and their successors claimed in one transaction, the gates to notify,
//! the jobs to terminate; and the claim-ahead pass that refills freed slots before it.
//!
//! Reads and writes the store for the pool; starting, killing and waiting on jobs stays in
//! the pool's loop.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::super::claim::{self, ClaimContext};
use super::super::exec::{self, Finished, Planned};
use super::super::lease::{self, Registration};
use super::super::{DaemonError, Shared, human_notify};
use super::Pool;
use crate::clock::Millis;
use crate::config::Config;
use crate::domain::JobState;
use crate::engine;
use crate::store::daemons::{self, Pinned};
use crate::store::{Scope, Store, Tx, jobs};

/// The stall watch runs at most this often, whatever the tick.
const STALL_WATCH_EVERY_MS: Millis = 1_000;

/// What one tick learned from the store.
pub(super) struct TickReport {
    pub(super) claimed: Planned,
    pub(super) force_killed: Vec<String>,
    /// Human gates to run `[notify] command` for.
    pub(super) notify: Vec<human_notify::Pending>,
    /// Queued + running jobs in the store, when `until_idle` asked for it.
    pub(super) live: Option<u64>,
    /// Queued jobs pinned to a label no live daemon carries, when `live` was counted.
    pub(super) unserved: Vec<Pinned>,
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
            unserved: Vec::new(),
            data_version,
        }
    }
}

/// What a pass takes from the pool before it holds the store.
struct Pass {
    last_version: Option<i64>,
    free: usize,
    ctx: ClaimContext,
    any_inflight: bool,
    until_idle: bool,
    woke_only: bool,
    now: Millis,
    sweep_due: bool,
    stall_watch_due: bool,
    beat_due: bool,
    registration: Arc<Registration>,
}

/// Settles each finished job in `tx`, each under its own savepoint: one whose settlement
/// fails is logged and left `running` (recovery fails it) without undoing the others. A
/// store that cannot take the write at all (its disk full, as PostgreSQL says at the
/// statement; its connection gone) fails the whole pass instead, so the pool keeps every
/// finished job and settles it once the store is back (see `outage`).
pub(super) fn settle_all(
    tx: &Tx<'_>,
    sh: &Shared,
    config: &Config,
    done: &mut [Finished],
) -> Result<(), DaemonError> {
    let env = sh.env(config);
    for f in done.iter_mut() {
        let settled = crate::store::savepoint(tx, || f.settle(tx, env))?;
        if settled.is_err() && tx.strayed() {
            // Not this job's failure: the pass runs again under the writers' lock.
            return Ok(());
        }
        if let Err(e) = settled {
            let e = DaemonError::from(e);
            if e.is_connection_lost() || super::super::outage::is_disk_full(&e) {
                return Err(e);
            }
            tracing::error!(job = %f.job_id(), "settling failed: {e}");
        }
    }
    Ok(())
}

/// The engine's sweep (escalation TTLs, stopped trees; the wall-clock bound is checked at
/// fan-out, not here) and the auto-respond sweep.
fn sweep(store: &mut Store, sh: &Shared, config: &Config) -> Result<(), DaemonError> {
    store.write(|tx| engine::sweep(tx, sh.env(config)))?;
    let artifacts = sh.home.artifacts_dir();
    let briefs = super::super::brief::listed(&artifacts);
    if !briefs.is_empty() {
        let ended = store.read(|tx| ended_jobs(tx, &briefs))?;
        super::super::brief::remove(&artifacts, &ended);
    }
    if config.chat.auto_respond {
        let asked = store.write(|tx| crate::chat::autorespond_sweep(tx, sh.clock.as_ref(), config));
        if let Err(e) = asked {
            tracing::warn!("auto-respond sweep: {e}");
        }
    }
    Ok(())
}

/// Those of `ids` whose run has ended (or that the store no longer holds).
fn ended_jobs(tx: &Tx<'_>, ids: &[String]) -> Result<Vec<String>, DaemonError> {
    let mut ended = Vec::new();
    for id in ids {
        let done = match jobs::get(tx, id)? {
            Some(j) => {
                crate::store::runs::get(tx, &j.root_id)?.is_none_or(|r| r.state.is_terminal())
            }
            None => true,
        };
        if done {
            ended.push(id.clone());
        }
    }
    Ok(ended)
}

/// The jobs that ended settle and their successors are claimed in one transaction: one
/// commit per pass however many jobs it handles. A failed claim is undone alone; the
/// settlements still commit before it is reported. `done` keeps the finished jobs until
/// that commit: when the store is lost on the way, the pool settles them again once it is
/// back (a finished agent's work is never dropped with a transaction).
fn settle_and_claim(
    store: &mut Store,
    sh: &Shared,
    free: usize,
    done: &mut Vec<Finished>,
    ctx: &ClaimContext,
) -> Result<Planned, DaemonError> {
    if free == 0 && done.is_empty() {
        return Ok(Vec::new());
    }
    // Scoped to the settled trees (the claim adds the ones it takes): daemons settling and
    // claiming other trees commit beside this pass.
    let trees: Vec<String> = done.iter().map(|f| f.root_id().to_string()).collect();
    let claimed = store.write_scoped(Scope::Trees(&trees), |tx| -> Result<_, DaemonError> {
        settle_all(tx, sh, &ctx.config, done)?;
        if free == 0 {
            return Ok(Ok(Vec::new()));
        }
        fenced_claim(tx, sh, free, ctx)
    })?;
    for f in done.drain(..) {
        f.cleanup();
    }
    Ok(claimed?)
}

/// Claims up to `free` jobs in `tx` — only while this daemon's lease is its own, renewed in
/// that same transaction: a daemon paused between its heartbeat and its claim, whose jobs
/// another daemon took over meanwhile, must not claim them again when it wakes.
fn fenced_claim(
    tx: &Tx<'_>,
    sh: &Shared,
    free: usize,
    ctx: &ClaimContext,
) -> Result<Result<Planned, engine::EngineError>, DaemonError> {
    let now = sh.clock.now_ms();
    if let Some(id) = &ctx.daemon_id
        && !crate::store::daemons::beat(tx, id, now)?
    {
        return Err(DaemonError::LeaseLost(id.clone()));
    }
    let claimed = crate::store::savepoint(tx, || claim::claim(tx, sh.clock.as_ref(), free, ctx))?;
    Ok(match claimed {
        Ok(claimed) => Ok(exec::planned(tx, claimed, &ctx.config)?),
        Err(e) => Err(e),
    })
}

/// The queued jobs a daemon could start, and the pinned ones nobody can: those a daily cap
/// holds wait for a day or an operator, and those pinned to a label no live daemon carries
/// wait for a daemon that may never come, not for this one, so a `--until-idle` one stops
/// beside them (and says which it left).
fn startable(
    store: &Store,
    config: &Config,
    now: Millis,
    me: &Registration,
) -> Result<(u64, Vec<Pinned>), DaemonError> {
    let mut caps = engine::caps::Caps::new(config, now);
    let queued = if caps.any() {
        caps.queued_unheld(&store.conn())?
    } else {
        jobs::count_state(store.conn(), JobState::Queued)?
    };
    // This daemon's own labels whatever its last beat says.
    let carried: HashSet<String> = daemons::unstopped(store.conn(), Some(now - me.lease_ms))?
        .into_iter()
        .flat_map(|d| d.labels)
        .chain(me.labels.iter().cloned())
        .collect();
    let mut unserved = Vec::new();
    for p in daemons::queued_pinned(store.conn())? {
        // A job a cap holds is already left out of `queued`.
        let held = caps.any() && caps.hold(&store.conn(), &p.agent)?.is_some();
        if !carried.contains(&p.label) && !held {
            unserved.push(p);
        }
    }
    Ok((queued.saturating_sub(unserved.len() as u64), unserved))
}

impl Pass {
    fn run(
        self,
        store: &mut Store,
        sh: &Shared,
        done: &mut Vec<Finished>,
        stalls: &mut engine::stall::Memory,
    ) -> Result<TickReport, DaemonError> {
        let version = store.data_version()?;
        let idle = self.woke_only && !self.sweep_due && !self.beat_due && done.is_empty();
        if idle && self.last_version == Some(version) {
            return Ok(TickReport::empty(version));
        }
        if self.beat_due {
            lease::beat(store, sh, &self.registration, self.now)?;
        }
        let config = &self.ctx.config;
        let mut raised = Vec::new();
        if self.sweep_due {
            sweep(store, sh, config)?;
        }
        if self.stall_watch_due {
            stalls.hear(sh.heard.take());
            raised = store.write(|tx| engine::stall::watch(tx, sh.env(config), stalls))?;
        }
        let claimed = settle_and_claim(store, sh, self.free, done, &self.ctx)?;
        // Every tick, not per sweep: a `--until-idle` daemon may stop on the tick a tree paused.
        let notify = if !config.notify.command.trim().is_empty() {
            let mut gates = store.write(|tx| human_notify::claim_pending(tx, sh.clock.as_ref()))?;
            gates.extend(raised.iter().map(human_notify::stalled));
            gates
        } else {
            Vec::new()
        };
        // Only another connection kills or cancels (the CLI, a control room):
        // with nothing committed elsewhere since the last pass, the answer is
        // the one that pass acted on; the sweep asks anyway.
        let others_wrote = self.last_version != Some(version);
        let force = if self.any_inflight && (others_wrote || self.sweep_due) {
            engine::jobs_to_terminate(&store.conn())?
        } else {
            Vec::new()
        };
        let (live, unserved) = if self.until_idle && claimed.is_empty() && !self.any_inflight {
            let (queued, unserved) = startable(store, config, self.now, &self.registration)?;
            let running = jobs::count_daemon_running(store.conn())?;
            (Some(queued + running), unserved)
        } else {
            (None, Vec::new())
        };
        Ok(TickReport {
            claimed,
            force_killed: force,
            notify,
            live,
            unserved,
            data_version: version,
        })
    }
}

impl Pool {
    /// One pass over the store. `woke_only`: nothing but the store watcher asked for it,
    /// so when no other connection committed since the last pass (our own commits wake the
    /// watcher too) and no sweep is due, there is nothing to do.
    pub(super) fn tick(&mut self, woke_only: bool) -> Result<TickReport, DaemonError> {
        let now = self.shared.clock.now_ms();
        // The engine's sweep (escalation TTLs, stopped trees) scans every live run: once
        // per `[daemon].tick`, not on each of the many wake-ups a busy store causes.
        let sweep_due = now - self.last_sweep_ms >= self.tick_ms;
        if sweep_due {
            self.last_sweep_ms = now;
        }
        // A stall is a matter of seconds to minutes; with a fast tick, the watch (two reads
        // per running job) would otherwise be most of what a streaming fleet's tick costs.
        let stall_watch_due =
            sweep_due && now - self.last_stall_watch_ms >= self.tick_ms.max(STALL_WATCH_EVERY_MS);
        if stall_watch_due {
            self.last_stall_watch_ms = now;
        }
        let beat_due = now - self.last_beat_ms >= self.registration.beat_every();
        if beat_due {
            self.last_beat_ms = now;
        }
        let pass = Pass {
            last_version: self.data_version,
            free: self.parallel.saturating_sub(self.inflight.len()),
            ctx: self.claim_context(HashSet::new()),
            any_inflight: !self.inflight.is_empty(),
            until_idle: self.until_idle,
            woke_only,
            now,
            sweep_due,
            stall_watch_due,
            beat_due,
            registration: self.registration.clone(),
        };
        let (done, stalls) = (&mut self.done, &mut self.stalls);
        let report = self
            .shared
            .with_store_here(|store, sh| pass.run(store, sh, done, stalls))?;
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
    pub(super) fn claim_ahead(&mut self) -> Result<bool, DaemonError> {
        let free = self.parallel.saturating_sub(self.inflight.len());
        if !self.claims_ahead || free == 0 || self.done.is_empty() {
            return Ok(false);
        }
        let ctx = self.claim_context(self.done.iter().map(|f| f.root_id().to_string()).collect());
        let claimed = self
            .shared
            .with_store_here(|store, sh| -> Result<_, DaemonError> {
                let claim = |tx: &Tx<'_>| fenced_claim(tx, sh, free, &ctx);
                Ok(store.write_scoped(Scope::Trees(&[]), claim)??)
            })?;
        let started = !claimed.is_empty();
        for (c, plan) in claimed {
            self.start(c, plan);
        }
        Ok(started)
    }
}
