//! A job's process group from the outside: the daemon's lifeline pipe its guard waits on,
//! signalling and sweeping the group, and the `/proc` sweep of every process a job marked.
//!
//! Knows nothing of output or of what a job is beyond its marker.

use super::{JOB_MARKER, TERM_GRACE};
use crate::runtime::sandbox::ReadOnly;

/// The daemon's end of the pipe its jobs' guards wait on: nobody ever writes it, so a
/// read returns only once this process is gone and the write end closes with it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lifeline {
    read: i32,
    write: i32,
}

impl Lifeline {
    /// Set-up in a freshly forked child, before exec: the leader dies with the daemon
    /// thread that spawned it, a guard forked into the job's process group kills the group
    /// once the daemon is gone, and the agent is sandboxed last.
    ///
    /// # Safety
    /// Only between fork and exec: it makes only async-signal-safe calls (prctl, fork,
    /// close, read, kill, _exit, the sandbox's syscalls), touching only this child and its
    /// guard.
    pub(super) unsafe fn arm_child(self, sandbox: Option<&ReadOnly>) -> std::io::Result<()> {
        // SAFETY: see the function's contract.
        unsafe {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The guard waits on the daemon's lifeline pipe and, when the daemon is gone
            // (its write end closed, however it died), kills the whole group, so a crashed
            // daemon's agents cannot run on unsupervised. A normal end sweeps the group,
            // guard included.
            match libc::fork() {
                -1 => Err(std::io::Error::last_os_error()),
                0 => {
                    // Keep nothing but the lifeline: a copy of another job's stdin pipe
                    // or of the daemon's lock would hold them open past their owners.
                    let keep = self.read as u32;
                    if keep > 0 {
                        libc::close_range(0, keep - 1, 0);
                    }
                    libc::close_range(keep + 1, u32::MAX, 0);
                    let mut byte = 0u8;
                    while libc::read(self.read, (&raw mut byte).cast(), 1) < 0 {}
                    libc::kill(0, libc::SIGKILL);
                    libc::_exit(0)
                }
                // The guard stays unrestricted; the agent is sandboxed once nothing else
                // of the set-up needs to write.
                _ => match sandbox {
                    Some(ro) => ro.apply(),
                    None => Ok(()),
                },
            }
        }
    }
}

pub(super) fn lifeline() -> std::io::Result<Lifeline> {
    static LIFELINE: std::sync::OnceLock<Lifeline> = std::sync::OnceLock::new();
    if let Some(l) = LIFELINE.get() {
        return Ok(*l);
    }
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors; close-on-exec keeps them out of agents.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let made = Lifeline {
        read: fds[0],
        write: fds[1],
    };
    let kept = *LIFELINE.get_or_init(|| made);
    if kept.read != made.read {
        // Another thread won the race: ours is not needed.
        // SAFETY: descriptors this call just made and nobody else has seen.
        unsafe {
            libc::close(made.read);
            libc::close(made.write);
        }
    }
    Ok(kept)
}

/// Sends `signal` to every process of the group led by `pgid`; a gone group is fine.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid only signals that process group.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Whether `pid` names a live (not zombie) process.
pub fn is_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// SIGTERM to the group, a short grace for the leader, then SIGKILL to the group.
pub(super) async fn terminate_group(pgid: i32, child: &mut tokio::process::Child) {
    signal_group(pgid, libc::SIGTERM);
    if tokio::time::timeout(TERM_GRACE, child.wait())
        .await
        .is_err()
    {
        signal_group(pgid, libc::SIGKILL);
        let _ = child.wait().await;
    }
    signal_group(pgid, libc::SIGKILL);
}

/// SIGKILLs every process whose environment carries `JOB_MARKER=<one of jobs>`: each
/// job's whole descendant tree, including children that left its process group or
/// session. One pass over `/proc` whatever the number of jobs.
pub fn kill_marked(jobs: &[&str]) {
    if jobs.is_empty() {
        return;
    }
    let needles: Vec<String> = jobs.iter().map(|j| format!("{JOB_MARKER}={j}")).collect();
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if pid as u32 == me {
            continue;
        }
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if env
            .split(|b| *b == 0)
            .any(|kv| needles.iter().any(|n| kv == n.as_bytes()))
        {
            // SAFETY: kill(2) on one pid that carries a marker of these jobs.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}
