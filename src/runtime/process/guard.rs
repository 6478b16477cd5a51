//! The guard: one process per supervising process that outlives it by the moment it takes
//! to kill every job it started and to save what their stdout pipes still held.
//!
//! It is forked from the supervising process (no program to find, in any binary that links
//! this crate) and talks with it over a socket pair: `+ PGID` (a job's group started, with
//! the reading end of its stdout pipe and its record when it has one) and `- PGID` (the
//! job was read to its end). End of input comes only once the supervising process is gone,
//! however it died (it holds the only other end); then the guard kills the job cgroup whole
//! (`cgroup.kill`, see `cgroup.rs`), every group still listed, appends to each record
//! what its pipe still held (a finished agent's result that the daemon died before reading
//! is not lost), removes the cgroup once it is empty, and exits.
//!
//! After the fork the guard only makes system calls, so no lock another thread held at
//! the fork can stop it. It knows nothing of jobs beyond their groups and descriptors.

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::Mutex;
use std::time::Duration;

/// How long the guard waits for a pipe's writers to go once the daemon is gone.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// A message: the operation, then the group id (little-endian).
const MESSAGE: usize = 5;
/// Groups the guard can list before its list grows (growing after a fork allocates).
const LISTED: usize = 4096;

/// One guard per process, started with the first job.
pub(super) struct Guard {
    /// This side of the socket pair; `None` once the guard is found dead, until the next
    /// job starts another.
    socket: Mutex<Option<OwnedFd>>,
    /// The cgroup every job's child joins, where the kernel offers one.
    pub(super) cgroup: Option<super::cgroup::JobCgroup>,
}

/// The process's guard.
pub(super) fn guard() -> &'static Guard {
    static GUARD: std::sync::OnceLock<Guard> = std::sync::OnceLock::new();
    GUARD.get_or_init(|| Guard {
        socket: Mutex::new(None),
        cgroup: super::cgroup::make(),
    })
}

/// A listed job: its group, and its stdout pipe's reading end and record (or -1).
#[derive(Debug, Clone, Copy)]
struct Listed {
    pgid: i32,
    pipe: RawFd,
    record: RawFd,
}

impl Guard {
    /// From now until [`Guard::release`], the group led by `pgid` dies with this process,
    /// and what is left in `drain`'s pipe then goes to its record.
    pub(super) fn watch(
        &self,
        pgid: i32,
        drain: Option<(BorrowedFd<'_>, BorrowedFd<'_>)>,
    ) -> std::io::Result<()> {
        let mut socket = self.socket.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = socket.as_ref()
            && send(s.as_raw_fd(), b'+', pgid, drain).is_ok()
        {
            return Ok(());
        }
        // First job, or the guard was killed: the groups it listed are unguarded now, but
        // each leader still dies with its supervising thread (PR_SET_PDEATHSIG).
        let fresh = self.start()?;
        send(fresh.as_raw_fd(), b'+', pgid, drain)?;
        *socket = Some(fresh);
        Ok(())
    }

    /// The group led by `pgid` is swept and its pipes read to their end: the guard
    /// forgets it.
    pub(super) fn release(&self, pgid: i32) {
        let mut socket = self.socket.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = socket.as_ref()
            && send(s.as_raw_fd(), b'-', pgid, None).is_err()
        {
            *socket = None;
        }
    }

    fn start(&self) -> std::io::Result<OwnedFd> {
        let mut pair = [0; 2];
        // SAFETY: socketpair(2) into an array of two.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just made and are owned here alone.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        // Everything the guard needs exists before the fork.
        let cgroup = self.cgroup.as_ref().and_then(|cg| {
            let kill = CString::new(cg.dir.join("cgroup.kill").as_os_str().as_bytes()).ok()?;
            let dir = CString::new(cg.dir.as_os_str().as_bytes()).ok()?;
            Some((kill, dir))
        });
        let mut listed: Vec<Listed> = Vec::with_capacity(LISTED);
        let mut buf = vec![0u8; 64 * 1024];
        // SAFETY: the child only makes system calls (see `serve`) and never returns.
        match unsafe { libc::fork() } {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                let socket = theirs.as_raw_fd();
                // SAFETY: system calls only, on the descriptors this child owns now.
                unsafe { serve(socket, cgroup.as_ref(), &mut listed, &mut buf) }
            }
            _ => Ok(ours),
        }
    }
}

