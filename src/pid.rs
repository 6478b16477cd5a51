//! What this host says about a process id: whether it still names a live process.
//!
//! The one question the relay (stale sockets), recovery (orphaned agents) and the runtime's
//! supervision all ask of `/proc`, kept below them so none reaches into another's room to
//! ask it. Must not signal, spawn or know what the process is.

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
