//! A child's output pipe read on the cadence (`cadence.rs`).
//!
//! While the child is quiet the pipe is not in the runtime's epoll set at all: every write
//! of a registered pipe wakes the runtime's driver, even when no task waits on it, so a
//! fleet printing a line at a time would cost a wake per line however its readers paced
//! themselves. Instead a quiet pipe is read without blocking at each paced instant. A busy
//! child (a read of a page or more) or a gone one (draining to the end) is read again at
//! once, and waited on for readiness only once its pipe is empty: a busy child never waits
//! on a full pipe for the cadence, and a gone child's pipe, which usually holds its end
//! already, is drained without entering the epoll set at all.
//!
//! Knows descriptors and the cadence; what the bytes are for is the caller's.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use super::cadence::{self, PACE_BELOW, Reading};

/// The pipe, outside or inside the runtime's epoll set.
enum Fd {
    Bare(OwnedFd),
    Watched(AsyncFd<OwnedFd>),
    /// Between the two (only while switching).
    Moving,
}

/// One pipe's reading end, paced while its child is quiet.
pub(super) struct PacedPipe {
    fd: Fd,
    mode: watch::Receiver<Reading>,
    /// The last read found a page or more: read again at once, then on readiness.
    busy: bool,
    /// The last read found something small: the next waits for the cadence.
    rested: bool,
}

/// What one attempt to move bytes gave.
enum Took {
    Bytes(usize),
    Empty,
    End,
}

fn attempt(take: &mut impl FnMut(RawFd) -> std::io::Result<usize>, fd: RawFd) -> Took {
    loop {
        return match take(fd) {
            Ok(0) => Took::End,
            Ok(n) => Took::Bytes(n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Took::Empty,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => Took::End,
        };
    }
}

impl PacedPipe {
    /// `fd` is a non-blocking pipe end (`stdio::receiver`); `mode` says how the child's
    /// pipes are read now.
    pub(super) fn new(fd: OwnedFd, mode: watch::Receiver<Reading>) -> Self {
        Self {
            fd: Fd::Bare(fd),
            mode,
            busy: false,
            rested: false,
        }
    }

    /// The pipe's descriptor, taken out of the epoll set if it was in it.
    fn bare(&mut self) -> RawFd {
        if let Fd::Watched(_) = self.fd
            && let Fd::Watched(w) = std::mem::replace(&mut self.fd, Fd::Moving)
        {
            self.fd = Fd::Bare(w.into_inner());
        }
        match &self.fd {
            Fd::Bare(fd) => fd.as_raw_fd(),
            Fd::Watched(w) => w.as_raw_fd(),
            Fd::Moving => -1,
        }
    }

    /// The pipe in the epoll set; `None` if it could not be put there.
    fn watched(&mut self) -> Option<&AsyncFd<OwnedFd>> {
        if let Fd::Bare(_) = self.fd
            && let Fd::Bare(fd) = std::mem::replace(&mut self.fd, Fd::Moving)
        {
            // SAFETY: an owned descriptor stays open, and the same, while the AsyncFd owns it.
            let watched = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) };
            self.fd = match watched {
                Ok(w) => Fd::Watched(w),
                Err(e) => Fd::Bare(e.into_parts().0),
            };
        }
        match &self.fd {
            Fd::Watched(w) => Some(w),
            _ => None,
        }
    }

    /// Moves the next bytes out of the pipe with `take` (a non-blocking read of the
    /// descriptor it is given): `Some(n)` for `n` bytes, `None` at the pipe's end, on an
    /// error, or once the readers are told to stop.
    pub(super) async fn next(
        &mut self,
        mut take: impl FnMut(RawFd) -> std::io::Result<usize>,
    ) -> Option<usize> {
        loop {
            let mode = *self.mode.borrow_and_update();
            let took = match mode {
                Reading::Stopped => return None,
                Reading::Paced if !self.busy => {
                    if self.rested {
                        self.rested = false;
                        tokio::select! {
                            _ = tokio::time::sleep_until(cadence::next_read()) => {}
                            // The run that set the mode is gone: stop, as told.
                            changed = self.mode.changed() => changed.ok()?,
                        }
                        continue;
                    }
                    let fd = self.bare();
                    match attempt(&mut take, fd) {
                        Took::Empty => {
                            self.rested = true;
                            continue;
                        }
                        took => took,
                    }
                }
                // Busy or gone: read at once while there is something (a gone child's pipe
                // usually holds its end already), and only an empty pipe is watched.
                _ if matches!(self.fd, Fd::Bare(_)) => match attempt(&mut take, self.bare()) {
                    Took::Empty => {
                        self.watched()?;
                        continue;
                    }
                    took => took,
                },
                _ => {
                    let (Fd::Watched(w), mode) = (&self.fd, &mut self.mode) else {
                        return None;
                    };
                    tokio::select! {
                        ready = w.readable() => {
                            let mut guard = ready.ok()?;
                            match guard.try_io(|fd| Ok(attempt(&mut take, fd.as_raw_fd()))) {
                                Ok(Ok(Took::Empty)) => {
                                    guard.clear_ready();
                                    continue;
                                }
                                Ok(Ok(took)) => took,
                                Ok(Err(_)) | Err(_) => continue,
                            }
                        }
                        changed = mode.changed() => {
                            changed.ok()?;
                            continue;
                        }
                    }
                }
            };
            return match took {
                Took::Bytes(n) => {
                    self.busy = n >= PACE_BELOW;
                    self.rested = !self.busy;
                    Some(n)
                }
                Took::End | Took::Empty => None,
            };
        }
    }
}

