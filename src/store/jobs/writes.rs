//! Writes of the `jobs` table: the one path that writes a whole row (`put`, `put_over`)
//! and the quarantine of a row that no longer decodes.
//!
//! Must not decide what a job's state means; the engine does.

use super::super::Result;
use super::super::tx::{Tx, params};
use super::{Job, Unreadable, get};
use crate::clock::Millis;

/// Marks an undecodable job failed with the decode error, keeping the corrupt value in
/// an event: the corrupt JSON column is cleared so the row reads again, and a root's run
/// fails with it. Returns whether the row now decodes (so the engine can settle it).
pub fn quarantine<'a>(tx: impl Into<Tx<'a>>, u: &Unreadable, now: Millis) -> Result<bool> {
    let conn = tx.into();
    let raw: Option<String> = conn
        .query_opt(
            &format!("SELECT CAST({} AS TEXT) FROM jobs WHERE id = ?1", u.column),
            params![u.id],
            |r| r.get(0),
        )?
        .flatten();
    let reason = format!("quarantined: {u}");
    conn.execute(
        "UPDATE jobs SET
            ephemeral = CASE WHEN json_valid(ephemeral) THEN ephemeral END,
            result = CASE WHEN json_valid(result) THEN result END,
            carry = CASE WHEN json_valid(carry) THEN carry END,
            state = CASE WHEN state IN ('queued', 'running', 'succeeded', 'failed', 'blocked', 'cancelled', 'interrupted')
                THEN state ELSE 'failed' END,
            error = ?2, updated_ms = ?3
         WHERE id = ?1",
        params![u.id, reason, now],
    )?;
    let root: Option<String> = conn.query_opt(
        "SELECT root_id FROM jobs WHERE id = ?1",
        params![u.id],
        |r| r.get(0),
    )?;
    crate::store::events::append(
        conn,
        crate::store::events::NewEvent {
            ts_ms: now,
            root_id: root.as_deref(),
            job_id: Some(&u.id),
            kind: crate::domain::EventKind::JobQuarantined,
            message: reason.clone(),
            data: Some(serde_json::json!({"column": u.column, "raw": raw})),
        },
    )?;
    if get(conn, &u.id).is_ok() {
        return Ok(true);
    }
    // Still undecodable (a corrupt kind or action): fail it by hand, and its run if a root.
    conn.execute(
        "UPDATE jobs SET state = 'failed', finished_ms = ?2 WHERE id = ?1",
        params![u.id, now],
    )?;
    conn.execute(
        "UPDATE runs SET state = 'failed', finished_ms = ?2, updated_ms = ?2
         WHERE root_id = ?1 AND root_id IN (SELECT root_id FROM jobs WHERE id = ?1 AND root_id = id)",
        params![u.id, now],
    )?;
    Ok(false)
}

/// Writes the whole row, new or existing; the single write path for job rows. Through
/// `write_changed`, a claim or a settlement touches only the indexes over `state` and
/// `updated_ms` (naming `root_id` or `parent_id` would rewrite all ten, for the
/// self-referencing foreign key).
pub fn put<'a>(tx: impl Into<Tx<'a>>, j: &Job) -> Result<()> {
    let tx = tx.into();
    tx.in_tree(&j.root_id)?;
    crate::store::put_row(tx, j)
}

/// `put` of `after` over the row the caller read as `before` in this transaction and has
/// not written since (see `write_changes_from`).
pub fn put_over<'a>(tx: impl Into<Tx<'a>>, before: &Job, after: &Job) -> Result<()> {
    let tx = tx.into();
    tx.in_tree(&after.root_id)?;
    crate::store::put_row_over(tx, before, after)
}
