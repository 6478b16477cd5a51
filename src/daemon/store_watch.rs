//! Noticing that another connection committed to the store: an inotify watch on a SQLite
//! store's folder whose events are read only while the pool waits, or, on PostgreSQL, the
//! store's change feed (LISTEN/NOTIFY) waking the pool.
//!
//! Every page a commit writes to the WAL is an inotify event, the daemon's own commits
//! included (dozens per job). A watcher thread that reads each one as it comes is woken,
//! and wakes the pool, once per write. Read lazily, the kernel folds a run of identical
//! events into the one still queued and wakes no one for it, so a busy daemon pays about
//! one wake-up per pass instead.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use std::sync::Arc;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

use crate::store::Location;

/// What a commit (or a new store file) does to the folder's entries.
const MASK: u32 = libc::IN_MODIFY | libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_CLOSE_WRITE;

pub(crate) struct StoreWatch {
    fd: AsyncFd<OwnedFd>,
    /// The store file's name: its `-wal` and `-shm` share it as a prefix.
    name: Vec<u8>,
    /// The store's folder.
    dir: CString,
    /// The watch on `dir` while there is one (see `watch_while`).
    wd: Option<i32>,
}

impl StoreWatch {
    /// What tells the pool another connection committed: the file watch on a SQLite store
    /// (`None` when it cannot be set up: work then waits for the tick), and on PostgreSQL
    /// the change feed, which wakes `wake` itself (so an idle fleet queries nothing but its
    /// heartbeats) and stops once the pool drops `wake`.
    pub(crate) fn for_location(location: &Location, wake: &Arc<Notify>) -> Option<Self> {
        match location {
            Location::Sqlite(path) => Self::new(path)
                .map_err(|e| {
                    tracing::warn!(
                        "daemon: not watching the store ({e}); new work waits for the tick"
                    )
                })
                .ok(),
            Location::Postgres(url) => {
                let wake = Arc::downgrade(wake);
                crate::store::watch_changes(url.clone(), move |changed| match wake.upgrade() {
                    Some(w) => {
                        if changed {
                            w.notify_one();
                        }
                        true
                    }
                    None => false,
                });
                None
            }
        }
    }

    /// Watches the folder of the store file `db`; must be called inside the runtime.
    pub fn new(db: &Path) -> std::io::Result<Self> {
        let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let dir = db.parent().ok_or_else(invalid)?;
        let name = db.file_name().ok_or_else(invalid)?.as_bytes().to_vec();
        let dir = CString::new(dir.as_os_str().as_bytes()).map_err(|_| invalid())?;
        // SAFETY: a new inotify descriptor, owned from here on.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: as above; nothing else holds it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the descriptor stays open, and the same, for the AsyncFd's whole life.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?;
        let mut watch = Self {
            fd,
            name,
            dir,
            wd: None,
        };
        watch.watch_while(true)?;
        Ok(watch)
    }

    /// Watches the folder while `on`, and not otherwise. A watched folder turns every
    /// write to its files into an inotify event, the daemon's own WAL writes included
    /// (a third of what such a write costs), and a pool with no free slot has nothing to
    /// start on another connection's commit: it watches only while a slot is free. True
    /// when the watch just started again: commits made while it was off went unseen, so
    /// the caller looks at the store once more before it waits.
    pub(crate) fn watch_while(&mut self, on: bool) -> std::io::Result<bool> {
        let fd = self.fd.get_ref().as_raw_fd();
        match (on, self.wd) {
            (true, None) => {
                // SAFETY: a NUL-terminated path and our own descriptor.
                let wd = unsafe { libc::inotify_add_watch(fd, self.dir.as_ptr(), MASK) };
                if wd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                self.wd = Some(wd);
                Ok(true)
            }
            (false, Some(wd)) => {
                // SAFETY: our own descriptor and a watch it holds; a watch the kernel
                // dropped already (the folder went) fails harmlessly.
                unsafe { libc::inotify_rm_watch(fd, wd) };
                self.wd = None;
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    /// Resolves once a store file changed since the last call returned (at once when one
    /// did meanwhile).
    pub async fn changed(&self) {
        loop {
            let Ok(mut ready) = self.fd.readable().await else {
                return std::future::pending().await;
            };
            match self.drain() {
                Ok(true) => return,
                Ok(false) => ready.clear_ready(),
                Err(_) => return std::future::pending().await,
            }
        }
    }

    /// Reads every queued event; whether one was about a store file (or events were lost).
    fn drain(&self) -> std::io::Result<bool> {
        let mut buf = [0u8; 4096];
        let mut store = false;
        loop {
            // SAFETY: reads into a buffer we own, at most its length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.kind() {
                    std::io::ErrorKind::WouldBlock => Ok(store),
                    std::io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            store |= names_the_store(&buf[..n as usize], &self.name);
        }
    }
}

/// Whether a buffer of inotify events holds one about a file whose name starts with
/// `name`, or a queue overflow (which may have dropped one).
fn names_the_store(mut events: &[u8], name: &[u8]) -> bool {
    const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
    let mut hit = false;
    while events.len() >= HEADER {
        // SAFETY: the kernel wrote a whole header here; read unaligned from the buffer.
        let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(events.as_ptr().cast()) };
        let end = (HEADER + ev.len as usize).min(events.len());
        let file = &events[HEADER..end];
        hit |= ev.mask & libc::IN_Q_OVERFLOW != 0 || file.starts_with(name);
        events = &events[end..];
    }
    hit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_write_to_a_store_file_wakes_and_other_files_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let watch = StoreWatch::new(&dir.path().join("gitmoot.db")).unwrap();
        let write = |name: &str| std::fs::write(dir.path().join(name), "x").unwrap();
        // The kernel queues an event before the write returns.
        write("daemon.status");
        assert!(!watch.drain().unwrap(), "a non-store file is no change");
        write("gitmoot.db-wal");
        write("gitmoot.db-wal");
        assert!(watch.drain().unwrap());
        assert!(!watch.drain().unwrap(), "read once");
        write("gitmoot.db");
        watch.changed().await;
    }

    #[test]
    fn an_unwatched_folder_wakes_nothing_and_watching_again_says_to_look() {
        let dir = tempfile::tempdir().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        let _in = rt.enter();
        let mut watch = StoreWatch::new(&dir.path().join("gitmoot.db")).unwrap();
        let write = || std::fs::write(dir.path().join("gitmoot.db-wal"), "x").unwrap();
        assert!(!watch.watch_while(true).unwrap(), "already watching");
        assert!(!watch.watch_while(false).unwrap());
        write();
        assert!(!watch.drain().unwrap(), "no event while not watching");
        assert!(watch.watch_while(true).unwrap(), "look once more");
        write();
        assert!(watch.drain().unwrap());
    }
}
