//! The store going away under a running daemon, said once and loudly: the SQLite file
//! deleted or replaced (its path no longer names the file the daemon has open), the home
//! removed, or the disk holding the store full.
//!
//! Owns noticing those and what is said about them; the pool decides what to do (stop
//! claiming and exit non-zero, or keep its jobs and retry until space returns). Must not
//! touch the store: a vanished one is not to be written, a full one cannot be.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::DaemonError;
use crate::engine::EngineError;
use crate::store::Location;

/// The SQLite file the daemon opened, by its device and inode.
pub(crate) struct StoreFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

/// What went away under the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gone {
    HomeRemoved(PathBuf),
    StoreDeleted(PathBuf),
    StoreReplaced(PathBuf),
}

impl StoreFile {
    /// The identity of `location`'s file as the daemon opens it; `None` on PostgreSQL.
    pub(crate) fn of(location: &Location) -> Option<Self> {
        let Location::Sqlite(path) = location else {
            return None;
        };
        let meta = std::fs::metadata(path).ok()?;
        Some(Self {
            path: path.clone(),
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    /// Whether the path still names the open file. A daemon writing on to an unlinked or
    /// replaced inode loses every commit to a file nobody reads.
    fn check(&self) -> Option<Gone> {
        match std::fs::metadata(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Some(Gone::StoreDeleted(self.path.clone()))
            }
            Ok(m) if (m.dev(), m.ino()) != (self.dev, self.ino) => {
                Some(Gone::StoreReplaced(self.path.clone()))
            }
            _ => None,
        }
    }
}

/// What is gone, if anything: the home first (a removed home takes its own store along).
pub(crate) fn gone(home: &Path, store: Option<&StoreFile>) -> Option<Gone> {
    if !home.exists() {
        return Some(Gone::HomeRemoved(home.to_path_buf()));
    }
    store.and_then(StoreFile::check)
}

impl Gone {
    /// Whether the daemon may still write its store: not once its file went.
    pub(crate) fn store_usable(&self) -> bool {
        matches!(self, Self::HomeRemoved(_))
    }

    /// The error the daemon exits with, once `left` jobs it ran were stopped or finished
    /// unsettled (their stdout records kept in `runs` for a restored store's recovery).
    pub(crate) fn into_error(self, left: usize, runs: &Path) -> DaemonError {
        let left = match left {
            0 => "no job was running".to_string(),
            n => format!(
                "{n} running job(s) were left unsettled; their output stays in {} for the recovery of a restored store",
                runs.display()
            ),
        };
        match self {
            Self::HomeRemoved(path) => DaemonError::HomeRemoved(path),
            Self::StoreDeleted(path) => DaemonError::StoreGone {
                path,
                how: "deleted",
                left,
            },
            Self::StoreReplaced(path) => DaemonError::StoreGone {
                path,
                how: "replaced by another file",
                left,
            },
        }
    }
}

/// Whether `e` is the store's disk (or quota) being full: nothing was written, and the same
/// write succeeds once space returns.
pub(crate) fn is_disk_full(e: &DaemonError) -> bool {
    match e {
        DaemonError::Store(e) | DaemonError::Engine(EngineError::Store(e)) => e.is_disk_full(None),
        DaemonError::Io(e) => crate::store::full::no_space(e),
        _ => false,
    }
}

/// A full disk while it lasts: said once when it starts and once when it ends, retried
/// with a growing pause (250 ms up to 30 s).
pub(crate) struct DiskFull {
    /// The store as messages name it.
    store: String,
    since: Option<Instant>,
    pause: Duration,
}

impl DiskFull {
    pub(crate) fn new(location: &Location) -> Self {
        Self {
            store: location.display(),
            since: None,
            pause: Duration::ZERO,
        }
    }

    /// A write failed on a full disk: says so the first time, and returns how long to wait
    /// before the next try.
    pub(crate) fn failed(&mut self, e: &DaemonError, running: usize) -> Duration {
        if self.since.is_none() {
            self.since = Some(Instant::now());
            self.pause = Duration::from_millis(250);
            super::notice(format_args!(
                "daemon: the disk holding the store {} is full ({e}); keeping its {running} running job(s) and retrying until space returns",
                self.store
            ));
        } else {
            self.pause = (self.pause * 2).min(Duration::from_secs(30));
        }
        self.pause
    }

    /// A pass went through: says the store is writable again when it was not.
    pub(crate) fn passed(&mut self) {
        if let Some(since) = self.since.take() {
            super::notice(format_args!(
                "daemon: the store {} is writable again after {}; resuming",
                self.store,
                crate::duration::format_ms(since.elapsed().as_millis() as i64)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;

    #[test]
    fn a_deleted_or_replaced_file_and_a_removed_home_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let db = home.join("gitmoot.db");
        std::fs::write(&db, "x").unwrap();
        let file = StoreFile::of(&Location::Sqlite(db.clone())).unwrap();
        assert_eq!(gone(&home, Some(&file)), None);
        let other = home.join("other.db");
        std::fs::write(&other, "y").unwrap();
        std::fs::rename(&other, &db).unwrap();
        assert_eq!(
            gone(&home, Some(&file)),
            Some(Gone::StoreReplaced(db.clone()))
        );
        std::fs::remove_file(&db).unwrap();
        assert_eq!(gone(&home, Some(&file)), Some(Gone::StoreDeleted(db)));
        std::fs::remove_dir(&home).unwrap();
        assert_eq!(gone(&home, Some(&file)), Some(Gone::HomeRemoved(home)));
    }

    #[test]
    fn only_a_full_disk_is_waited_out() {
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        assert!(is_disk_full(&DaemonError::Store(StoreError::Sqlite(full))));
        let io = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(is_disk_full(&DaemonError::Io(io)));
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        assert!(!is_disk_full(&DaemonError::Store(StoreError::Sqlite(busy))));
    }
}