/// A plain non-blocking read of `fd` into `buf`.
pub(super) fn read_fd(fd: RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: read(2) into a buffer we own, at most its length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;

    /// A pipe's writing end, and its reading end paced under a mode still `Paced` (with
    /// the mode's sender and the read end's descriptor).
    fn paced_pipe() -> (
        std::io::PipeWriter,
        watch::Sender<Reading>,
        PacedPipe,
        RawFd,
    ) {
        let (r, w) = std::io::pipe().unwrap();
        let fd = super::super::stdio::receiver(r).unwrap();
        let raw = fd.as_raw_fd();
        let (tx, rx) = watch::channel(Reading::Paced);
        (w, tx, PacedPipe::new(fd, rx), raw)
    }

    /// Whether `fd`'s pipe is in one of this process's epoll sets: a `tfd:` line of their
    /// fdinfo naming both its number and its inode. The number alone is not enough: an
    /// entry outlives its descriptor while another process (a spawned child, the guard)
    /// still holds the pipe, so another test's closed pipe may have had this number.
    fn in_an_epoll_set(fd: RawFd) -> bool {
        use std::os::unix::fs::MetadataExt;
        let ino = std::fs::metadata(format!("/proc/self/fd/{fd}"))
            .unwrap()
            .ino();
        // `tfd:        5 events:       19 data: 5  pos:0 ino:4c1 sdev:d`
        let names = |l: &str| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            fields.first() == Some(&"tfd:")
                && fields.get(1) == Some(&fd.to_string().as_str())
                && fields.contains(&format!("ino:{ino:x}").as_str())
        };
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .any(|e| {
                let link = std::fs::read_link(e.path()).unwrap_or_default();
                link.to_string_lossy().contains("eventpoll")
                    && std::fs::read_to_string(format!(
                        "/proc/self/fdinfo/{}",
                        e.file_name().display()
                    ))
                    .unwrap_or_default()
                    .lines()
                    .any(names)
            })
    }

    async fn next_timed(p: &mut PacedPipe, buf: &mut [u8]) -> (Option<usize>, Duration) {
        let before = Instant::now();
        let n = p.next(|fd| read_fd(fd, buf)).await;
        (n, Instant::now() - before)
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_pipe_is_read_on_the_cadence_outside_epoll_and_a_busy_one_at_once() {
        let (mut w, _tx, mut p, raw) = paced_pipe();
        let mut buf = vec![0u8; 64 * 1024];
        w.write_all(b"one\n").unwrap();
        assert_eq!(
            next_timed(&mut p, &mut buf).await,
            (Some(4), Duration::ZERO)
        );
        w.write_all(b"two\n").unwrap();
        let (n, waited) = next_timed(&mut p, &mut buf).await;
        assert_eq!(n, Some(4));
        assert!(
            waited > Duration::ZERO,
            "a small read leaves the next to the cadence"
        );
        assert!(
            !in_an_epoll_set(raw),
            "a quiet pipe wakes nothing when written"
        );
        w.write_all(&[b'x'; PACE_BELOW]).unwrap();
        assert_eq!(next_timed(&mut p, &mut buf).await.0, Some(PACE_BELOW));
        // Busy, with the pipe empty: waited on for readiness, and read the moment it fills.
        let waiting = tokio::spawn(async move {
            let got = next_timed(&mut p, &mut buf).await;
            (got, p, buf)
        });
        let mut looked = 0;
        while !in_an_epoll_set(raw) {
            looked += 1;
            assert!(
                looked < 1_000,
                "a busy, empty pipe is waited on for readiness"
            );
            tokio::task::yield_now().await;
        }
        w.write_all(b"three\n").unwrap();
        let ((n, waited), mut p, mut buf) = waiting.await.unwrap();
        assert_eq!(
            (n, waited),
            (Some(6), Duration::ZERO),
            "after a page or more the child is read at once"
        );
        w.write_all(b"four\n").unwrap();
        let (n, waited) = next_timed(&mut p, &mut buf).await;
        assert_eq!(n, Some(5));
        assert!(waited > Duration::ZERO, "quiet again: back on the cadence");
        assert!(!in_an_epoll_set(raw));
    }

    #[tokio::test(start_paused = true)]
    async fn a_gone_child_is_drained_at_once_and_a_stop_ends_the_reading() {
        let (mut w, tx, mut p, _) = paced_pipe();
        let mut buf = vec![0u8; 1024];
        w.write_all(b"result\n").unwrap();
        assert_eq!(next_timed(&mut p, &mut buf).await.0, Some(7));
        w.write_all(b"last\n").unwrap();
        drop(w);
        tx.send(Reading::Draining).unwrap();
        assert_eq!(
            next_timed(&mut p, &mut buf).await,
            (Some(5), Duration::ZERO)
        );
        assert_eq!(next_timed(&mut p, &mut buf).await, (None, Duration::ZERO));

        let (mut w, tx, mut p, _) = paced_pipe();
        w.write_all(b"one\n").unwrap();
        assert_eq!(next_timed(&mut p, &mut buf).await.0, Some(4));
        let waiting = tokio::spawn(async move { next_timed(&mut p, &mut buf).await });
        tokio::task::yield_now().await;
        tx.send(Reading::Stopped).unwrap();
        assert_eq!(
            waiting.await.unwrap(),
            (None, Duration::ZERO),
            "the stop ends a paced wait"
        );
    }

    /// A run dropped midway (its task cancelled) takes the mode's sender with it: its
    /// readers stop rather than spin on a channel that can no longer change.
    #[tokio::test(start_paused = true)]
    async fn readers_whose_run_is_gone_stop() {
        let (mut w, tx, mut p, _) = paced_pipe();
        let mut buf = vec![0u8; 1024];
        w.write_all(b"one\n").unwrap();
        assert_eq!(next_timed(&mut p, &mut buf).await.0, Some(4));
        drop(tx);
        w.write_all(b"two\n").unwrap();
        assert_eq!(next_timed(&mut p, &mut buf).await, (None, Duration::ZERO));
    }
}
