//! The reads behind stall detection (`engine::stall`): the running jobs with their live
//! token figure, a job's newest activity records, and the stall events (`job_stalled`,
//! `job_stall_left`, `job_stall_cleared`) that say whether a job is stalled now.
//!
//! Holds SQL only; what counts as a stall is the engine's.

use super::Result;
use super::activity::{Record, record};
use super::events::{COLS, Event, map};
use super::row::row_columns;
use super::tx::{Tx, params};
use crate::clock::Millis;
use crate::domain::{EventKind, JobState};

/// A running job as the stall watch sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    pub job_id: String,
    pub root_id: String,
    pub started_ms: Option<Millis>,
    /// Input plus output tokens its stream has reported so far.
    pub tokens: u64,
    /// Activity records stored for it so far (their seqs are `0..records`).
    pub records: u64,
}

row_columns! {
    fn running_row -> Running {
        job_id,
        root_id,
        started_ms,
        tokens,
        records,
    }
}

/// Every running job a daemon runs (session jobs are done by a human, never watched).
pub fn running<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<Running>> {
    tx.into().query_map(
        "SELECT j.id, j.root_id, j.started_ms, coalesce(a.live_tokens, 0), coalesce(a.records, 0)
         FROM jobs j LEFT JOIN job_activity a ON a.job_id = j.id
         WHERE j.state = ?1 AND j.dispatched_by != ?2",
        params![JobState::Running, crate::domain::SESSION],
        running_row,
    )
}

/// Up to `limit` of `job_id`'s newest activity records past seq `after` (all of them
/// when `None`), newest first, without details.
pub fn newest_records<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
    after: Option<u64>,
    limit: usize,
) -> Result<Vec<Record>> {
    tx.into().query_map(
        // The details (up to 8 KiB each) are left out: the watch reads this every tick.
        "SELECT job_id, seq, at_ms, kind, summary, NULL FROM activity
         WHERE job_id = ?1 AND seq > ?2 ORDER BY seq DESC LIMIT ?3",
        params![job_id, after.map_or(-1, |s| s as i64), limit],
        record,
    )
}

/// The stall events' kinds, spelled inline so `events_stall` serves the query.
const STALL: &str = gitmoot_types::stall_kinds_sql!();

/// `job_id`'s newest stall event, if it ever had one.
pub fn last_event<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Option<Event>> {
    tx.into().query_opt(
        &format!(
            "SELECT {COLS} FROM events WHERE job_id = ?1 AND {STALL} ORDER BY id DESC LIMIT 1"
        ),
        params![job_id],
        map,
    )
}

/// The `job_stalled` event of every running job that is stalled now (its newest stall
/// event), oldest stall first.
pub fn current<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<Event>> {
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM events WHERE id IN (
                 SELECT (SELECT max(id) FROM events WHERE job_id = j.id AND {STALL})
                 FROM jobs j WHERE j.state = ?1)
             AND kind = ?2 ORDER BY id"
        ),
        params![JobState::Running, EventKind::JobStalled.as_str()],
        map,
    )
}
