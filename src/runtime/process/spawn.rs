//! Starting a job's child without copying the daemon: `clone(CLONE_VM | CLONE_VFORK)`,
//! the child set up on a stack of its own in the daemon's memory until it execs, and
//! waiting for it through a pidfd.
//!
//! A forked child copies the daemon's page tables, makes every page the daemon writes
//! afterwards a copy-on-write fault, and tears the copy down again at exec: most of what
//! starting a trivial job cost. The standard library avoids that with `posix_spawn` only
//! when there is no pre-exec step, and a job needs one (the parent-death signal, the
//! Landlock sandbox), so the steps are made here: raw syscalls on memory prepared before
//! the clone, like `posix_spawn` does itself.

use std::ffi::{CStr, CString, c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::io::unix::AsyncFd;

use crate::runtime::sandbox::Confinement;

/// The child's stack until it execs: its set-up is a few syscalls, the Landlock rules the
/// deepest of them.
const CHILD_STACK: usize = 64 * 1024;

/// Everything the child needs, as C data made before the clone: between the clone and
/// the exec the child may not allocate (it shares the daemon's heap and locks).
pub(super) struct Spec<'a> {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: Option<CString>,
    sandbox: Option<&'a Confinement>,
    /// The job cgroup's `cgroup.procs`, which the child joins first (see `cgroup.rs`).
    cgroup: Option<&'a CStr>,
}

impl<'a> Spec<'a> {
    /// `program` is executed as given (after the change to `cwd`); it is never looked up
    /// on `PATH`, which the adapters resolved already.
    pub(super) fn new(
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&Path>,
        sandbox: Option<&'a Confinement>,
        cgroup: Option<&'a CStr>,
    ) -> std::io::Result<Self> {
        let c = |bytes: &[u8]| {
            CString::new(bytes).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a NUL byte in the program, an argument or the environment",
                )
            })
        };
        let program = c(program.as_os_str().as_bytes())?;
        let mut argv = vec![program.clone()];
        for a in args {
            argv.push(c(a.as_bytes())?);
        }
        let envp = env
            .iter()
            .map(|(k, v)| c(format!("{k}={v}").as_bytes()))
            .collect::<Result<_, _>>()?;
        let cwd = cwd.map(|d| c(d.as_os_str().as_bytes())).transpose()?;
        Ok(Self {
            program,
            argv,
            envp,
            cwd,
            sandbox,
            cgroup,
        })
    }

    /// Starts the child with `stdio` as its descriptors 0, 1 and 2, leading a new process
    /// group, killed when the spawning thread ends (PR_SET_PDEATHSIG), in the job cgroup
    /// where there is one, confined when the spec says so. Returns once it has exec'd, or with the error that stopped it.
    pub(super) fn spawn(&self, stdio: [&OwnedFd; 3]) -> std::io::Result<Child> {
        // A source among 0, 1 and 2 (a daemon started with one closed) would be
        // overwritten by an earlier dup2; a clone of it lands at 3 or above.
        let mut moved = Vec::new();
        let mut fds = [0; 3];
        for (slot, fd) in fds.iter_mut().zip(stdio) {
            *slot = if fd.as_raw_fd() < 3 {
                let high = fd.try_clone()?;
                let raw = high.as_raw_fd();
                moved.push(high);
                raw
            } else {
                fd.as_raw_fd()
            };
        }
        let (argv, envp) = (null_terminated(&self.argv), null_terminated(&self.envp));
        let args = ChildArgs {
            program: self.program.as_ptr(),
            argv: argv.as_ptr(),
            envp: envp.as_ptr(),
            cwd: self.cwd.as_ref().map_or(std::ptr::null(), |d| d.as_ptr()),
            stdio: fds,
            sandbox: self.sandbox,
            cgroup: self.cgroup.map_or(std::ptr::null(), CStr::as_ptr),
            error: AtomicI32::new(0),
        };
        let mut stack = vec![0u8; CHILD_STACK];
        // SAFETY: the stack grows down from its (16-byte aligned) top; the buffer outlives
        // the child's use of it, which ends at its exec or exit, before clone returns.
        let top = unsafe { stack.as_mut_ptr().add(CHILD_STACK) };
        let top = (top as usize & !15) as *mut c_void;
        // Every signal stays blocked across the clone: a handler of the daemon's must not
        // run in the child, which shares the daemon's memory until it execs.
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        let mut saved: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: plain signal-mask calls on sets owned here; the clone's child only runs
        // `child_main` on `args`, which lives until clone returns (CLONE_VFORK suspends
        // this thread until the child execs or exits).
        let pid = unsafe {
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut saved);
            let pid = libc::clone(
                child_main,
                top,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                &raw const args as *mut c_void,
            );
            let err = std::io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &saved, std::ptr::null_mut());
            if pid < 0 {
                return Err(err);
            }
            pid
        };
        drop((stack, moved));
        let child_err = args.error.load(Ordering::Acquire);
        if child_err != 0 {
            // It exited without exec'ing: reap it.
            let mut status = 0;
            // SAFETY: waitpid on our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            return Err(std::io::Error::from_raw_os_error(child_err));
        }
        Child::adopt(pid)
    }
}

