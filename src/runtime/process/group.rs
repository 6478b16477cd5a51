//! A job's process group from the outside: the guard that kills it once the daemon is
//! gone, signalling and sweeping the group, and the `/proc` sweep of every process a job marked.
//!
//! Knows nothing of output or of what a job is beyond its marker.

use super::{JOB_MARKER, TERM_GRACE};

/// The guard: reads `+ PGID` (a job's group started) and `- PGID` (it ended) until end of
/// input, which comes only once this process is gone (it holds the only write end), and
/// then kills every group still listed, in one call, so the moment between the daemon's
/// death and its agents' is as short as one process can make it. With a job cgroup
/// (`$CG`, see `cgroup.rs`) it kills the whole cgroup first, which holds every process
/// the jobs started, then removes the cgroup once it is empty.
const GUARD_SCRIPT: &str = r#"s=' '
while read -r op g; do
  case $op in
    +) s="$s-$g " ;;
    -) case $s in *" -$g "*) s="${s%% -$g *} ${s#* -$g }" ;; esac ;;
  esac
done
[ -z "$CG" ] || echo 1 > "$CG/cgroup.kill"
[ "$s" = ' ' ] || kill -9 $s
i=0
while [ -n "$CG" ] && [ $i -lt 50 ] && ! rmdir "$CG" 2>/dev/null; do sleep 0.1; i=$((i+1)); done"#;

/// One small `sh` per supervising process that kills its jobs' process groups once it is
/// gone, however it died, so a crashed daemon's agents cannot run on unsupervised.
///
/// One for all jobs rather than one per job: a per-job guard costs a process start of its
/// own, and a guard that is a fork of the daemon shares every daemon page copy-on-write
/// for the job's whole life (each daemon write then copies a page and flushes TLBs on
/// every core) — together most of a trivial job's cost.
pub(super) struct Guard {
    /// The guard's stdin; `None` once it is found dead, until the next job respawns it.
    feed: std::sync::Mutex<Option<std::process::ChildStdin>>,
    /// The cgroup every job's child joins, where the kernel offers one.
    pub(super) cgroup: Option<super::cgroup::JobCgroup>,
}

/// The process's guard, started with the first job.
pub(super) fn guard() -> &'static Guard {
    static GUARD: std::sync::OnceLock<Guard> = std::sync::OnceLock::new();
    GUARD.get_or_init(|| Guard {
        feed: std::sync::Mutex::new(None),
        cgroup: super::cgroup::make(),
    })
}

impl Guard {
    /// From now until [`Guard::release`], the group led by `pgid` dies with this process.
    pub(super) fn watch(&self, pgid: i32) -> std::io::Result<()> {
        let mut feed = self.feed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pipe) = feed.as_mut()
            && Self::send(pipe, '+', pgid).is_ok()
        {
            return Ok(());
        }
        // First job, or the guard was killed: the groups it listed are unguarded now, but
        // each leader still dies with its supervising thread (PR_SET_PDEATHSIG).
        let mut pipe = self.start()?;
        Self::send(&mut pipe, '+', pgid)?;
        *feed = Some(pipe);
        Ok(())
    }

    /// The group led by `pgid` has been swept; the guard forgets it.
    pub(super) fn release(&self, pgid: i32) {
        let mut feed = self.feed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pipe) = feed.as_mut()
            && Self::send(pipe, '-', pgid).is_err()
        {
            *feed = None;
        }
    }

    fn send(pipe: &mut std::process::ChildStdin, op: char, pgid: i32) -> std::io::Result<()> {
        use std::io::Write;
        pipe.write_all(format!("{op} {pgid}\n").as_bytes())
    }

    fn start(&self) -> std::io::Result<std::process::ChildStdin> {
        use std::os::unix::process::CommandExt;
        // Its own group, so a Ctrl-C meant for the daemon's terminal does not take the
        // guard down first; no environment but the cgroup, nothing of the daemon's.
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.env_clear();
        if let Some(cg) = &self.cgroup {
            cmd.env("CG", &cg.dir).env("PATH", "/usr/bin:/bin");
        }
        let mut child = cmd
            .args(["-c", GUARD_SCRIPT])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()?;
        Ok(child.stdin.take().expect("stdin is piped"))
    }
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
