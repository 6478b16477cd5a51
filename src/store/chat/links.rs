//! Job links (`chat_job_links`): which tree's result belongs in which thread; must not
//! touch job rows (it only reads their state).

use crate::store::row::row_columns;
use crate::store::tx::{Tx, params};
use serde::Serialize;

use super::LinkPurpose;
use crate::clock::Millis;
use crate::store::Result;

/// A tree whose result belongs in a thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobLink {
    pub root_id: String,
    pub thread_id: String,
    /// The seq the result replies to (promotion, trigger, announcement, questions).
    pub reply_to: i64,
    pub purpose: LinkPurpose,
    pub agent: String,
    pub created_ms: Millis,
}

/// Records the link unless the tree already has one (the first link wins).
pub fn insert_link<'a>(tx: impl Into<Tx<'a>>, l: &JobLink) -> Result<bool> {
    Ok(tx.into().execute(
        &format!(
            "INSERT INTO chat_job_links({LINK_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(root_id) DO NOTHING"
        ),
        params![
            l.root_id,
            l.thread_id,
            l.reply_to,
            l.purpose,
            l.agent,
            l.created_ms
        ],
    )? > 0)
}

row_columns! {
    const LINK_COLS;
    fn link_row -> JobLink {
        root_id,
        thread_id,
        reply_to,
        purpose,
        agent,
        created_ms,
    }
}

pub fn link<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<Option<JobLink>> {
    tx.into().query_opt(
        &format!("SELECT {LINK_COLS} FROM chat_job_links WHERE root_id = ?1"),
        params![root_id],
        link_row,
    )
}

/// Links of one purpose for (thread, agent) whose root job is still queued or running.
pub fn in_flight_links<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    agent: &str,
    purpose: LinkPurpose,
) -> Result<i64> {
    tx.into().one(
        "SELECT COUNT(*) FROM chat_job_links l JOIN jobs j ON j.id = l.root_id
         WHERE l.thread_id = ?1 AND l.agent = ?2 AND l.purpose = ?3 AND j.state IN ('queued', 'running')",
        params![thread_id, agent, purpose],
    )
}

/// When the newest link of one purpose for (thread, agent) was made.
pub fn last_link_ms<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    agent: &str,
    purpose: LinkPurpose,
) -> Result<Option<Millis>> {
    tx.into().one(
        "SELECT MAX(created_ms) FROM chat_job_links WHERE thread_id = ?1 AND agent = ?2 AND purpose = ?3",
        params![thread_id, agent, purpose],
    )
}
