//! Message rows (`chat_messages`): the gap-free `seq`, transcripts and the per-thread
//! queries over a thread's history; must not touch mentions or the unread counters.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use super::{AuthorKind, MessageKind};
use crate::Invalid;
use crate::clock::Millis;
use crate::store::Result;

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

fn message_row(r: &Row<'_>) -> rusqlite::Result<Message> {
    let envelope: String = r.get(9)?;
    let refs: String = r.get(10)?;
    let bad = |i, e: serde_json::Error| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
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

/// The next gap-free sequence number of a thread; callers hold the write lock.
pub fn next_seq(conn: &Connection, thread_id: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM chat_messages WHERE thread_id = ?1")?
        .query_row([thread_id], |r| r.get(0))?)
}

pub fn insert_message(conn: &Connection, m: &Message) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO chat_messages({MSG_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
    ))?
    .execute(params![
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
    ])?;
    Ok(())
}

/// Messages with `seq > since`, oldest first; `limit` keeps the newest N.
pub fn messages(
    conn: &Connection,
    thread_id: &str,
    since: i64,
    limit: Option<usize>,
) -> Result<Vec<Message>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {MSG_COLS} FROM chat_messages WHERE thread_id = ?1 AND seq > ?2 ORDER BY seq DESC LIMIT ?3"
    ))?;
    let limit = limit.map(|n| n as i64).unwrap_or(-1);
    let mut out: Vec<Message> = st
        .query_map(params![thread_id, since, limit], message_row)?
        .collect::<rusqlite::Result<_>>()?;
    out.reverse();
    Ok(out)
}

pub fn message_by_seq(conn: &Connection, thread_id: &str, seq: i64) -> Result<Option<Message>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {MSG_COLS} FROM chat_messages WHERE thread_id = ?1 AND seq = ?2"
        ))?
        .query_row(params![thread_id, seq], message_row)
        .optional()?)
}

pub fn last_seq(conn: &Connection, thread_id: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM chat_messages WHERE thread_id = ?1")?
        .query_row([thread_id], |r| r.get(0))?)
}

pub fn set_promoted_job(conn: &Connection, message_id: &str, job_id: &str) -> Result<()> {
    conn.prepare_cached("UPDATE chat_messages SET promoted_job_id = ?2 WHERE id = ?1")?
        .execute(params![message_id, job_id])?;
    Ok(())
}

/// A promotion_request in the thread with this exact body since `since_ms` that did
/// dispatch a job.
pub fn recent_promotion_exists(
    conn: &Connection,
    thread_id: &str,
    body: &str,
    since_ms: Millis,
) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM chat_messages WHERE thread_id = ?1 AND kind = 'promotion_request' AND body = ?2
             AND ts_ms >= ?3 AND promoted_job_id IS NOT NULL AND promoted_job_id != '' LIMIT 1",
        )?
        .query_row(params![thread_id, body, since_ms], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Whether a job_result for this job was already posted anywhere.
pub fn result_posted(conn: &Connection, job_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM chat_messages WHERE job_id = ?1 AND kind = 'job_result' LIMIT 1",
        )?
        .query_row([job_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Non-chat messages of one kind in a thread, optionally by one author. Human chat
/// messages (the bulk) stay out of this index, so a plain send writes one page less.
pub fn count_kind(
    conn: &Connection,
    thread_id: &str,
    kind: MessageKind,
    author_name: Option<&str>,
) -> Result<i64> {
    if kind == MessageKind::Chat {
        return Err(
            Invalid("count_kind counts non-chat kinds; use count_agent_turns".into()).into(),
        );
    }
    Ok(conn
        .prepare_cached(
            "SELECT COUNT(*) FROM chat_messages WHERE thread_id = ?1 AND kind = ?2 AND kind != 'chat'
             AND (?3 IS NULL OR author_name = ?3)",
        )?
        .query_row(params![thread_id, kind, author_name], |r| r.get(0))?)
}

/// Agent-authored chat turns in a thread (what a moot's cap counts).
pub fn count_agent_turns(conn: &Connection, thread_id: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT COUNT(*) FROM chat_messages WHERE thread_id = ?1 AND kind = 'chat' AND author_kind = 'agent'",
        )?
        .query_row([thread_id], |r| r.get(0))?)
}

/// Whether a system message with exactly this body exists in the thread.
pub fn system_body_exists(conn: &Connection, thread_id: &str, body: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM chat_messages WHERE thread_id = ?1 AND kind = 'system' AND kind != 'chat' AND body = ?2 LIMIT 1",
        )?
        .query_row(params![thread_id, body], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The newest job_result timestamp of one author in a thread.
pub fn last_result_ms(conn: &Connection, thread_id: &str, author: &str) -> Result<Option<Millis>> {
    Ok(conn
        .prepare_cached(
            "SELECT MAX(ts_ms) FROM chat_messages WHERE thread_id = ?1 AND kind = 'job_result' AND kind != 'chat' AND author_name = ?2",
        )?
        .query_row(params![thread_id, author], |r| r.get(0))?)
}

/// Distinct registered agents mentioned in a thread (from the envelopes: the mentions table
/// carries no thread index, to keep a send cheap).
pub fn mentioned_agents(conn: &Connection, thread_id: &str) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(
        "SELECT DISTINCT j.value FROM chat_messages c, json_each(c.envelope_json, '$.mentions') j
         JOIN agents a ON a.name = j.value WHERE c.thread_id = ?1 ORDER BY j.value",
    )?;
    Ok(st
        .query_map([thread_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Distinct non-system authors of a thread.
pub fn authors(conn: &Connection, thread_id: &str) -> Result<Vec<String>> {
    let mut st = conn.prepare_cached(
        "SELECT DISTINCT author_name FROM chat_messages WHERE thread_id = ?1 AND author_kind != 'system'
         ORDER BY author_name",
    )?;
    Ok(st
        .query_map([thread_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}
