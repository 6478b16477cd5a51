//! A lost daemon of this host whose process is still alive (paused past its lease, or
//! hung): whether its pid is still that daemon, its home (read from the `daemon.lock` it
//! holds open and names itself in), and which of its jobs' agents have ended. A takeover
//! leaves such a job to it rather than run finished work again: the daemon settles it when
//! it wakes (its claim is still the job's), and should it die instead its guard completes
//! the job's stdout record in that home, from which the job is then settled.
//!
//! Owns those readings of `/proc` only; what becomes of a job is `lease`'s and
//! `recovery`'s.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::clock::Millis;

/// Whether the live process `pid` started by `registered_ms`, when the daemon that had
/// this pid registered: a pid recycled after that daemon died started later. (`/proc`
/// gives the boot time in whole seconds, hence the second of slack.)
pub(crate) fn started_by(pid: i32, registered_ms: Millis) -> bool {
    started_ms(pid).is_some_and(|start| start <= registered_ms + 1_000)
}

/// When `pid` started, in milliseconds since the epoch.
fn started_ms(pid: i32) -> Option<Millis> {
    let boot_s: i64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let ticks = crate::pid::started(pid)?;
    // SAFETY: sysconf has no preconditions.
    let per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1);
    Some(boot_s * 1_000 + ticks * 1_000 / per_s)
}

/// The home of the live daemon `pid`, or `None` when `pid` holds no daemon lock naming it
/// (or its descriptors are not ours to read).
pub(crate) fn home_of(pid: i32) -> Option<PathBuf> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    fds.flatten().find_map(|fd| {
        let target = std::fs::read_link(fd.path()).ok()?;
        if target.file_name()? != "daemon.lock" {
            return None;
        }
        let (owner, home) = super::lock::holder_home(&target)?;
        (owner == pid.to_string()).then(|| PathBuf::from(home))
    })
}

/// Those of `jobs` whose agent is still running: a live process carries its marker.
pub(crate) fn still_running(jobs: &[&str]) -> HashSet<String> {
    crate::runtime::process::live_marked(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_live_daemon_is_known_by_its_start_and_its_lock_names_its_home() {
        let me = std::process::id() as i32;
        assert!(started_by(me, crate::clock::now_ms()), "it started by now");
        assert!(!started_by(me, 0), "not by the epoch: a recycled pid");
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("daemon.lock");
        // A stand-in daemon: it holds the lock and names itself and its home in it, as
        // `lock::DaemonLock` does.
        let mut holder = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"printf '%s\n%s\n' $$ "$1" > "$2"; exec 9<"$2"; flock 9; touch "$2.held"; exec sleep 60"#)
            .args(["sh", &dir.path().display().to_string(), &lock.display().to_string()])
            .spawn()
            .unwrap();
        let held = lock.with_extension("lock.held");
        for _ in 0..1_000 {
            if held.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let found = home_of(holder.id() as i32);
        let mut plain = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let none = home_of(plain.id() as i32);
        for child in [&mut holder, &mut plain] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        assert_eq!(found, Some(dir.path().to_path_buf()));
        assert_eq!(none, None, "a process holding no daemon lock");
    }

    #[test]
    fn an_agent_that_exited_unreaped_no_longer_runs() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .env("GITMOOT_JOB_ID", "job-paused-test")
            .process_group(0)
            .spawn()
            .unwrap();
        let jobs = ["job-paused-test", "job-other"];
        // The new program's environment shows in /proc a moment after spawn returns.
        let mut running = HashSet::new();
        for _ in 0..1_000 {
            running = still_running(&jobs);
            if !running.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(running, HashSet::from(["job-paused-test".to_string()]));
        // SAFETY: signalling our own child; it stays a zombie until we wait on it.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let zombie = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
        };
        for _ in 0..1_000 {
            if zombie(child.id()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(zombie(child.id()), "the killed child is a zombie");
        assert!(still_running(&jobs).is_empty(), "a zombie agent has ended");
        child.wait().unwrap();
    }
}
