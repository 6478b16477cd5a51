//! A job's process group from the outside: signalling and sweeping the group, and the
//! `/proc` sweep of every process a job marked (the guard that kills it once the daemon is
//! gone is `guard.rs`).
//!
//! Knows nothing of output or of what a job is beyond its marker.

use super::{JOB_MARKER, TERM_GRACE};

/// Sends `signal` to every process of the group led by `pgid`; a gone group is fine.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid only signals that process group.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// SIGTERM to the group, a short grace for the leader, then SIGKILL to the group.
pub(super) async fn terminate_group(pgid: i32, child: &mut super::spawn::Child) {
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
    for (pid, _) in marked(jobs) {
        // SAFETY: kill(2) on one pid that carries a marker of these jobs.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Those of `jobs` a live process still carries the marker of: its agent, or something
/// the agent left running. A zombie shows no environment, so an agent that exited and was
/// not reaped yet (its daemon is paused) is not counted. One pass over `/proc`.
pub fn live_marked(jobs: &[&str]) -> std::collections::HashSet<String> {
    marked(jobs)
        .into_iter()
        .filter(|(pid, _)| crate::pid::is_alive(*pid))
        .map(|(_, job)| job)
        .collect()
}

/// The processes (other than this one) whose environment carries a marker of `jobs`,
/// each with the job it names.
fn marked(jobs: &[&str]) -> Vec<(i32, String)> {
    if jobs.is_empty() {
        return Vec::new();
    }
    let needles: Vec<String> = jobs.iter().map(|j| format!("{JOB_MARKER}={j}")).collect();
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid as u32 != me)
        .filter_map(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let at = env
                .split(|b| *b == 0)
                .find_map(|kv| needles.iter().position(|n| kv == n.as_bytes()))?;
            Some((pid, jobs[at].to_string()))
        })
        .collect()
}
