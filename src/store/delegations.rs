//! The `delegations` table: the legs of each coordinator batch with their spec and state.
//!
//! Owns the rows only; which leg runs when is the engine's decision.

use serde::Serialize;

use super::tx::{Row, Tx, params};
use super::{Result, StoreError};
use crate::clock::Millis;
use crate::domain::Delegation;

/// Where one leg of a batch stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LegState {
    /// Its deps have not all succeeded yet.
    Waiting,
    /// A job exists for it (`job_id` is the latest attempt).
    Dispatched,
    /// Another leg with the same fingerprint stands in for it (`dedup_of`).
    Deduped,
    /// It will never run (a dep failed, or the tree stopped); `note` says why.
    Skipped,
}

impl LegState {
    fn as_str(self) -> &'static str {
        match self {
            LegState::Waiting => "waiting",
            LegState::Dispatched => "dispatched",
            LegState::Deduped => "deduped",
            LegState::Skipped => "skipped",
        }
    }
    fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "waiting" => LegState::Waiting,
            "dispatched" => LegState::Dispatched,
            "deduped" => LegState::Deduped,
            "skipped" => LegState::Skipped,
            other => {
                return Err(StoreError::Column {
                    index: 5,
                    reason: format!("unknown leg state {other:?}"),
                });
            }
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Leg {
    pub parent_id: String,
    pub delegation_id: String,
    pub root_id: String,
    pub position: u32,
    pub spec: Delegation,
    pub state: LegState,
    pub job_id: Option<String>,
    pub attempts: u32,
    pub dedup_of: Option<String>,
    /// A human resumed past this leg's failure with `continue`.
    pub accepted: bool,
    pub note: Option<String>,
    pub created_ms: Millis,
    pub updated_ms: Millis,
}

const COLS: &str = "parent_id, delegation_id, root_id, position, spec, state, job_id, attempts, dedup_of, \
    accepted, note, created_ms, updated_ms";

fn from_row(r: &Row<'_>) -> Result<Leg> {
    let state: String = r.get(5)?;
    Ok(Leg {
        parent_id: r.get(0)?,
        delegation_id: r.get(1)?,
        root_id: r.get(2)?,
        position: r.get(3)?,
        spec: r.json(4)?.ok_or_else(|| StoreError::Column {
            index: 4,
            reason: "a leg without a spec".into(),
        })?,
        state: LegState::parse(&state)?,
        job_id: r.get(6)?,
        attempts: r.get(7)?,
        dedup_of: r.get(8)?,
        accepted: r.get(9)?,
        note: r.get(10)?,
        created_ms: r.get(11)?,
        updated_ms: r.get(12)?,
    })
}

/// Writes the whole row, new or existing (in place: the key columns never change).
pub fn put<'a>(tx: impl Into<Tx<'a>>, l: &Leg) -> Result<()> {
    tx.into().execute(
        &format!(
            "INSERT INTO delegations({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT(parent_id, delegation_id) DO UPDATE SET root_id = excluded.root_id,
                 position = excluded.position, spec = excluded.spec, state = excluded.state,
                 job_id = excluded.job_id, attempts = excluded.attempts, dedup_of = excluded.dedup_of,
                 accepted = excluded.accepted, note = excluded.note, created_ms = excluded.created_ms,
                 updated_ms = excluded.updated_ms"
        ),
        params![
        l.parent_id,
        l.delegation_id,
        l.root_id,
        l.position,
        serde_json::to_string(&l.spec)?,
        l.state.as_str(),
        l.job_id,
        l.attempts,
        l.dedup_of,
        l.accepted,
        l.note,
        l.created_ms,
        l.updated_ms
    ],
    )?;
    Ok(())
}

/// The legs of one coordinator's batch, in result order.
pub fn for_parent<'a>(tx: impl Into<Tx<'a>>, parent_id: &str) -> Result<Vec<Leg>> {
    tx.into().query_map(
        &format!("SELECT {COLS} FROM delegations WHERE parent_id = ?1 ORDER BY position"),
        params![parent_id],
        from_row,
    )
}

/// Legs of a tree admitted but not yet enqueued: budget they already hold.
pub fn count_waiting<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<u32> {
    tx.into().one(
        "SELECT COUNT(*) FROM delegations WHERE root_id = ?1 AND state = 'waiting'",
        params![root_id],
    )
}
