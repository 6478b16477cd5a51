//! The daemon registry (`daemons`): every daemon that has served this store, with its
//! host, pid, slots, host labels and heartbeat. A daemon is live while its heartbeat is
//! younger than the lease; the `running` jobs it claimed (`jobs.daemon_id`) are recovered by
//! another daemon once it is not. Also the queue page daemons claim from. Rows and queries
//! only: when to beat, sweep or recover is decided in `crate::daemon::lease`.

use serde::Serialize;

use super::Result;
use super::row::row_columns;
use super::tx::{Row, Tx, params};
use crate::clock::Millis;

/// One registered daemon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DaemonRow {
    pub id: String,
    pub host: String,
    pub pid: i64,
    pub parallel: i64,
    /// The host labels it claims pinned jobs for (`daemon run --labels`).
    pub labels: Vec<String>,
    pub started_ms: Millis,
    pub heartbeat_ms: Millis,
    pub stopped_ms: Option<Millis>,
}

row_columns! {
    const COLS;
    fn row -> DaemonRow {
        id,
        host,
        pid,
        parallel,
        labels: comma_list,
        started_ms,
        heartbeat_ms,
        stopped_ms,
    }
}

/// A list stored comma-separated (the host labels).
fn comma_list(r: &Row<'_>, index: usize) -> Result<Vec<String>> {
    let labels: String = r.get(index)?;
    Ok(labels
        .split(',')
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// The id prefix of a `job run --wait` waiter's row: it registers so its running jobs are
/// recovered like any daemon's once its lease lapses, but it runs one tree and is no daemon.
const WAITER: &str = "w-";

/// A fresh registration id: `d-…` for a daemon, `w-…` for a waiter.
pub fn new_id(waiter: bool) -> String {
    let prefix = if waiter { WAITER } else { "d-" };
    format!("{prefix}{}", crate::ids::random_hex(6))
}

impl DaemonRow {
    /// A `job run --wait` process, not a daemon: never listed or counted as one.
    pub fn is_waiter(&self) -> bool {
        self.id.starts_with(WAITER)
    }
}

pub fn register<'a>(tx: impl Into<Tx<'a>>, d: &DaemonRow) -> Result<()> {
    tx.into().execute(
        &format!("INSERT INTO daemons({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
        params![
            d.id,
            d.host,
            d.pid,
            d.parallel,
            d.labels.join(","),
            d.started_ms,
            d.heartbeat_ms,
            d.stopped_ms
        ],
    )?;
    Ok(())
}

/// Renews `id`'s lease. `false` when it was declared stopped meanwhile (another daemon
/// took its jobs over): it must not run them on.
pub fn beat<'a>(tx: impl Into<Tx<'a>>, id: &str, now: Millis) -> Result<bool> {
    Ok(tx.into().execute(
        "UPDATE daemons SET heartbeat_ms = ?2 WHERE id = ?1 AND stopped_ms IS NULL",
        params![id, now],
    )? == 1)
}

/// Marks `id` stopped: a clean exit, or a takeover of a daemon known to be dead.
pub fn stop<'a>(tx: impl Into<Tx<'a>>, id: &str, now: Millis) -> Result<()> {
    tx.into().execute(
        "UPDATE daemons SET stopped_ms = ?2 WHERE id = ?1 AND stopped_ms IS NULL",
        params![id, now],
    )?;
    Ok(())
}

/// Declares `id` dead if its lease ran out before `expired_before`, as one compare-and-swap:
/// of several daemons sweeping at once exactly one gets `true` and recovers its jobs.
pub fn take_over<'a>(
    tx: impl Into<Tx<'a>>,
    id: &str,
    expired_before: Millis,
    now: Millis,
) -> Result<bool> {
    Ok(tx.into().execute(
        "UPDATE daemons SET stopped_ms = ?3
         WHERE id = ?1 AND stopped_ms IS NULL AND heartbeat_ms < ?2",
        params![id, expired_before, now],
    )? == 1)
}

