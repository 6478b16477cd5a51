//! A store write refused for want of disk space, told apart from other store errors and
//! named by the file it could not grow: SQLite's own message ("database or disk is full")
//! names neither the database nor its write-ahead log.
//!
//! Reads the error and the file system's free space only; what to do about a full disk
//! (the daemon waits, a CLI verb stops) is its caller's.

use std::path::Path;

use super::StoreError;

/// Below this much free space an I/O error from SQLite is taken for a full disk: SQLite
/// reports a failed grow of its shared-memory file or log as a plain "disk I/O error".
const NEARLY_FULL_BYTES: u64 = 64 * 1024;

impl StoreError {
    /// The store could not write because its disk (or the server's) is full. `db`, the
    /// SQLite file when there is one, lets a bare I/O error count when its disk has no room.
    pub fn is_disk_full(&self, db: Option<&Path>) -> bool {
        match self {
            Self::Sqlite(e) | Self::File { cause: e, .. } => match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DiskFull) => true,
                Some(rusqlite::ErrorCode::SystemIoFailure) => db.is_some_and(nearly_full),
                _ => false,
            },
            Self::Io(e) => no_space(e),
            // The server's disk: `disk_full` (53100).
            Self::Postgres(e) | Self::Server { cause: e, .. } => {
                e.code() == Some(&postgres::error::SqlState::DISK_FULL)
            }
            _ => false,
        }
    }
}

/// ENOSPC or a quota reached.
pub fn no_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// Whether the file system holding `file` has almost no space left for this user.
fn nearly_full(file: &Path) -> bool {
    let Some(dir) = file.parent() else {
        return false;
    };
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid C string and `s` a zeroed struct statvfs fills.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return false;
    }
    (s.f_bavail as u64).saturating_mul(s.f_frsize as u64) < NEARLY_FULL_BYTES
}

/// The one line a CLI verb ends with when the store's disk is full: the files that could
/// not grow, and what to do.
pub fn message(store: &super::Location, cause: &StoreError) -> String {
    let what = match store {
        super::Location::Sqlite(path) => format!(
            "the store {} (or its write-ahead log {}-wal)",
            path.display(),
            path.display()
        ),
        other => format!("the store {}", other.display()),
    };
    format!("the disk holding {what} is full ({cause}); free space, then run it again")
}
