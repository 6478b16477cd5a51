//! The daemon's warm config reload: config.toml is read again on SIGHUP, or once per tick
//! when the file changed. A file that does not load leaves the config in force and logs
//! one line saying why.
//!
//! Owns only noticing and loading; the pool applies what it gets.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use crate::clock::Millis;
use crate::config::Config;

/// What identifies one version of config.toml on disk.
type FileStamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> FileStamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Where the pool re-reads its config from, and what it last saw there.
pub(super) struct Reload {
    path: PathBuf,
    stamp: FileStamp,
    /// Set by SIGHUP.
    hangup: Arc<AtomicBool>,
    last_check_ms: Millis,
    /// Why the file last failed to load: logged once, not per signal or tick. Kept as the
    /// reason rather than the file's stamp, which a reload racing a write may take of the
    /// half-written file.
    failed: Option<String>,
}

impl Reload {
    pub(super) fn new(path: PathBuf, hangup: Arc<AtomicBool>, now: Millis) -> Self {
        Self {
            stamp: stamp(&path),
            path,
            hangup,
            last_check_ms: now,
            failed: None,
        }
    }

    /// The config to apply now: after SIGHUP, or when at least `tick_ms` after the last
    /// look the file has changed and loads.
    pub(super) fn check(&mut self, now: Millis, tick_ms: Millis) -> Option<Config> {
        let hangup = self.hangup.swap(false, Ordering::SeqCst);
        if !hangup && now - self.last_check_ms < tick_ms {
            return None;
        }
        self.last_check_ms = now;
        let seen = stamp(&self.path);
        if !hangup && seen == self.stamp {
            return None;
        }
        self.stamp = seen;
        let why = if hangup { "SIGHUP" } else { "file changed" };
        match Config::load(&self.path) {
            Ok(c) => {
                self.failed = None;
                tracing::info!(
                    "daemon: config reloaded from {} ({why})",
                    self.path.display()
                );
                Some(c)
            }
            Err(e) => {
                let reason = e.to_string();
                if self.failed.as_deref() != Some(reason.as_str()) {
                    tracing::warn!(
                        "daemon: config reload ({why}) failed, keeping the previous config: {reason}"
                    );
                }
                self.failed = Some(reason);
                None
            }
        }
    }
}
