//! What this host says about a process id: whether it still names a live process; and
//! the host's own name, which with a process id says where that process ran.
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

/// This host's name (`localhost` when it has none).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into our buffer.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(name) if ok && !name.is_empty() => name.to_string(),
        _ => "localhost".to_string(),
    }
}
