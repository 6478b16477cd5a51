//! The `events` log: every state change appends one row in the same transaction.
//!
//! Owns appending and the cheap "what changed since event N" read that the control room
//! and `job events --follow` use.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::Result;
use super::row::row_columns;
use super::tx::{Row, Tx, params};
use crate::clock::Millis;
use crate::domain::EventKind;

/// `EventKind::DelegationPreflightFailed`, the only kind the log is ever searched by, so
/// the only one its kind index holds, as the literal the vocabulary crate spells it with
/// for SQL: the index's definition and the statements that search for it name it inline
/// (a bound kind could not use that partial index).
macro_rules! preflight_kind {
    () => {
        gitmoot_types::preflight_failed_kind!()
    };
}

/// What to append; `data` is stored as JSON when present.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    pub ts_ms: Millis,
    pub root_id: Option<&'a str>,
    pub job_id: Option<&'a str>,
    pub kind: EventKind,
    pub message: String,
    pub data: Option<Value>,
}

impl<'a> NewEvent<'a> {
    /// An event of one job, filed under its tree so the tree's log shows it too.
    pub fn job(ts_ms: Millis, root_id: &'a str, job_id: &'a str, kind: EventKind) -> Self {
        Self {
            root_id: Some(root_id),
            job_id: Some(job_id),
            ..Self::unrooted(ts_ms, kind)
        }
    }

    /// An event that belongs to no job tree (chat threads, memory).
    pub fn unrooted(ts_ms: Millis, kind: EventKind) -> Self {
        Self {
            ts_ms,
            root_id: None,
            job_id: None,
            kind,
            message: String::new(),
            data: None,
        }
    }

    pub fn message(self, message: String) -> Self {
        Self { message, ..self }
    }

    pub fn data(self, data: Value) -> Self {
        Self {
            data: Some(data),
            ..self
        }
    }
}

/// One stored event. `kind` is the text as stored, so a kind this build does not know
/// (an older or newer store) still reads and shows; `is` compares against a known one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub id: i64,
    #[serde(rename = "ts")]
    pub ts_ms: Millis,
    #[serde(skip_serializing)]
    pub root_id: Option<String>,
    pub job_id: Option<String>,
    pub kind: String,
    pub message: String,
    pub data: Option<Value>,
}

impl Event {
    pub fn is(&self, kind: EventKind) -> bool {
        self.kind == kind.as_str()
    }
}

pub fn append<'a>(tx: impl Into<Tx<'a>>, e: NewEvent<'_>) -> Result<i64> {
    let tx = tx.into();
    if let Some(root) = e.root_id {
        tx.in_tree(root)?;
    }
    tx.one(
        "INSERT INTO events(ts_ms, root_id, job_id, kind, message, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         RETURNING id",
        params![
            e.ts_ms,
            e.root_id,
            e.job_id,
            e.kind.as_str(),
            e.message,
            e.data.map(|d| d.to_string())
        ],
    )
}

row_columns! {
    pub(crate) const COLS;
    pub(crate) fn map -> Event {
        id,
        ts_ms,
        root_id,
        job_id,
        kind,
        message,
        data: Row::json,
    }
}

/// The newest event id, or 0 on an empty log.
pub fn last_id<'a>(tx: impl Into<Tx<'a>>) -> Result<i64> {
    tx.into()
        .one("SELECT COALESCE(MAX(id), 0) FROM events", params![])
}

/// Events after `cursor`, oldest first, at most `limit`.
pub fn since<'a>(tx: impl Into<Tx<'a>>, cursor: i64, limit: usize) -> Result<Vec<Event>> {
    tx.into().query_map(
        &format!("SELECT {COLS} FROM events WHERE id > ?1 ORDER BY id LIMIT ?2"),
        params![cursor, limit],
        map,
    )
}

/// Events of one job, or of a whole tree when `id` is a root, oldest first, after `cursor`.
pub fn for_job_or_root<'a>(tx: impl Into<Tx<'a>>, id: &str, cursor: i64) -> Result<Vec<Event>> {
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM events
             WHERE root_id = (SELECT root_id FROM jobs WHERE id = ?1) AND (job_id = ?1 OR root_id = ?1)
               AND id > ?2 ORDER BY id"
        ),
        params![id, cursor],
        map,
    )
}

/// The newest preflight refusal of each coordinator, by job id.
pub fn latest_preflight_by_job<'a>(tx: impl Into<Tx<'a>>) -> Result<HashMap<String, String>> {
    Ok(tx
        .into()
        .query_map(
            concat!(
                "SELECT job_id, message FROM events WHERE id IN
                   (SELECT MAX(id) FROM events WHERE kind = '",
                preflight_kind!(),
                "' AND job_id IS NOT NULL GROUP BY job_id)"
            ),
            params![],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .into_iter()
        .collect())
}

/// How many preflight refusals the log holds.
pub fn count_preflight<'a>(tx: impl Into<Tx<'a>>) -> Result<u64> {
    tx.into().one(
        concat!(
            "SELECT COUNT(*) FROM events WHERE kind = '",
            preflight_kind!(),
            "'"
        ),
        params![],
    )
}

/// Events of one job only, found through its tree's index.
pub fn for_job<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Vec<Event>> {
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM events
             WHERE root_id = (SELECT root_id FROM jobs WHERE id = ?1) AND job_id = ?1 ORDER BY id"
        ),
        params![job_id],
        map,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_indexed_kind_is_the_variant_s_spelling() {
        assert_eq!(
            preflight_kind!(),
            EventKind::DelegationPreflightFailed.as_str()
        );
    }
}
