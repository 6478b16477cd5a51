//! This daemon's lease in the store's `daemons` table (`store::daemons`): it registers
//! when it starts, renews the lease by heartbeat three times per `[daemon].lease`, takes
//! over the running jobs of daemons whose lease ran out, and marks itself stopped on a
//! clean exit. A lost daemon of this host still alive (paused past its lease) keeps the
//! read-only jobs whose agents ended (`paused`): they are its to settle, and run again
//! nowhere; the rest are taken over.
//!
//! A daemon that finds its own lease taken over must not run its jobs on (another daemon
//! already settled them): it stops with `DaemonError::LeaseLost`, and its agents die with
//! it. On a SQLite store whose daemon lock this one holds, every other unstopped row
//! belongs to a daemon that died without deregistering: start-up marks them stopped at once
//! and the restart recovery settles their jobs. Owns those passes only; what a recovered job means
//! for its tree is the engine's (through `recovery`).

use crate::clock::Millis;
use crate::domain::Action;
use crate::store::daemons::{self, DaemonRow};
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use crate::store::{Store, jobs};

use super::paused;
use super::recovery::{self, Local, Unfinished};
use super::{DaemonError, Shared};
use crate::engine::lost::Loss;

/// This daemon's registration, fixed for its life.
#[derive(Debug, Clone)]
pub struct Registration {
    pub id: String,
    pub host: String,
    pub labels: Vec<String>,
    pub lease_ms: Millis,
}

impl Registration {
    /// How often the heartbeat is written: three beats per lease, so one late or lost beat
    /// never lets the lease run out.
    pub(crate) fn beat_every(&self) -> Millis {
        (self.lease_ms / 3).max(1)
    }
}

/// This host's name, as its `daemons` row shows it.
pub(crate) fn hostname() -> String {
    crate::pid::hostname()
}

/// Registers this daemon. `exclusive`: it holds the store's lock, so every other unstopped
/// daemon is dead and is marked stopped now (its jobs are the restart recovery's).
pub fn register(
    store: &mut Store,
    reg: &Registration,
    parallel: usize,
    now: Millis,
    exclusive: bool,
) -> Result<(), DaemonError> {
    store.write(|tx| -> Result<(), DaemonError> {
        if exclusive {
            for d in daemons::unstopped(tx, None)? {
                daemons::stop(tx, &d.id, now)?;
            }
        }
        daemons::register(
            tx,
            &DaemonRow {
                id: reg.id.clone(),
                host: reg.host.clone(),
                pid: std::process::id() as i64,
                parallel: parallel as i64,
                labels: reg.labels.clone(),
                started_ms: now,
                heartbeat_ms: now,
                stopped_ms: None,
            },
        )?;
        Ok(())
    })
}

/// One heartbeat: renews this daemon's lease, then recovers the running jobs of every
/// daemon whose lease ran out (each taken over by exactly one daemon) and of every daemon
/// that stopped over a lease ago with jobs still running. Returns the ids of the jobs it
/// recovered.
pub fn beat(
    store: &mut Store,
    sh: &Shared,
    reg: &Registration,
    now: Millis,
) -> Result<Vec<String>, DaemonError> {
    if !store.write(|tx| daemons::beat(tx, &reg.id, now))? {
        return Err(DaemonError::LeaseLost(reg.id.clone()));
    }
    let expired_before = now - reg.lease_ms;
    let mut recovered = Vec::new();
    for dead in daemons::expired(store.conn(), expired_before)? {
        let orphans = store.write(|tx| -> Result<Vec<jobs::Job>, DaemonError> {
            if !daemons::take_over(tx, &dead.id, expired_before, now)? {
                return Ok(Vec::new());
            }
            let mut orphans = Vec::new();
            for id in daemons::running_jobs(tx, &dead.id)? {
                orphans.push(jobs::require(tx, &id)?);
            }
            Ok(orphans)
        })?;
        if orphans.is_empty() {
            continue;
        }
        tracing::warn!(
            daemon = %dead.id,
            host = %dead.host,
            jobs = orphans.len(),
            "daemon: a daemon's lease ran out; recovering its running jobs"
        );
        let loss = match gone_here(&dead, reg) {
            true => Loss::HostLost,
            false => Loss::LeaseLost,
        };
        let (local, home, orphans) = to_recover(sh, reg, Some(&dead), orphans);
        recovered.extend(recover(store, sh, &home, orphans, local, loss)?);
    }
    let mut stopped: Vec<(String, Vec<jobs::Job>)> = Vec::new();
    for (job, daemon) in daemons::orphaned_running(store.conn(), expired_before)? {
        let job = jobs::require(store.conn(), &job)?;
        match stopped.iter_mut().find(|(d, _)| *d == daemon) {
            Some((_, list)) => list.push(job),
            None => stopped.push((daemon, vec![job])),
        }
    }
    for (daemon, orphans) in stopped {
        let row = daemons::get(store.conn(), &daemon)?;
        let (local, home, orphans) = to_recover(sh, reg, row.as_ref(), orphans);
        if orphans.is_empty() {
            continue;
        }
        tracing::warn!(daemon = %daemon, jobs = orphans.len(), "daemon: a stopped daemon left running jobs; recovering them");
        recovered.extend(recover(
            store,
            sh,
            &home,
            orphans,
            local,
            Loss::DaemonStopped,
        )?);
    }
    Ok(recovered)
}

