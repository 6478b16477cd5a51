//! The pool's shut-down once its loop ends: the shutdown grace for the jobs in flight, the
//! last settlements, the `[notify] command`s still running, and the home and the store left
//! as a stopped daemon leaves them (no status file, no spares, its `daemons` row stopped).
//!
//! Starts nothing; a job it cannot settle is left to the next daemon's recovery.

use std::time::Duration;

use super::super::lease;
use super::super::{DaemonError, DaemonExit, status};
use super::Pool;
use super::tick::settle_all;

impl Pool {
    /// Waits out `[daemon].shutdown_grace` for the jobs in flight (none with `immediate`,
    /// `daemon stop --kill`), then terminates the rest and waits for them.
    pub(super) async fn drain(&mut self, immediate: bool) -> DaemonExit {
        let grace_ms = match immediate {
            true => 0,
            false => self.shared.config().daemon.shutdown_grace.0.max(0),
        };
        let grace = Duration::from_millis(grace_ms as u64);
        let deadline = tokio::time::sleep(grace);
        tokio::pin!(deadline);
        while !self.tasks.is_empty() {
            tokio::select! {
                Some(res) = self.tasks.join_next_with_id() => self.finished(res),
                _ = &mut deadline => break,
            }
        }
        let terminated = self.inflight.len();
        let why = match immediate {
            true => "daemon shut down: terminated by `gitmoot daemon stop --kill`".to_string(),
            false => format!(
                "daemon shut down: terminated after the {} shutdown grace",
                crate::duration::format_ms(grace.as_millis() as i64)
            ),
        };
        let ids: Vec<String> = self.inflight.keys().cloned().collect();
        for id in &ids {
            self.kill(id, &why);
        }
        while let Some(res) = self.tasks.join_next_with_id().await {
            self.finished(res);
        }
        DaemonExit::Shutdown { terminated }
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

    /// Settles the last jobs, waits for the notify commands, removes the status file and
    /// the spares, and marks this daemon stopped. Without a `store_usable` (its file went)
    /// nothing is written: the ended jobs keep their stdout records, and how many there
    /// are is returned.
    pub(super) async fn close(mut self, store_usable: bool) -> Result<usize, DaemonError> {
        let left = match store_usable {
            true => {
                self.settle_done().await;
                0
            }
            false => std::mem::take(&mut self.done).len(),
        };
        // Each command is bounded by its own command_timeout.
        while self.notifying.join_next().await.is_some() {}
        status::remove(&self.status_path);
        crate::runtime::spare::remove_all(&self.shared.prompt_dir);
        let _ = std::fs::remove_dir_all(&self.shared.prompt_dir);
        crate::runtime::spare::remove_all(&self.shared.home.root().join("runs"));
        if !store_usable {
            return Ok(left);
        }
        let reg = self.registration.clone();
        self.shared
            .with_store(move |store, sh| lease::deregister(store, &reg, sh.clock.now_ms()))
            .await?;
        Ok(left)
    }
}
