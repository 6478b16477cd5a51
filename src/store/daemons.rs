//! The daemon registry (`daemons`): every daemon that has served this store, with its
//! host, pid, slots, host labels and heartbeat. A daemon is live while its heartbeat is
//! younger than the lease; the `running` jobs it claimed (`jobs.daemon_id`) are recovered by
//! another daemon once it is not. Also the queue page daemons claim from. Rows and queries
//! only: when to beat, sweep or recover is decided in `crate::daemon::registry`.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use super::Result;
use crate::clock::Millis;

/// The registry and the two job columns that tie a job to a daemon and to a host label.
pub(super) const SCHEMA: &str = "
CREATE TABLE daemons (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    parallel     INTEGER NOT NULL,
    labels       TEXT NOT NULL DEFAULT '',
    started_ms   INTEGER NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    stopped_ms   INTEGER
);
CREATE INDEX daemons_live ON daemons(heartbeat_ms) WHERE stopped_ms IS NULL;
ALTER TABLE jobs ADD COLUMN daemon_id TEXT;
ALTER TABLE jobs ADD COLUMN on_label TEXT;
";

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

const COLS: &str = "id, host, pid, parallel, labels, started_ms, heartbeat_ms, stopped_ms";

fn row(r: &Row<'_>) -> rusqlite::Result<DaemonRow> {
    let labels: String = r.get(4)?;
    Ok(DaemonRow {
        id: r.get(0)?,
        host: r.get(1)?,
        pid: r.get(2)?,
        parallel: r.get(3)?,
        labels: labels
            .split(',')
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        started_ms: r.get(5)?,
        heartbeat_ms: r.get(6)?,
        stopped_ms: r.get(7)?,
    })
}

pub fn register(conn: &Connection, d: &DaemonRow) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO daemons({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    ))?
    .execute(params![
        d.id,
        d.host,
        d.pid,
        d.parallel,
        d.labels.join(","),
        d.started_ms,
        d.heartbeat_ms,
        d.stopped_ms
    ])?;
    Ok(())
}

/// Renews `id`'s lease. `false` when it was declared stopped meanwhile (another daemon
/// took its jobs over): it must not run them on.
pub fn beat(conn: &Connection, id: &str, now: Millis) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "UPDATE daemons SET heartbeat_ms = ?2 WHERE id = ?1 AND stopped_ms IS NULL",
        )?
        .execute(params![id, now])?
        == 1)
}

/// Marks `id` stopped: a clean exit, or a takeover of a daemon known to be dead.
pub fn stop(conn: &Connection, id: &str, now: Millis) -> Result<()> {
    conn.prepare_cached("UPDATE daemons SET stopped_ms = ?2 WHERE id = ?1 AND stopped_ms IS NULL")?
        .execute(params![id, now])?;
    Ok(())
}

/// Declares `id` dead if its lease ran out before `expired_before`, as one compare-and-swap:
/// of several daemons sweeping at once exactly one gets `true` and recovers its jobs.
pub fn take_over(conn: &Connection, id: &str, expired_before: Millis, now: Millis) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "UPDATE daemons SET stopped_ms = ?3
             WHERE id = ?1 AND stopped_ms IS NULL AND heartbeat_ms < ?2",
        )?
        .execute(params![id, expired_before, now])?
        == 1)
}

/// Daemons not stopped, newest first; with `beat_since`, only those whose heartbeat is at
/// least that recent (the live ones), else every unstopped one.
pub fn unstopped(conn: &Connection, beat_since: Option<Millis>) -> Result<Vec<DaemonRow>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM daemons WHERE stopped_ms IS NULL AND heartbeat_ms >= ?1
         ORDER BY started_ms DESC, id"
    ))?;
    Ok(st
        .query_map([beat_since.unwrap_or(i64::MIN)], row)?
        .collect::<rusqlite::Result<_>>()?)
}

/// Unstopped daemons whose heartbeat is older than `expired_before`.
pub fn expired(conn: &Connection, expired_before: Millis) -> Result<Vec<DaemonRow>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM daemons WHERE stopped_ms IS NULL AND heartbeat_ms < ?1 ORDER BY id"
    ))?;
    Ok(st
        .query_map([expired_before], row)?
        .collect::<rusqlite::Result<_>>()?)
}

pub fn get(conn: &Connection, id: &str) -> Result<Option<DaemonRow>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLS} FROM daemons WHERE id = ?1"))?
        .query_row([id], row)
        .optional()?)
}

/// The running jobs claimed by `daemon_id`.
pub fn running_jobs(conn: &Connection, daemon_id: &str) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(
        "SELECT id FROM jobs WHERE state = 'running' AND daemon_id = ?1 ORDER BY created_ms, id",
    )?;
    Ok(st
        .query_map([daemon_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Up to `n` queued jobs after the first `offset`, oldest first, of one tree or all, each
/// with its host label: the page a daemon claims from.
pub fn queued_page(
    conn: &Connection,
    only_root: Option<&str>,
    offset: usize,
    n: usize,
) -> Result<Vec<(String, Option<String>)>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, on_label FROM jobs WHERE state = 'queued' AND (?3 IS NULL OR root_id = ?3) \
             ORDER BY created_ms, rowid LIMIT ?1 OFFSET ?2",
        )?
        .query_map(params![n as i64, offset as i64, only_root], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?)
}