/// The pointers of `strings` and a null after them, as execve takes its lists.
fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain([std::ptr::null()])
        .collect()
}

/// What `child_main` reads, by raw pointer, from the spawning thread's frame.
struct ChildArgs<'a> {
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    stdio: [RawFd; 3],
    sandbox: Option<&'a Confinement>,
    cgroup: *const libc::c_char,
    /// The errno of the step that failed; 0 while none did.
    error: AtomicI32,
}

/// The child between clone and exec: only raw syscalls on prepared memory.
extern "C" fn child_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the spawning thread's `ChildArgs`, alive and unmoved while this
    // runs; every call below is async-signal-safe and allocates nothing.
    unsafe {
        let a = &*(arg as *const ChildArgs<'_>);
        let fail = |errno: i32| -> c_int {
            a.error.store(errno.max(1), Ordering::Release);
            libc::_exit(127)
        };
        let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        // The daemon's handlers mean nothing to the child, and Rust's ignored SIGPIPE
        // must not be inherited across the exec (what the standard library's spawn does).
        for sig in 1..=libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            let ignored_pipe = sig == libc::SIGPIPE && old.sa_sigaction == libc::SIG_IGN;
            if old.sa_sigaction != libc::SIG_DFL
                && (old.sa_sigaction != libc::SIG_IGN || ignored_pipe)
            {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        if libc::setpgid(0, 0) != 0 || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return fail(errno());
        }
        // Into the job cgroup before anything else can start: what it starts stays there.
        // Best effort: without it the guard still kills the process group.
        if !a.cgroup.is_null() {
            let fd = libc::open(a.cgroup, libc::O_WRONLY | libc::O_CLOEXEC);
            if fd >= 0 {
                libc::write(fd, c"0".as_ptr().cast(), 1);
                libc::close(fd);
            }
        }
        // Every source is 3 or above (see `spawn`), so none is overwritten here.
        for (target, &fd) in a.stdio.iter().enumerate() {
            if libc::dup2(fd, target as RawFd) < 0 {
                return fail(errno());
            }
        }
        // The mount view first: the working directory must be taken inside it.
        let layered = a.sandbox.is_some_and(|c| c.enter_view());
        if !a.cwd.is_null() && libc::chdir(a.cwd) != 0 {
            return fail(errno());
        }
        if let Some(confinement) = a.sandbox
            && let Err(e) = confinement.restrict(layered)
        {
            return fail(e.raw_os_error().unwrap_or(libc::EPERM));
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(a.program, a.argv, a.envp);
        fail(errno())
    }
}

/// A running child of ours, waited for through its pidfd; killed (and reaped) when
/// dropped before it was waited for.
pub(super) struct Child {
    pid: i32,
    pidfd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
}

impl Child {
    fn adopt(pid: i32) -> std::io::Result<Self> {
        // SAFETY: pidfd_open on our own unreaped child: the pid cannot have been reused.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let pidfd = if fd < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            // SAFETY: a new descriptor that nothing else owns, which the AsyncFd owns
            // (and keeps open) from here on.
            unsafe {
                AsyncFd::register_with_interest(
                    OwnedFd::from_raw_fd(fd as RawFd),
                    tokio::io::Interest::READABLE,
                )
            }
            .map_err(std::io::Error::from)
        };
        match pidfd {
            Ok(pidfd) => Ok(Self {
                pid,
                pidfd,
                status: None,
            }),
            Err(e) => {
                // Unwatchable: it must not run on.
                reap_killed(pid);
                Err(e)
            }
        }
    }

    pub(super) fn id(&self) -> i32 {
        self.pid
    }

    /// Waits for the child to exit (its pidfd turns readable) and reaps it.
    pub(super) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        loop {
            if let Some(status) = reap(self.pid, &mut self.status)? {
                return Ok(status);
            }
            let mut ready = self.pidfd.readable().await?;
            if reap(self.pid, &mut self.status)?.is_none() {
                ready.clear_ready();
            }
        }
    }
}

/// The exit status of our child `pid` once it has exited, reaping it the first time.
fn reap(pid: i32, status: &mut Option<ExitStatus>) -> std::io::Result<Option<ExitStatus>> {
    if status.is_some() {
        return Ok(*status);
    }
    let mut raw = 0;
    // SAFETY: waitpid on our own child, without blocking.
    match unsafe { libc::waitpid(pid, &mut raw, libc::WNOHANG) } {
        0 => Ok(None),
        -1 => {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                Ok(None)
            } else {
                Err(e)
            }
        }
        _ => {
            *status = Some(ExitStatus::from_raw(raw));
            Ok(*status)
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_none() {
            reap_killed(self.pid);
        }
    }
}

/// SIGKILLs our child `pid` now and reaps it, off the async threads when there are any.
fn reap_killed(pid: i32) {
    // SAFETY: kill on our own, not yet reaped, child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let reap = move || {
        let mut raw = 0;
        // SAFETY: waitpid on our own, not yet reaped, child.
        unsafe { libc::waitpid(pid, &mut raw, 0) };
    };
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(reap)),
        Err(_) => reap(),
    }
}