/// Whether `dead` ran on this host and its process is gone: only then are its leftover
/// processes ours to kill. A daemon whose process is still alive was only paused (or is
/// hung): its agents are left to finish, as it may still settle them.
fn gone_here(dead: &DaemonRow, reg: &Registration) -> bool {
    dead.host == reg.host && !crate::pid::is_alive(dead.pid as i32)
}

/// Which of a lost daemon's `orphans` to recover now, whether its leftovers are ours
/// (`Local`), and the home its stdout records are in. A daemon of this host that is still
/// alive (`paused`) keeps the `ask` and `review` jobs whose agents ended: it settles them
/// when it wakes, or its record does once it dies; running them again would do finished
/// work twice. (An `implement` is left `interrupted`, which nothing claims, so the waking
/// daemon settles it all the same.)
fn to_recover(
    sh: &Shared,
    reg: &Registration,
    dead: Option<&DaemonRow>,
    orphans: Vec<jobs::Job>,
) -> (Local, PathBuf, Vec<jobs::Job>) {
    let own = sh.home.root().to_path_buf();
    let Some(dead) = dead.filter(|d| d.host == reg.host) else {
        return (Local::No, own, orphans);
    };
    let pid = dead.pid as i32;
    let mut homes = sh.lost_homes.lock().unwrap_or_else(PoisonError::into_inner);
    if !crate::pid::is_alive(pid) {
        let home = homes.get(&dead.id).cloned().flatten().unwrap_or(own);
        return (Local::Yes, home, orphans);
    }
    if !paused::started_by(pid, dead.started_ms) {
        return (Local::No, own, orphans);
    }
    let first = !homes.contains_key(&dead.id);
    if first {
        homes.insert(dead.id.clone(), paused::home_of(pid));
    }
    let ids: Vec<&str> = orphans.iter().map(|j| j.id.as_str()).collect();
    let running = paused::still_running(&ids);
    let (left, now): (Vec<_>, Vec<_>) = orphans
        .into_iter()
        .partition(|j| j.action != Action::Implement && !running.contains(&j.id));
    if first && !left.is_empty() {
        tracing::warn!(
            daemon = %dead.id,
            jobs = left.len(),
            "daemon: a lost daemon of this host is still alive and these jobs' agents ended; \
             leaving them to it"
        );
    }
    (Local::No, own, now)
}

/// Recovers a lost daemon's `orphans`: settled from a finished agent's record (in `home`),
/// else released for `loss` (see `engine::lost`).
fn recover(
    store: &mut Store,
    sh: &Shared,
    home: &Path,
    orphans: Vec<jobs::Job>,
    local: Local,
    loss: Loss,
) -> Result<Vec<String>, DaemonError> {
    let config = sh.config();
    if orphans.is_empty() {
        return Ok(Vec::new());
    }
    Ok(recovery::recover_jobs(
        store,
        home,
        sh.env(&config),
        &config,
        orphans,
        local,
        Unfinished::Release(loss),
    )?)
}

/// Why a daemon stopped its own jobs while it could not reach the store.
pub(crate) const FENCED: &str = "terminated: the daemon lost its store for longer than its lease allows; another daemon takes the job over";

/// Waits out a lost connection to a PostgreSQL store: has the daemon's store reopen it
/// (`Store::heal`) with a growing pause (250 ms up to 30 s), saying so once. Should the
/// outage last two thirds of the lease, `fence` stops every job this daemon runs first:
/// another daemon may take them over once the lease lapses, and none may run in two places
/// at once. Returns early, still disconnected, once the daemon's home is gone: a detached
/// daemon of a removed home (a throwaway demo or test) has nothing left to wait for.
pub(crate) async fn reconnect(
    sh: &Arc<Shared>,
    reg: &Registration,
    mut fence: impl FnMut(),
) -> Result<(), DaemonError> {
    tracing::warn!("daemon: lost the store; reconnecting");
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(250);
    let mut fenced = false;
    loop {
        tokio::time::sleep(pause).await;
        if !sh.home.root().exists() {
            return Ok(());
        }
        match sh.with_store(|store, _| store.heal()).await {
            Ok(()) => {
                tracing::warn!(
                    after_ms = started.elapsed().as_millis() as u64,
                    "daemon: store reconnected"
                );
                return Ok(());
            }
            Err(e) if e.is_connection_lost() => {}
            Err(e) => return Err(e.into()),
        }
        if !fenced && started.elapsed().as_millis() as i64 >= reg.lease_ms * 2 / 3 {
            tracing::warn!(
                "daemon: still no store after two thirds of the lease; stopping its jobs"
            );
            fence();
            fenced = true;
        }
        pause = (pause * 2).min(std::time::Duration::from_secs(30));
    }
}

/// Marks this daemon stopped on a clean exit, so nobody waits out its lease.
pub(crate) fn deregister(
    store: &mut Store,
    reg: &Registration,
    now: Millis,
) -> Result<(), DaemonError> {
    store.write(|tx| daemons::stop(tx, &reg.id, now))?;
    Ok(())
}
