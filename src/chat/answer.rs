//! `chat answer`: the ask-gate channel. Resolves a thread to the job paused on it (through
//! the escalation row that records the thread), records the answer as a chat message and
//! hands it to the engine's answer path, all in one transaction.

use rusqlite::{Connection, OptionalExtension, Transaction};

use super::messages::{self, Post, job_ref};
use super::{ChatError, Result, threads, write_retry};
use crate::Invalid;
use crate::clock::Clock;
use crate::config::OrchestrateConfig;
use crate::engine::{self, Hooks};
use crate::store::Store;
use crate::store::chat::{self as rows, AuthorKind, Message, MessageKind, Thread};

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

/// What `chat answer` did.
#[derive(Debug, Clone)]
pub struct Answered {
    pub thread: Thread,
    pub job_id: String,
    /// The human's answer as recorded in the thread.
    pub message: Message,
    /// The answer continuation, when the engine enqueued one now.
    pub continuation: Option<String>,
}

/// Records the answer in the thread and resumes the paused job through the engine's
/// answer path, in the caller's transaction (a refused answer records nothing).
pub fn answer(
    tx: &Transaction<'_>,
    clock: &dyn Clock,
    cfg: &OrchestrateConfig,
    hooks: &dyn Hooks,
    thread: &Thread,
    text: &str,
) -> Result<Answered> {
    if text.trim().is_empty() {
        return Err(Invalid("chat answer requires a non-empty answer".into()).into());
    }
    let job_id = resolve_target(tx, thread)?;
    let mut post = Post {
        kind: MessageKind::Chat,
        author_kind: AuthorKind::Human,
        author: "human",
        body: text,
        mentions: Vec::new(),
        deliver: Vec::new(),
        refs: vec![job_ref(tx, &thread.repo, &job_id)?],
        reply_to: None,
        job_id: None,
    };
    post.reply_to = rows::messages(tx, &thread.id, 0, None)?
        .iter()
        .rev()
        .find(|m| {
            m.kind == MessageKind::System
                && m.refs.iter().any(|r| r.kind == "job" && r.id == job_id)
        })
        .map(|m| m.seq);
    let message = messages::append(tx, clock, thread, post)?;
    let continuation = engine::answer(tx, clock, cfg, hooks, &job_id, text)?;
    Ok(Answered {
        thread: thread.clone(),
        job_id,
        message,
        continuation,
    })
}

/// `chat answer`: resolve the thread, answer, commit.
pub fn answer_message(
    store: &mut Store,
    clock: &dyn Clock,
    cfg: &OrchestrateConfig,
    hooks: &dyn Hooks,
    thread_arg: &str,
    repo: Option<&str>,
    text: &str,
) -> Result<Answered> {
    write_retry(store, |tx| {
        let thread = threads::resolve(tx, thread_arg, repo)?;
        answer(tx, clock, cfg, hooks, &thread, text)
    })
}
