//! One daemon per SQLite store and per home: an advisory `flock` on the lock file beside
//! the store (`<file>.lock`, see `Location::daemon_lock`), so every home, `--store`,
//! `GITMOOT_STORE` and `[store] url` that reaches one file meets the same lock, and one on
//! `<home>/daemon.lock` for the home's own folders (prompts, records, scratch). On
//! PostgreSQL, whose store several daemons share under leases, only the home's. Each file
//! holds the owner's pid and home.
//!
//! Owns acquiring, probing and releasing that lock; the kernel drops it when the process
//! dies, so a crashed daemon never blocks the next one. The file is rewritten in place and
//! never shrunk, so a restart on a full disk needs no new block to take it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::home::Home;
use crate::store::Location;

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another daemon (pid {pid}, home {home}) already holds the daemon lock {path}; stop it first (`gitmoot --home {home} daemon stop`)"
    )]
    Held {
        pid: String,
        home: String,
        path: PathBuf,
    },
    #[error("daemon lock {path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// Where the daemon lock of `home`'s store is, which `daemon status`, `daemon stop` and
/// the control room probe: beside its SQLite file, or the home's own for a PostgreSQL
/// store (and for a URL that does not parse, which fails elsewhere).
pub fn path_for(home: &Home) -> PathBuf {
    Location::of_home(home)
        .ok()
        .and_then(|l| l.daemon_lock())
        .unwrap_or_else(|| home_lock(home))
}

fn home_lock(home: &Home) -> PathBuf {
    home.root().join("daemon.lock")
}

/// The held locks; dropping them releases the store and the home.
#[derive(Debug)]
pub struct DaemonLock {
    files: Vec<File>,
    /// The store's lock (`path_for`).
    path: PathBuf,
}

fn open(path: &Path) -> Result<File, LockError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|cause| LockError::Io {
            path: path.to_path_buf(),
            cause,
        })
}

fn try_flock(file: &File) -> bool {
    // SAFETY: flock on a descriptor we own; LOCK_NB never blocks.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Who holds a lock, as its file says.
struct Owner {
    pid: String,
    home: String,
}

fn read_owner(file: &mut File) -> Owner {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut text);
    let mut lines = text.lines().map(str::trim);
    let mut field = || {
        lines
            .next()
            .filter(|l| !l.is_empty())
            .unwrap_or("unknown")
            .to_string()
    };
    Owner {
        pid: field(),
        home: field(),
    }
}

/// Writes `text` over the start of `file`, blanking what a longer text before it left.
fn overwrite(file: &File, text: &str) -> std::io::Result<()> {
    let len = file.metadata()?.len() as usize;
    let mut bytes = text.as_bytes().to_vec();
    if bytes.len() < len {
        bytes.resize(len, b'\n');
    }
    file.write_all_at(&bytes, 0)?;
    file.sync_data()
}

impl DaemonLock {
    /// Takes the store's lock, then the home's when that is another file, or names the
    /// holder of the first one taken already.
    pub(crate) fn acquire_for(home: &Home) -> Result<Self, LockError> {
        let path = path_for(home);
        let mut lock = Self::acquire(&path, home.root())?;
        let own = home_lock(home);
        if own != path {
            let mut other = Self::acquire(&own, home.root())?;
            lock.files.append(&mut other.files);
        }
        Ok(lock)
    }

    /// Takes the lock and writes this process's pid and `home` into it, or names the holder.
    pub(crate) fn acquire(path: &Path, home: &Path) -> Result<Self, LockError> {
        let mut file = open(path)?;
        if !try_flock(&file) {
            let owner = read_owner(&mut file);
            return Err(LockError::Held {
                pid: owner.pid,
                home: owner.home,
                path: path.to_path_buf(),
            });
        }
        let record = format!("{}\n{}\n", std::process::id(), home.display());
        overwrite(&file, &record).map_err(|cause| LockError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        Ok(Self {
            files: vec![file],
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        for file in &self.files {
            let _ = overwrite(file, "");
        }
    }
}

/// The pid of the daemon holding the lock, or `None` when no daemon runs.
pub fn holder(path: &Path) -> Option<String> {
    holder_home(path).map(|(pid, _)| pid)
}

/// The pid and home of the daemon holding the lock, or `None` when no daemon runs. The
/// probe opens the file read-only: a write-open would look like a change of the store
/// to the watchers of its folder.
pub fn holder_home(path: &Path) -> Option<(String, String)> {
    let mut file = File::open(path).ok()?;
    if try_flock(&file) {
        // SAFETY: releasing the probe lock we just took on our own descriptor.
        unsafe {
            libc::flock(file.as_raw_fd(), libc::LOCK_UN);
        }
        return None;
    }
    let owner = read_owner(&mut file);
    Some((owner.pid, owner.home))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_pid() {
        let dir = crate::ids::scratch_dir("lock");
        let path = dir.join("daemon.lock");
        assert_eq!(holder(&path), None);
        let first = DaemonLock::acquire(&path, Path::new("/the/home")).unwrap();
        let me = std::process::id().to_string();
        assert_eq!(holder(&path), Some(me.clone()));
        let err = DaemonLock::acquire(&path, Path::new("/other")).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("pid {me}, home /the/home")),
            "{err}"
        );
        drop(first);
        // Other tests in this process fork children; a child shares the lock's descriptor
        // for the instant between fork and exec (close-on-exec), so release can lag a little.
        let released = (0..100).any(|_| {
            let free = holder(&path).is_none();
            if !free {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            free
        });
        assert!(released, "the lock stayed held after the holder dropped it");
        DaemonLock::acquire(&path, Path::new("/h")).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
