//! `daemon status`: the small status file the daemon refreshes each tick
//! (`<home>/daemon-status.json`) and the report built from it, the lock and the store.
//!
//! Owns the file's shape and the report; the pool only calls `write` and `remove`.

use crate::store::Tx;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::clock::Millis;
use crate::domain::JobState;
use crate::home::Home;
use crate::store::{StoreError, daemons, events, jobs};

/// What the running daemon says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusFile {
    pub pid: u32,
    pub started_ms: Millis,
    pub parallel: usize,
    pub last_tick_ms: Millis,
    pub running: Vec<RunningJob>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunningJob {
    pub id: String,
    pub agent: String,
    pub started_ms: Millis,
}

pub fn path(home: &Home) -> PathBuf {
    home.root().join("daemon-status.json")
}

/// Replaces the file atomically so readers never see half of it. The file names the jobs
/// and agents at work, so it is the owner's alone (0600) whatever the umask; the mode is
/// set on the open temporary too, as one left by an older daemon keeps its own.
pub fn write(path: &Path, s: &StatusFile) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(&serde_json::to_vec(s)?)?;
    drop(file);
    std::fs::rename(tmp, path)
}

pub fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// The running daemon's last heartbeat (its status file's tick), if it wrote one.
pub(crate) fn last_tick_ms(home: &Home) -> Option<Millis> {
    read(&path(home)).map(|f| f.last_tick_ms)
}

fn read(path: &Path) -> Option<StatusFile> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// The `daemon status` report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DaemonStatus {
    pub running: bool,
    pub pid: Option<u32>,
    pub uptime_ms: Option<i64>,
    pub parallel: Option<usize>,
    pub last_tick_ms: Option<Millis>,
    pub running_jobs: u64,
    pub queued_jobs: u64,
    /// Coordinator rounds whose delegation set was refused whole by the preflight.
    pub delegation_preflight_failures: u64,
    pub jobs: Vec<StatusJob>,
    /// Every daemon whose lease in the store's `daemons` table is current, newest first.
    pub daemons: Vec<LiveDaemon>,
    /// The pid of a `job run --wait` that holds the home to run its own tree: it is not a
    /// daemon (`running` is false), and no daemon can start beside it until it ends.
    pub waiter_pid: Option<u32>,
}

/// One live daemon of the `daemons` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveDaemon {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub parallel: i64,
    pub labels: Vec<String>,
    pub running_jobs: usize,
    pub heartbeat_ms: Millis,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusJob {
    pub id: String,
    pub agent: String,
    pub age_ms: i64,
}

/// Builds the report: the lock says whether a daemon runs, the file what it is doing,
/// the store the live counts.
pub fn report(
    home: &Home,
    conn: &Tx<'_>,
    now: Millis,
    lease_ms: Millis,
) -> Result<DaemonStatus, StoreError> {
    let mut live = Vec::new();
    let mut waiters = Vec::new();
    for d in daemons::unstopped(conn, Some(now - lease_ms))? {
        if d.is_waiter() {
            waiters.push(d);
            continue;
        }
        live.push(LiveDaemon {
            running_jobs: daemons::running_jobs(conn, &d.id)?.len(),
            id: d.id,
            host: d.host,
            pid: d.pid,
            parallel: d.parallel,
            labels: d.labels,
            heartbeat_ms: d.heartbeat_ms,
        });
    }
    // The lock of a SQLite store may be held by a daemon of another home (`--store`):
    // what it is doing is in that home's status file.
    let holder = super::lock::holder_home(&super::lock::path_for(home));
    let holder_pid: Option<u32> = holder.as_ref().and_then(|(p, _)| p.trim().parse().ok());
    let host = super::lease::hostname();
    let waiter_pid =
        holder_pid.filter(|p| waiters.iter().any(|w| w.pid == *p as i64 && w.host == host));
    let (holder, holder_pid) = match waiter_pid {
        Some(_) => (None, None),
        None => (holder, holder_pid),
    };
    let file = holder
        .as_ref()
        .and_then(|(_, h)| read(&path(&Home::resolve(Some(Path::new(h))).ok()?)));
    Ok(DaemonStatus {
        waiter_pid,
        running: holder.is_some(),
        pid: holder_pid,
        uptime_ms: file.as_ref().map(|f| now - f.started_ms),
        parallel: file.as_ref().map(|f| f.parallel),
        last_tick_ms: file.as_ref().map(|f| f.last_tick_ms),
        running_jobs: jobs::count_state(conn, JobState::Running)?,
        queued_jobs: jobs::count_state(conn, JobState::Queued)?,
        delegation_preflight_failures: events::count_preflight(conn)?,
        jobs: file
            .map(|f| f.running)
            .unwrap_or_default()
            .into_iter()
            .map(|j| StatusJob {
                age_ms: now - j.started_ms,
                id: j.id,
                agent: j.agent,
            })
            .collect(),
        daemons: live,
    })
}
