//! One daemon per home: an advisory `flock` on `<home>/daemon.lock` holding the owner's pid.
//!
//! Owns acquiring, probing and releasing that lock; the kernel drops it when the process
//! dies, so a crashed daemon never blocks the next one.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another daemon is running for this home (pid {pid}, lock {path})")]
    Held { pid: String, path: PathBuf },
    #[error("daemon lock {path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// The held lock; dropping it releases the home.
#[derive(Debug)]
pub struct DaemonLock {
    file: File,
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

fn read_pid(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_string(&mut text);
    let pid = text.trim();
    if pid.is_empty() {
        "unknown".into()
    } else {
        pid.into()
    }
}

impl DaemonLock {
    /// Takes the lock and writes this process's pid into it, or names the holder.
    pub(crate) fn acquire(path: &Path) -> Result<Self, LockError> {
        let mut file = open(path)?;
        if !try_flock(&file) {
            return Err(LockError::Held {
                pid: read_pid(&mut file),
                path: path.to_path_buf(),
            });
        }
        let io = |cause| LockError::Io {
            path: path.to_path_buf(),
            cause,
        };
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// The pid of the daemon holding the lock, or `None` when no daemon runs.
pub fn holder(path: &Path) -> Option<String> {
    let mut file = OpenOptions::new().read(true).write(true).open(path).ok()?;
    if try_flock(&file) {
        // SAFETY: releasing the probe lock we just took on our own descriptor.
        unsafe {
            libc::flock(file.as_raw_fd(), libc::LOCK_UN);
        }
        return None;
    }
    Some(read_pid(&mut file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_pid() {
        let dir = crate::ids::scratch_dir("lock");
        let path = dir.join("daemon.lock");
        assert_eq!(holder(&path), None);
        let first = DaemonLock::acquire(&path).unwrap();
        let me = std::process::id().to_string();
        assert_eq!(holder(&path), Some(me.clone()));
        let err = DaemonLock::acquire(&path).unwrap_err();
        assert!(err.to_string().contains(&format!("pid {me}")), "{err}");
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
        DaemonLock::acquire(&path).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
