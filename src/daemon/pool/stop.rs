//! The pool's shut-down once its loop ends: the shutdown grace for the jobs in flight, the
//! last settlements, the `[notify] command`s still running, and the home and the store left
//! as a stopped daemon leaves them (no status file, no spares, its `daemons` row stopped).
//!
//! Starts nothing; a job it cannot settle is left to the next daemon's recovery.

use std::time::Duration;

use super::super::lease;
use super::super::{DaemonError, DaemonExit, status};
use super::Pool;

impl Pool {
    /// Waits out `[daemon].shutdown_grace` for the jobs in flight (none with `immediate`,
    /// `daemon stop --kill`), then terminates the rest and waits for them.
    pub(super) async fn drain(&mut self, immediate: bool) -> DaemonExit {
        let grace_ms = match immediate {
            true => 0,
            false => self.shared.config().daemon.shutdown_grace.0.max(0),
        };
        let grace = Duration::from_millis(grace_ms as u64);
        let why = match immediate {
            true => "daemon shut down: terminated by `gitmoot daemon stop --kill`".to_string(),
            false => format!(
                "daemon shut down: terminated after the {} shutdown grace",
                crate::duration::format_ms(grace.as_millis() as i64)
            ),
        };
        let terminated = self.finish_or_terminate(grace, &why).await;
        DaemonExit::Shutdown { terminated }
    }

    /// Lets the jobs in flight finish for up to `grace`, then terminates the rest for `why`
    /// and waits for every one; returns how many it terminated.
    pub(super) async fn finish_or_terminate(&mut self, grace: Duration, why: &str) -> usize {
        let deadline = tokio::time::sleep(grace);
        tokio::pin!(deadline);
        while !self.tasks.is_empty() {
            tokio::select! {
                Some(res) = self.tasks.join_next_with_id() => self.finished(res),
                _ = &mut deadline => break,
            }
        }
        let terminated = self.inflight.len();
        let ids: Vec<String> = self.inflight.keys().cloned().collect();
        for id in &ids {
            self.kill(id, why);
        }
        while let Some(res) = self.tasks.join_next_with_id().await {
            self.finished(res);
        }
        terminated
    }

    /// Settles the jobs that ended since the last tick, with no claim (the daemon stops),
    /// waiting out a lost store for up to a lease. True when every one settled; a daemon
    /// that could not settle them stays registered, so its lease runs out and another
    /// daemon recovers them.
    async fn settle_last(&mut self) -> bool {
        let started = std::time::Instant::now();
        let lease = Duration::from_millis(self.registration.lease_ms.max(1) as u64);
        loop {
            match self.settle_done().await {
                Ok(true) => return true,
                Ok(false) if started.elapsed() < lease => {
                    let (shared, reg) = (self.shared.clone(), self.registration.clone());
                    tracing::warn!(
                        jobs = self.done.len(),
                        "daemon: stopping with finished jobs it could not settle; waiting for the store"
                    );
                    tokio::select! {
                        r = lease::reconnect(&shared, &reg, || {}) => if r.is_err() { return false },
                        _ = tokio::time::sleep(lease.saturating_sub(started.elapsed())) => {},
                    }
                }
                Ok(false) => {
                    tracing::error!(
                        jobs = self.done.len(),
                        "daemon: the store stayed unreachable; the finished jobs are left to the next daemon's recovery"
                    );
                    return false;
                }
                Err(e) => {
                    tracing::error!("settling the last jobs failed (recovery settles them): {e}");
                    return false;
                }
            }
        }
    }

    /// Settles the last jobs, waits for the notify commands, removes the status file and
    /// the spares, and marks this daemon stopped. Without a `store_usable` (its file went)
    /// nothing is written: the ended jobs keep their stdout records, and how many there
    /// are is returned.
    pub(super) async fn close(mut self, store_usable: bool) -> Result<usize, DaemonError> {
        let (settled, left) = match store_usable {
            true => (self.settle_last().await, 0),
            false => (false, std::mem::take(&mut self.done).len()),
        };
        // Each command is bounded by its own command_timeout.
        while self.notifying.join_next().await.is_some() {}
        status::remove(&self.status_path);
        crate::runtime::spare::remove_all(&self.shared.prompt_dir);
        let _ = std::fs::remove_dir_all(&self.shared.prompt_dir);
        crate::runtime::spare::remove_all(&self.shared.home.root().join("runs"));
        if !settled {
            return Ok(left);
        }
        let reg = self.registration.clone();
        self.shared
            .with_store(move |store, sh| lease::deregister(store, &reg, sh.clock.now_ms()))
            .await?;
        Ok(left)
    }
}
