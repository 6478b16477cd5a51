//! Mention rows (`chat_mentions`): inbox pages, marking read and the auto-respond
//! candidates; the badge counters those rows feed live in `unread.rs`.

use crate::store::row::row_columns;
use crate::store::tx::{Tx, params};
use serde::Serialize;

use super::MessageKind;
use crate::clock::Millis;
use crate::store::{Result, StoreError};

/// One inbox row: a mention of an agent on a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mention {
    pub id: i64,
    pub message_id: String,
    pub thread_id: String,
    pub seq: i64,
    pub kind: MessageKind,
    pub agent: String,
    pub agent_origin: String,
    pub resolved: bool,
    pub unread: bool,
    pub created_ms: Millis,
}

pub fn insert_mention<'a>(tx: impl Into<Tx<'a>>, m: &Mention) -> Result<()> {
    tx.into().execute(
        "INSERT INTO chat_mentions(message_id, thread_id, seq, kind, agent, agent_origin, resolved, unread, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
        m.message_id,
        m.thread_id,
        m.seq,
        m.kind,
        m.agent,
        m.agent_origin,
        m.resolved,
        m.unread,
        m.created_ms
    ],
    )?;
    Ok(())
}

/// An inbox entry joined to its message and thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InboxRow {
    pub mention_id: i64,
    pub thread_id: String,
    pub thread_slug: String,
    pub repo: String,
    pub seq: i64,
    pub kind: MessageKind,
    pub author: String,
    pub body: String,
    pub ts_ms: Millis,
    pub unread: bool,
}

/// Resolved mentions of `agent` from this home, newest first.
pub fn inbox<'a>(
    tx: impl Into<Tx<'a>>,
    agent: &str,
    origin: &str,
    unread_only: bool,
    limit: Option<usize>,
) -> Result<Vec<InboxRow>> {
    let mut out = Vec::new();
    inbox_each(tx, agent, origin, unread_only, limit, None, |r| {
        out.push(r);
        Ok::<_, StoreError>(())
    })?;
    Ok(out)
}

row_columns! {
    fn inbox_row -> InboxRow {
        mention_id,
        thread_id,
        thread_slug,
        repo,
        seq,
        kind,
        author,
        body,
        ts_ms,
        unread,
    }
}

/// The SQL of one inbox page, walking the agent's inbox index newest first from the
/// `before` mention id; `EXPLAIN QUERY PLAN` checks read it too.
pub fn inbox_query(unread_only: bool) -> String {
    format!(
        "SELECT m.id, m.thread_id, t.slug, t.repo, m.seq, m.kind, c.author_name, c.body, c.ts_ms, m.unread
         FROM chat_mentions m {}
         JOIN chat_messages c ON c.id = m.message_id
         JOIN chat_threads t ON t.id = m.thread_id
         WHERE m.agent = ?1 AND m.agent_origin = ?2 AND m.resolved = 1 AND m.id < ?4 {}
         ORDER BY m.id DESC LIMIT ?3",
        if unread_only {
            "INDEXED BY chat_mentions_unread"
        } else {
            "INDEXED BY chat_mentions_inbox"
        },
        if unread_only { "AND m.unread = 1" } else { "" }
    )
}

/// Streams an inbox page to `each`, one row at a time: mentions older than `before` (a
/// mention id), newest first, at most `limit`.
pub fn inbox_each<'a, E: From<StoreError>>(
    tx: impl Into<Tx<'a>>,
    agent: &str,
    origin: &str,
    unread_only: bool,
    limit: Option<usize>,
    before: Option<i64>,
    mut each: impl FnMut(InboxRow) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    // No bound is the largest one: PostgreSQL refuses SQLite's negative "no limit".
    let limit = limit.map_or(i64::MAX, |n| n as i64);
    tx.into().query_each(
        &inbox_query(unread_only),
        params![agent, origin, limit, before.unwrap_or(i64::MAX)],
        |r| each(inbox_row(r)?),
    )
}

/// Marks mentions read: one thread or all, some seqs or all, some kinds or all.
pub fn mark_read<'a>(
    tx: impl Into<Tx<'a>>,
    agent: &str,
    origin: &str,
    thread_id: Option<&str>,
    seqs: Option<&[i64]>,
    kind: Option<MessageKind>,
) -> Result<usize> {
    let tx = tx.into();
    let mark = |seq: Option<i64>| {
        tx.execute(
            "UPDATE chat_mentions SET unread = 0 WHERE agent = ?1 AND agent_origin = ?2 AND unread = 1
             AND (thread_id = ?3 OR ?3 IS NULL) AND (seq = ?4 OR ?4 IS NULL) AND (kind = ?5 OR ?5 IS NULL)",
            params![agent, origin, thread_id, seq, kind],
        )
    };
    match seqs {
        None => mark(None),
        Some(list) => {
            let mut n = 0;
            for s in list {
                n += mark(Some(*s))?;
            }
            Ok(n)
        }
    }
}

/// An unread chat-kind mention of an enrolled agent in an open, non-moot thread: one per
/// (thread, agent), carrying the newest triggering seq.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoCandidate {
    pub thread_id: String,
    pub agent: String,
    pub seq: i64,
}

/// `also_enrolled` names agents enrolled by configuration rather than their registration.
pub fn autorespond_candidates<'a>(
    tx: impl Into<Tx<'a>>,
    origin: &str,
    also_enrolled: &[String],
) -> Result<Vec<AutoCandidate>> {
    let also = serde_json::to_string(also_enrolled).unwrap_or_else(|_| "[]".into());
    tx.into().query_map(
        "SELECT m.thread_id, m.agent, MAX(m.seq)
         FROM chat_mentions m
         JOIN agents a ON a.name = m.agent
           AND (a.chat_autorespond = 1 OR a.name IN (SELECT e.value FROM json_each(?2) AS e))
         JOIN chat_threads t ON t.id = m.thread_id AND t.state = 'open'
         WHERE m.unread = 1 AND m.resolved = 1 AND m.kind = 'chat' AND m.agent_origin = ?1
           AND NOT EXISTS (SELECT 1 FROM chat_thread_meta x WHERE x.thread_id = t.id AND x.key = 'moot')
         GROUP BY m.thread_id, m.agent ORDER BY m.thread_id, m.agent",
        params![origin, also],
        candidate_row,
    )
}

row_columns! {
    fn candidate_row -> AutoCandidate {
        thread_id,
        agent,
        seq,
    }
}
