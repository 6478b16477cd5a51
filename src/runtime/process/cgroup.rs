//! The cgroup that holds every process this process's jobs start, so that nothing they
//! started outlives it: a child joins it before its exec, every descendant (`setsid` and
//! double-forked ones included) stays in it, and the guard (`group.rs`) kills the whole
//! cgroup through `cgroup.kill` the moment this process is gone, however it died.
//!
//! Needs cgroup v2 with `cgroup.kill` (Linux 5.14) and write access to this process's own
//! cgroup (root, or a cgroup delegated to the user, as systemd does for user services);
//! elsewhere there is none and the guard falls back to killing the jobs' process groups.
//! Also removes the cgroups of guards that died with their daemon. Knows nothing of jobs.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const PREFIX: &str = "gitmoot-";

/// This process's job cgroup.
#[derive(Debug)]
pub(super) struct JobCgroup {
    pub(super) dir: PathBuf,
    /// `<dir>/cgroup.procs`, which a child writes `0` to in order to join.
    pub(super) procs: CString,
}

/// Makes this process's job cgroup beneath its own; `None` where the kernel or the
/// permissions do not allow one.
pub(super) fn make() -> Option<JobCgroup> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let parent = mount_point()?.join(own.trim_start_matches('/'));
    sweep_stale(&parent);
    let dir = parent.join(format!(
        "{PREFIX}{}-{}",
        std::process::id(),
        crate::ids::random_hex(4)
    ));
    std::fs::create_dir(&dir).ok()?;
    if !dir.join("cgroup.kill").exists() {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok()?;
    Some(JobCgroup { dir, procs })
}

/// Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup`, or `…/unified` on a
/// hybrid system).
fn mount_point() -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|l| {
        let (mount, fs) = l.split_once(" - ")?;
        (fs.split(' ').next() == Some("cgroup2"))
            .then(|| mount.split(' ').nth(4).map(PathBuf::from))
            .flatten()
    })
}

/// Kills and removes the job cgroups whose owner is gone (its guard died with it).
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{owner}")).exists() {
            continue;
        }
        let dir = entry.path();
        let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        for _ in 0..20 {
            if std::fs::remove_dir(&dir).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
