//! The `delegations` table: the legs of each coordinator batch with their spec and state.
//!
//! Owns the rows only; which leg runs when is the engine's decision.

use serde::Serialize;

use super::row::row_columns;
use super::tx::{Row, Tx, params};
use super::value::{FromValue, Value};
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
}

impl FromValue for LegState {
    fn from_value(v: Value<'_>) -> std::result::Result<Self, String> {
        Ok(match String::from_value(v)?.as_str() {
            "waiting" => LegState::Waiting,
            "dispatched" => LegState::Dispatched,
            "deduped" => LegState::Deduped,
            "skipped" => LegState::Skipped,
            other => return Err(format!("unknown leg state {other:?}")),
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

impl Leg {
    /// A newly admitted leg at `position` of `parent_id`'s batch: waiting, with no job and no
    /// attempt yet.
    pub fn waiting(
        parent_id: String,
        root_id: String,
        position: u32,
        spec: Delegation,
        now: Millis,
    ) -> Self {
        Leg {
            parent_id,
            delegation_id: spec.id.clone(),
            root_id,
            position,
            spec,
            state: LegState::Waiting,
            job_id: None,
            attempts: 0,
            dedup_of: None,
            accepted: false,
            note: None,
            created_ms: now,
            updated_ms: now,
        }
    }
}

row_columns! {
    const COLS;
    fn from_row -> Leg {
        parent_id,
        delegation_id,
        root_id,
        position,
        spec: required_spec,
        state,
        job_id,
        attempts,
        dedup_of,
        accepted,
        note,
        created_ms,
        updated_ms,
    }
}

/// The leg's delegation, which every leg has.
fn required_spec(r: &Row<'_>, index: usize) -> Result<Delegation> {
    r.json(index)?.ok_or_else(|| StoreError::Column {
        index,
        reason: "a leg without a spec".into(),
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
