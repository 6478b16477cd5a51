//! Message rows (`chat_messages`): the gap-free `seq`, transcripts and the per-thread
//! queries over a thread's history; must not touch mentions or the unread counters.

use crate::store::tx::{Row, Tx, params};
use serde::{Deserialize, Serialize};

use super::{AuthorKind, MessageKind};
use crate::Invalid;
use crate::clock::Millis;
use crate::store::{Result, StoreError};

/// An origin-qualified handle to something outside the thread (a job, a PR…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ref {
    pub kind: String,
    pub origin: String,
    pub repo: String,
    pub id: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    pub id: String,
    pub thread_id: String,
    pub seq: i64,
    pub ts_ms: Millis,
    pub author_kind: AuthorKind,
    pub author_name: String,
    pub author_origin: String,
    pub kind: MessageKind,
    pub body: String,
    pub mentions: Vec<String>,
    pub refs: Vec<Ref>,
    pub reply_to: Option<i64>,
    pub promoted_job_id: Option<String>,
    pub job_id: Option<String>,
    pub origin: String,
    pub envelope_json: String,
}

const MSG_COLS: &str = "id, thread_id, seq, ts_ms, author_kind, author_name, author_origin, kind, body, \
    envelope_json, refs_json, reply_to, promoted_job_id, job_id, origin";

fn message_row(r: &Row<'_>) -> Result<Message> {
    let envelope: String = r.get(9)?;
    let refs: String = r.get(10)?;
    let bad = |index, e: serde_json::Error| StoreError::Column {
        index,
        reason: e.to_string(),
    };
    let mentions = serde_json::from_str::<serde_json::Value>(&envelope)
        .map_err(|e| bad(9, e))?
        .get("mentions")
        .and_then(|m| m.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    Ok(Message {
        id: r.get(0)?,
        thread_id: r.get(1)?,
        seq: r.get(2)?,
        ts_ms: r.get(3)?,
        author_kind: r.get(4)?,
        author_name: r.get(5)?,
        author_origin: r.get(6)?,
        kind: r.get(7)?,
        body: r.get(8)?,
        mentions,
        refs: serde_json::from_str(&refs).map_err(|e| bad(10, e))?,
        reply_to: r.get(11)?,
        promoted_job_id: r.get(12)?,
        job_id: r.get(13)?,
        origin: r.get(14)?,
        envelope_json: envelope,
    })
}

/// The next gap-free sequence number of a thread; callers hold the write lock, or a
/// scoped write holding the thread (`Scope::Thread`).
pub fn next_seq<'a>(tx: impl Into<Tx<'a>>, thread_id: &str) -> Result<i64> {
    let tx = tx.into();
    tx.in_thread(thread_id)?;
    tx.one(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages WHERE thread_id = ?1",
        params![thread_id],
    )
}

pub fn insert_message<'a>(tx: impl Into<Tx<'a>>, m: &Message) -> Result<()> {
    let tx = tx.into();
    tx.in_thread(&m.thread_id)?;
    tx.execute(
        &format!(
            "INSERT INTO chat_messages({MSG_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
        ),
        params![
        m.id,
        m.thread_id,
        m.seq,
        m.ts_ms,
        m.author_kind,
        m.author_name,
        m.author_origin,
        m.kind,
        m.body,
        m.envelope_json,
        serde_json::to_string(&m.refs)?,
        m.reply_to,
        m.promoted_job_id,
        m.job_id,
        m.origin
    ],
    )?;
    Ok(())
}

/// Messages with `seq > since`, oldest first; `limit` keeps the newest N.
pub fn messages<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    since: i64,
    limit: Option<usize>,
) -> Result<Vec<Message>> {
    // No bound is the largest one: PostgreSQL refuses SQLite's negative "no limit".
    let limit = limit.map_or(i64::MAX, |n| n as i64);
    let mut out = tx.into().query_map(
        &format!(
            "SELECT {MSG_COLS} FROM chat_messages WHERE thread_id = ?1 AND seq > ?2 ORDER BY seq DESC LIMIT ?3"
        ),
        params![thread_id, since, limit],
        message_row,
    )?;
    out.reverse();
    Ok(out)
}

pub fn message_by_seq<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    seq: i64,
) -> Result<Option<Message>> {
    tx.into().query_opt(
        &format!("SELECT {MSG_COLS} FROM chat_messages WHERE thread_id = ?1 AND seq = ?2"),
        params![thread_id, seq],
        message_row,
    )
}

pub fn last_seq<'a>(tx: impl Into<Tx<'a>>, thread_id: &str) -> Result<i64> {
    tx.into().one(
        "SELECT COALESCE(MAX(seq), 0) FROM chat_messages WHERE thread_id = ?1",
        params![thread_id],
    )
}

