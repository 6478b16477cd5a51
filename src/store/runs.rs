//! The `runs` table: one row per root with the tree's state, title, kill flag, paused time
//! and totals.

use serde::Serialize;

use super::row::{counter, row_columns};
use super::tx::{Row, Tx, params};
use super::{Result, StoreError};
use crate::clock::Millis;
use crate::domain::RunState;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub root_id: String,
    pub state: RunState,
    pub title: String,
    pub repo: Option<String>,
    pub killed: bool,
    pub kill_force: bool,
    /// Time spent awaiting a human, excluded from the wall-clock bound.
    pub paused_ms: i64,
    pub paused_since_ms: Option<Millis>,
    /// Jobs created in the tree (continuations and retries included).
    pub jobs: u32,
    pub tokens: u64,
    pub cost_usd: f64,
    /// Set when a sweep bound (the wall clock) stopped the tree gracefully.
    pub stop_reason: Option<String>,
    pub created_ms: Millis,
    pub finished_ms: Option<Millis>,
    pub updated_ms: Millis,
}

impl Run {
    pub fn new(root_id: String, title: String, repo: Option<String>, now: Millis) -> Self {
        Self {
            root_id,
            state: RunState::Running,
            title,
            repo,
            killed: false,
            kill_force: false,
            paused_ms: 0,
            paused_since_ms: None,
            jobs: 0,
            tokens: 0,
            cost_usd: 0.0,
            stop_reason: None,
            created_ms: now,
            finished_ms: None,
            updated_ms: now,
        }
    }
}

row_columns! {
    const COLS;
    fn from_row -> Run in "runs" {
        root_id,
        state,
        title,
        repo,
        killed,
        kill_force,
        paused_ms,
        paused_since_ms,
        jobs,
        tokens: counter,
        cost_usd,
        stop_reason,
        created_ms,
        finished_ms,
        updated_ms,
    }
}

/// Writes the run, new or existing, in place and only in the columns that changed (see
/// `write_changed`): a settlement moves its tokens, cost and `updated_ms`, not its row.
pub fn put<'a>(tx: impl Into<Tx<'a>>, run: &Run) -> Result<()> {
    let tx = tx.into();
    tx.in_tree(&run.root_id)?;
    super::put_row(tx, run)
}

/// `put` of `after` over the row the caller read as `before` in this transaction and has
/// not written since (see `write_changes_from`).
pub fn put_over<'a>(tx: impl Into<Tx<'a>>, before: &Run, after: &Run) -> Result<()> {
    let tx = tx.into();
    tx.in_tree(&after.root_id)?;
    super::put_row_over(tx, before, after)
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<Option<Run>> {
    tx.into().query_opt(
        &format!("SELECT {COLS} FROM runs WHERE root_id = ?1"),
        params![root_id],
        from_row,
    )
}

pub fn require<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<Run> {
    get(tx, root_id)?
        .ok_or_else(|| StoreError::Invalid(crate::Invalid(format!("run {root_id:?} not found"))))
}

/// Runs newest first, at most `limit`.
/// A run row, or what made it unreadable (the id is its root job's, the column `runs.…`).
pub type Readable = std::result::Result<Run, super::jobs::Unreadable>;

fn readable(r: &Row<'_>) -> Result<Readable> {
    match from_row(r) {
        Ok(run) => Ok(Ok(run)),
        Err(StoreError::Column { index, reason }) => Ok(Err(super::jobs::Unreadable {
            id: r.get(0).unwrap_or_default(),
            column: format!("runs.{}", COLS.split(", ").nth(index).unwrap_or("?")),
            reason,
        })),
        Err(e) => Err(e),
    }
}

/// `get` for a reader that shows a damaged row rather than failing on it.
pub fn get_readable<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<Option<Readable>> {
    tx.into().query_opt(
        &format!("SELECT {COLS} FROM runs WHERE root_id = ?1"),
        params![root_id],
        readable,
    )
}

/// `list` for a reader that shows a damaged row rather than failing on it.
pub fn list_readable<'a>(tx: impl Into<Tx<'a>>, limit: usize) -> Result<Vec<Readable>> {
    tx.into().query_map(
        &format!("SELECT {COLS} FROM runs ORDER BY created_ms DESC, rowid DESC LIMIT ?1"),
        params![limit],
        readable,
    )
}

pub fn list<'a>(tx: impl Into<Tx<'a>>, limit: usize) -> Result<Vec<Run>> {
    tx.into().query_map(
        &format!("SELECT {COLS} FROM runs ORDER BY created_ms DESC, rowid DESC LIMIT ?1"),
        params![limit],
        from_row,
    )
}

/// Runs not yet in a terminal state, for the daemon's sweep.
pub fn live<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<Run>> {
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM runs WHERE state IN ('running', 'awaiting_human') ORDER BY created_ms"
        ),
        params![],
        from_row,
    )
}
