//! What this host says about a process id: whether it still names a live process, and
//! when that process started (so a reused id is told from the process it named); and the
//! host's own name, which with a process id says where that process ran.
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

/// When the live process `pid` started, in clock ticks since boot (`/proc/PID/stat`'s
/// field 22): with its id, what names one process for as long as the host runs.
pub fn started(pid: i32) -> Option<i64> {
    if pid <= 0 {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // Fields from the state (field 3) on; the start time is field 22.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process `pid` that started at `started` still runs.
pub fn still_runs(pid: i32, started: i64) -> bool {
    is_alive(pid) && self::started(pid) == Some(started)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_named_by_its_id_and_start_time() {
        let me = std::process::id() as i32;
        let at = started(me).expect("our own start time");
        assert!(still_runs(me, at));
        assert!(
            !still_runs(me, at + 1),
            "a reused id is taken for the process"
        );
        assert_eq!(started(0), None);
    }
}