pub fn set_promoted_job<'a>(tx: impl Into<Tx<'a>>, message_id: &str, job_id: &str) -> Result<()> {
    tx.into().execute(
        "UPDATE chat_messages SET promoted_job_id = ?2 WHERE id = ?1",
        params![message_id, job_id],
    )?;
    Ok(())
}

/// A promotion_request in the thread with this exact body since `since_ms` that did
/// dispatch a job.
pub fn recent_promotion_exists<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    body: &str,
    since_ms: Millis,
) -> Result<bool> {
    Ok(tx
        .into()
        .query_opt(
            "SELECT 1 FROM chat_messages WHERE thread_id = ?1 AND kind = 'promotion_request' AND body = ?2
             AND ts_ms >= ?3 AND promoted_job_id IS NOT NULL AND promoted_job_id != '' LIMIT 1",
            params![thread_id, body, since_ms],
            |_| Ok(()),
        )?
        .is_some())
}

/// Whether a job_result for this job was already posted anywhere.
pub fn result_posted<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<bool> {
    Ok(tx
        .into()
        .query_opt(
            "SELECT 1 FROM chat_messages WHERE job_id = ?1 AND kind = 'job_result' LIMIT 1",
            params![job_id],
            |_| Ok(()),
        )?
        .is_some())
}

/// How many `job_result` messages `job_id` posted (one per review round it had, plus one).
pub fn results_posted<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<i64> {
    tx.into().one(
        "SELECT COUNT(*) FROM chat_messages WHERE job_id = ?1 AND kind = 'job_result'",
        params![job_id],
    )
}

/// Non-chat messages of one kind in a thread, optionally by one author. Human chat
/// messages (the bulk) stay out of this index, so a plain send writes one page less.
pub fn count_kind<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    kind: MessageKind,
    author_name: Option<&str>,
) -> Result<i64> {
    if kind == MessageKind::Chat {
        return Err(
            Invalid("count_kind counts non-chat kinds; use count_agent_turns".into()).into(),
        );
    }
    tx.into().one(
        "SELECT COUNT(*) FROM chat_messages WHERE thread_id = ?1 AND kind = ?2 AND kind != 'chat'
         AND (author_name = ?3 OR ?3 IS NULL)",
        params![thread_id, kind, author_name],
    )
}

/// Agent-authored chat turns in a thread (what a moot's cap counts).
pub fn count_agent_turns<'a>(tx: impl Into<Tx<'a>>, thread_id: &str) -> Result<i64> {
    tx.into().one(
        "SELECT COUNT(*) FROM chat_messages WHERE thread_id = ?1 AND kind = 'chat' AND author_kind = 'agent'",
        params![thread_id],
    )
}

/// Whether a system message with exactly this body exists in the thread.
pub fn system_body_exists<'a>(tx: impl Into<Tx<'a>>, thread_id: &str, body: &str) -> Result<bool> {
    Ok(tx
        .into()
        .query_opt(
            "SELECT 1 FROM chat_messages WHERE thread_id = ?1 AND kind = 'system' AND kind != 'chat' AND body = ?2 LIMIT 1",
            params![thread_id, body],
            |_| Ok(()),
        )?
        .is_some())
}

/// The newest job_result timestamp of one author in a thread.
pub fn last_result_ms<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    author: &str,
) -> Result<Option<Millis>> {
    tx.into().one(
        "SELECT MAX(ts_ms) FROM chat_messages WHERE thread_id = ?1 AND kind = 'job_result' AND kind != 'chat' AND author_name = ?2",
        params![thread_id, author],
    )
}

/// Distinct registered agents mentioned in a thread (from the envelopes: the mentions table
/// carries no thread index, to keep a send cheap).
pub fn mentioned_agents<'a>(tx: impl Into<Tx<'a>>, thread_id: &str) -> Result<Vec<String>> {
    tx.into().query_map(
        "SELECT DISTINCT j.value FROM chat_messages c, json_each(c.envelope_json, '$.mentions') j
         JOIN agents a ON a.name = j.value WHERE c.thread_id = ?1 ORDER BY j.value",
        params![thread_id],
        |r| r.get(0),
    )
}

/// Distinct non-system authors of a thread.
pub fn authors<'a>(tx: impl Into<Tx<'a>>, thread_id: &str) -> Result<Vec<String>> {
    tx.into().query_map(
        "SELECT DISTINCT author_name FROM chat_messages WHERE thread_id = ?1 AND author_kind != 'system'
         ORDER BY author_name",
        params![thread_id],
        |r| r.get(0),
    )
}
