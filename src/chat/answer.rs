//! `chat answer`: the ask-gate channel. Resolves a thread to the job paused on it (through
//! the escalation row that records the thread), records the answer as a chat message and
//! hands it to the engine's answer path, all in one transaction.

use rusqlite::{Connection, OptionalExtension};

use super::{ChatError, Result};
use crate::store::chat::Thread;

/// The job whose open ask round is linked to `thread`.
pub fn resolve_target(conn: &Connection, thread: &Thread) -> Result<String> {
    let open: Option<(String, String)> = conn
        .query_row(
            "SELECT job_id, kind FROM escalations WHERE thread_id = ?1 AND resolved_ms IS NULL ORDER BY id DESC LIMIT 1",
            [&thread.id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((job_id, kind)) = open {
        if kind != "ask" {
            return Err(ChatError::Refused(format!(
                "job {job_id} is paused on a {kind} escalation, not an ask; resume it with \
                 `gitmoot job resume {job_id} retry|continue|abort`, not answer"
            )));
        }
        return Ok(job_id);
    }
    let any: Option<String> = conn
        .query_row(
            "SELECT job_id FROM escalations WHERE thread_id = ?1 ORDER BY id DESC LIMIT 1",
            [&thread.id],
            |r| r.get(0),
        )
        .optional()?;
    Err(ChatError::Refused(match any {
        Some(job) => format!(
            "job {job} has no pending question to answer (it was already answered or finalized)"
        ),
        None => format!("thread {:?} is not linked to a paused job", thread.slug),
    }))
}
