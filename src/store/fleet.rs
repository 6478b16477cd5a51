//! The per-agent figures of the fleet views (`agent list --live`, the Agents pane): jobs
//! running and waiting for a human, the newest step of its running jobs, its spend since a
//! time and its newest error, each one grouped read.
//!
//! Holds SQL only; `report::agents` puts the row together.

use super::Result;
use super::tx::{Tx, params};
use crate::clock::Millis;
use crate::domain::JobState;

/// Jobs per agent in `state`.
pub fn count_by_agent<'a>(tx: impl Into<Tx<'a>>, state: JobState) -> Result<Vec<(String, u32)>> {
    tx.into().query_map(
        "SELECT agent, COUNT(*) FROM jobs WHERE state = ?1 GROUP BY agent",
        params![state],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Open human rounds per agent of the job they wait on.
pub fn open_rounds_by_agent<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<(String, u32)>> {
    tx.into().query_map(
        "SELECT j.agent, COUNT(*) FROM escalations e JOIN jobs j ON j.id = e.job_id
         WHERE e.resolved_ms IS NULL GROUP BY j.agent",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// The running jobs' newest steps, newest first: (agent, job, summary).
pub fn running_steps<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<(String, String, String)>> {
    tx.into().query_map(
        "SELECT j.agent, j.id, a.last_summary FROM jobs j JOIN job_activity a ON a.job_id = j.id
         WHERE j.state = ?1 AND a.last_summary IS NOT NULL ORDER BY a.updated_ms DESC",
        params![JobState::Running],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Tokens and dollars per agent of the jobs created at or after `since`: settled figures,
/// and for running jobs what their streams reported so far.
pub fn spend_since<'a>(tx: impl Into<Tx<'a>>, since: Millis) -> Result<Vec<(String, u64, f64)>> {
    tx.into().query_map(
        "SELECT j.agent,
                SUM(CASE WHEN j.state = ?2 THEN coalesce(a.live_tokens, 0)
                         ELSE j.tokens_in + j.tokens_out END),
                SUM(CASE WHEN j.state = ?2 THEN coalesce(a.live_cost_usd, 0) ELSE j.cost_usd END)
         FROM jobs j LEFT JOIN job_activity a ON a.job_id = j.id
         WHERE j.created_ms >= ?1 GROUP BY j.agent",
        params![since, JobState::Running],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// `agent`'s newest job that has an error: (job, error).
pub fn last_error<'a>(tx: impl Into<Tx<'a>>, agent: &str) -> Result<Option<(String, String)>> {
    tx.into().query_opt(
        "SELECT id, error FROM jobs WHERE agent = ?1 AND error IS NOT NULL
         ORDER BY created_ms DESC, rowid DESC LIMIT 1",
        params![agent],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}