/// Daemons not stopped, newest first; with `beat_since`, only those whose heartbeat is at
/// least that recent (the live ones), else every unstopped one.
pub fn unstopped<'a>(tx: impl Into<Tx<'a>>, beat_since: Option<Millis>) -> Result<Vec<DaemonRow>> {
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM daemons WHERE stopped_ms IS NULL AND heartbeat_ms >= ?1
             ORDER BY started_ms DESC, id"
        ),
        params![beat_since.unwrap_or(i64::MIN)],
        row,
    )
}

/// Unstopped daemons whose heartbeat is older than `expired_before`.
pub fn expired<'a>(tx: impl Into<Tx<'a>>, expired_before: Millis) -> Result<Vec<DaemonRow>> {
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM daemons WHERE stopped_ms IS NULL AND heartbeat_ms < ?1 ORDER BY id"
        ),
        params![expired_before],
        row,
    )
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, id: &str) -> Result<Option<DaemonRow>> {
    tx.into().query_opt(
        &format!("SELECT {COLS} FROM daemons WHERE id = ?1"),
        params![id],
        row,
    )
}

/// The running jobs claimed by `daemon_id`.
pub fn running_jobs<'a>(tx: impl Into<Tx<'a>>, daemon_id: &str) -> Result<Vec<String>> {
    tx.into().query_map(
        "SELECT id FROM jobs WHERE state = 'running' AND daemon_id = ?1 ORDER BY created_ms, id",
        params![daemon_id],
        |r| r.get(0),
    )
}

/// Running jobs whose daemon is unknown or stopped before `stopped_before` (it deregistered
/// with the job still `running`), each with that daemon's id: nobody's lease covers them. A
/// daemon stopped since is left alone: a takeover stops it first and then recovers its
/// jobs one by one, and those are the takeover's.
pub fn orphaned_running<'a>(
    tx: impl Into<Tx<'a>>,
    stopped_before: Millis,
) -> Result<Vec<(String, String)>> {
    tx.into().query_map(
        "SELECT j.id, j.daemon_id FROM jobs j WHERE j.state = 'running' AND j.daemon_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM daemons d WHERE d.id = j.daemon_id
                         AND (d.stopped_ms IS NULL OR d.stopped_ms >= ?1))
         ORDER BY j.created_ms, j.id",
        params![stopped_before],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// A queued job pinned to a host label (`job run --on`): its id, agent and label.
#[derive(Debug, Clone, PartialEq)]
pub struct Pinned {
    pub id: String,
    pub agent: String,
    pub label: String,
}

/// Every queued job pinned to a host label, oldest first.
pub fn queued_pinned<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<Pinned>> {
    tx.into().query_map(
        "SELECT id, agent, on_label FROM jobs WHERE state = 'queued' AND on_label IS NOT NULL \
         ORDER BY created_ms, rowid",
        params![],
        |r| {
            Ok(Pinned {
                id: r.get(0)?,
                agent: r.get(1)?,
                label: r.get(2)?,
            })
        },
    )
}

/// A queued job as the claim first sees it: enough to take its tree's lock before reading
/// the job itself.
#[derive(Debug, Clone)]
pub struct Queued {
    pub id: String,
    pub root_id: String,
    pub on_label: Option<String>,
}

/// Up to `n` queued jobs after the first `offset`, oldest first, of one tree or all, each
/// with its tree and host label: the page a daemon claims from.
pub fn queued_page<'a>(
    tx: impl Into<Tx<'a>>,
    only_root: Option<&str>,
    offset: usize,
    n: usize,
) -> Result<Vec<Queued>> {
    // `root_id = ?3` before `?3 IS NULL`: PostgreSQL types a parameter at its first use.
    tx.into().query_map(
        "SELECT id, root_id, on_label FROM jobs WHERE state = 'queued' AND (root_id = ?3 OR ?3 IS NULL) \
         ORDER BY created_ms, rowid LIMIT ?1 OFFSET ?2",
        params![n, offset, only_root],
        |r| {
            Ok(Queued {
                id: r.get(0)?,
                root_id: r.get(1)?,
                on_label: r.get(2)?,
            })
        },
    )
}