/// Sends one message, with the pipe's and the record's descriptors when given.
fn send(
    socket: RawFd,
    op: u8,
    pgid: i32,
    drain: Option<(BorrowedFd<'_>, BorrowedFd<'_>)>,
) -> std::io::Result<()> {
    let mut message = [0u8; MESSAGE];
    message[0] = op;
    message[1..].copy_from_slice(&pgid.to_le_bytes());
    let mut iov = libc::iovec {
        iov_base: message.as_mut_ptr().cast(),
        iov_len: MESSAGE,
    };
    let pair = drain.map(|(p, r)| [p.as_raw_fd(), r.as_raw_fd()]);
    let fds: &[RawFd] = pair.as_ref().map_or(&[], |p| p.as_slice());
    let mut control = [0u64; 8];
    // SAFETY: a message header over buffers alive for the call; the control buffer is
    // aligned for `cmsghdr` and large enough for two descriptors.
    let sent = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            let bytes = std::mem::size_of_val(fds) as u32;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(bytes) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(bytes) as usize;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast(), fds.len());
        }
        libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL)
    };
    if sent == MESSAGE as isize {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The guard's life in the forked child: follow the list until the supervising process
/// is gone, then kill, drain and clean up.
///
/// # Safety
/// Only in the child of a fork: it closes every descriptor but `socket` and exits.
unsafe fn serve(
    socket: RawFd,
    cgroup: Option<&(CString, CString)>,
    listed: &mut Vec<Listed>,
    buf: &mut [u8],
) -> ! {
    unsafe {
        // Its own group, so a Ctrl-C meant for the daemon's terminal does not take the
        // guard down first; the daemon's signal handlers are not its own.
        libc::setpgid(0, 0);
        for signal in 1..32 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        let none: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        // Nothing of the daemon's stays open here: its end of the pair above all, or the
        // end of input would never come.
        libc::dup2(socket, 0);
        libc::syscall(libc::SYS_close_range, 1u32, u32::MAX, 0u32);
        follow(0, listed);
        if let Some((kill, _)) = cgroup {
            let fd = libc::open(kill.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd >= 0 {
                libc::write(fd, b"1".as_ptr().cast(), 1);
                libc::close(fd);
            }
        }
        for job in listed.iter() {
            if job.pgid > 1 {
                libc::kill(-job.pgid, libc::SIGKILL);
            }
        }
        for job in listed.iter().filter(|j| j.pipe >= 0 && j.record >= 0) {
            drain(job.pipe, job.record, buf);
        }
        if let Some((_, dir)) = cgroup {
            for _ in 0..50 {
                if libc::rmdir(dir.as_ptr()) == 0 {
                    break;
                }
                libc::usleep(100_000);
            }
        }
        libc::_exit(0)
    }
}

/// Reads the guard's messages until the supervising process is gone.
///
/// # Safety
/// `socket` is the guard's end of the pair.
unsafe fn follow(socket: RawFd, listed: &mut Vec<Listed>) {
    loop {
        let mut message = [0u8; MESSAGE];
        let mut iov = libc::iovec {
            iov_base: message.as_mut_ptr().cast(),
            iov_len: MESSAGE,
        };
        let mut control = [0u64; 8];
        // SAFETY: a message header over buffers alive for the call.
        let (got, fds) = unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control);
            let got = libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC);
            let mut fds = [-1; 2];
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if got > 0 && !cmsg.is_null() && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let count = ((*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize) / 4;
                for (i, fd) in fds.iter_mut().enumerate().take(count.min(2)) {
                    *fd = *data.add(i);
                }
            }
            (got, fds)
        };
        if got < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if got != MESSAGE as isize {
            return;
        }
        let pgid = i32::from_le_bytes([message[1], message[2], message[3], message[4]]);
        if message[0] == b'+' {
            listed.push(Listed {
                pgid,
                pipe: fds[0],
                record: fds[1],
            });
            continue;
        }
        listed.retain(|job| {
            if job.pgid != pgid {
                return true;
            }
            // SAFETY: descriptors this guard received and owns.
            unsafe {
                libc::close(job.pipe);
                libc::close(job.record);
            }
            false
        });
    }
}

/// Appends what `pipe` still holds, until its writers are gone or `DRAIN_GRACE`, to the
/// end of `record`.
///
/// # Safety
/// Both are descriptors the guard owns.
unsafe fn drain(pipe: RawFd, record: RawFd, buf: &mut [u8]) {
    let mut left = DRAIN_GRACE.as_millis() as i32;
    // A writer that escaped every kill must not keep the guard writing.
    let mut room = super::CAPTURE_LIMIT;
    while left > 0 && room > 0 {
        let mut poll = libc::pollfd {
            fd: pipe,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: system calls on descriptors the guard owns, into its own buffer.
        unsafe {
            if libc::poll(&mut poll, 1, 100) < 0 {
                return;
            }
            let n = libc::read(pipe, buf.as_mut_ptr().cast(), buf.len());
            if n == 0 {
                return;
            }
            if n < 0 {
                left -= 100;
                continue;
            }
            let mut stat: libc::stat = std::mem::zeroed();
            if libc::fstat(record, &mut stat) != 0 {
                return;
            }
            libc::pwrite(record, buf.as_ptr().cast(), n as usize, stat.st_size);
            room = room.saturating_sub(n as usize);
        }
    }
}
