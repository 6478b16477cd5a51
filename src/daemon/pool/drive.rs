//! The pool's loop: reap ended jobs, pass over the store, act on what it found, then wait
//! for a finished job, a store change, the tick or a stop — until idle or told to stop.
//!
//! Decides only when to pass and when to wait; what a pass does is `tick.rs`'s, and the
//! shutdown that follows the loop is `stop.rs`'s.

use super::super::{DaemonError, DaemonExit};
use super::super::{lease, outage};
use super::tick::TickReport;
use super::{Pool, Wakers};

/// What the loop does after a pass.
enum Next {
    /// Nothing is left to run: stop as idle.
    Idle,
    /// Pass again at once.
    Again,
    /// Wait for something to happen.
    Wait,
}

impl Pool {
    /// Runs passes until the daemon is idle (`Some`) or told to stop (`None`).
    pub(super) async fn drive(
        &mut self,
        w: &mut Wakers,
    ) -> Result<Option<DaemonExit>, DaemonError> {
        let root = self.shared.home.root().to_path_buf();
        let mut store_woke = false;
        loop {
            while let Some(res) = self.tasks.try_join_next_with_id() {
                self.finished(res);
            }
            while self.notifying.try_join_next().is_some() {}
            if w.stop.is_requested() {
                return Ok(None);
            }
            // `daemon stop --wait`: the daemon ends the way `--until-idle` does.
            self.until_idle |= w.stop.is_finishing();
            // A detached daemon outlives its control room; once its home (or its store's
            // file) is gone there is nothing left to run for, and writing on would lose it.
            if let Some(gone) = outage::gone(&root, self.store_file.as_ref()) {
                tracing::error!(?gone, "daemon: stopping: its home or store went away");
                self.gone = Some(gone);
                return Ok(None);
            }
            let reloaded = self.maybe_reload();
            let tick = self.tick_duration();
            // A store change cannot start anything while every slot is busy (our own writes
            // wake us too); kills and the sweep still run on the tick and on each finished job.
            let skip = store_woke && self.inflight.len() >= self.parallel && self.done.is_empty();
            let store_woke_before = store_woke && !reloaded;
            store_woke = false;
            if skip {
                tokio::select! {
                    Some(res) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => self.finished(res),
                    _ = tokio::time::sleep(tick) => {},
                    _ = w.stop.requested() => {},
                }
                continue;
            }
            let pass = self
                .claim_ahead()
                .and_then(|ahead| Ok((ahead, self.tick(store_woke_before)?)));
            let (started_ahead, report) = match pass {
                Err(e) if e.is_connection_lost() => {
                    self.reconnect(w).await?;
                    continue;
                }
                Err(e) if outage::is_disk_full(&e) => {
                    self.wait_for_space(w, &e).await;
                    continue;
                }
                Err(e @ DaemonError::LeaseLost(_)) => {
                    self.after_lease_lost().await;
                    return Err(e);
                }
                other => other?,
            };
            self.disk_full.passed();
            match self.act(started_ahead, report) {
                Next::Idle => return Ok(Some(DaemonExit::Idle)),
                Next::Again => continue,
                Next::Wait => {}
            }
            if let Some(watch) = w.store_watch.as_mut() {
                match watch.watch_while(self.inflight.len() < self.parallel) {
                    Ok(true) => {
                        store_woke = true;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => tracing::warn!("daemon: watching the store: {e}"),
                }
            }
            tokio::select! {
                Some(res) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => self.finished(res),
                _ = w.wake.notified() => store_woke = true,
                _ = async { w.store_watch.as_ref().expect("guarded").changed().await }, if w.store_watch.is_some() => store_woke = true,
                _ = tokio::time::sleep(tick) => {},
                _ = w.stop.requested() => {},
            }
        }
    }

    /// Waits out a lost store connection, fencing this daemon's jobs before its lease can
    /// lapse (see `lease::reconnect`), or until told to stop.
    async fn reconnect(&mut self, w: &Wakers) -> Result<(), DaemonError> {
        let (shared, reg) = (self.shared.clone(), self.registration.clone());
        let ids: Vec<String> = self.inflight.keys().cloned().collect();
        let fence = || ids.iter().for_each(|id| self.kill(id, lease::FENCED));
        tokio::select! {
            r = lease::reconnect(&shared, &reg, fence) => r?,
            _ = w.stop.requested() => return Ok(()),
        }
        // The lease may have run out meanwhile (a long outage, or this daemon was paused):
        // the next pass renews it before it claims anything, or learns it was lost.
        self.last_beat_ms = 0;
        match self.reconcile().await {
            Err(e) if e.is_connection_lost() => Ok(()),
            other => other,
        }
    }

    /// Waits before the next try at a store whose disk is full, keeping every job: the
    /// running ones run on, the ended ones wait in `done` to be settled (see `outage`).
    async fn wait_for_space(&mut self, w: &Wakers, e: &super::super::DaemonError) {
        let pause = self.disk_full.failed(e, self.inflight.len());
        // The next pass beats, whatever else it has to do: only a committed write says the
        // space is back (a pass with nothing to write goes through on a full disk too).
        self.last_beat_ms = 0;
        tokio::select! {
            Some(res) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => self.finished(res),
            _ = tokio::time::sleep(pause) => {},
            _ = w.stop.requested() => {},
        }
    }

    /// Kills what the pass found cancelled, notifies its gates, starts what it claimed.
    fn act(&mut self, started_ahead: bool, report: TickReport) -> Next {
        for id in &report.force_killed {
            self.kill(
                id,
                "terminated: the job was cancelled or its root killed with --force",
            );
        }
        self.notify(report.notify);
        let started = !report.claimed.is_empty();
        for (c, plan) in report.claimed {
            self.start(c, plan);
        }
        self.write_status(started_ahead || started);
        if report.live == Some(0) {
            for p in &report.unserved {
                super::super::notice(format_args!(
                    "daemon: left job {} queued: it is pinned to label {} (job run --on), which no live daemon carries; a daemon started with --labels {} runs it",
                    p.id, p.label, p.label
                ));
            }
            return Next::Idle;
        }
        if started && self.inflight.len() < self.parallel {
            // Claim again at once: the pass may have stopped at its scan window.
            return Next::Again;
        }
        Next::Wait
    }
}
