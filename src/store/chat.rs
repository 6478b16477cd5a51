//! The chat tables: threads, messages (per-thread gap-free `seq`), mentions (the inbox
//! index), per-thread metadata and the job links that route results back into threads.
//!
//! Rows and queries only: whether a send is allowed, who gets an inbox row and when a job
//! result is posted are decided in `crate::chat`. Must not touch job or escalation rows.

use crate::domain::named_enum;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use super::Result;
use crate::Invalid;
use crate::clock::Millis;

pub(super) const SCHEMA: &str = "
CREATE TABLE chat_threads (
    id         TEXT PRIMARY KEY,
    slug       TEXT NOT NULL,
    title      TEXT NOT NULL,
    repo       TEXT NOT NULL,
    origin     TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'open',
    created_by TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    UNIQUE (repo, slug)
);
CREATE INDEX chat_threads_slug ON chat_threads(slug);
CREATE TABLE chat_messages (
    id              TEXT PRIMARY KEY,
    origin          TEXT NOT NULL,
    thread_id       TEXT NOT NULL REFERENCES chat_threads(id),
    seq             INTEGER NOT NULL,
    ts_ms           INTEGER NOT NULL,
    author_kind     TEXT NOT NULL,
    author_name     TEXT NOT NULL,
    author_origin   TEXT NOT NULL,
    kind            TEXT NOT NULL DEFAULT 'chat',
    body            TEXT NOT NULL,
    envelope_json   TEXT NOT NULL,
    refs_json       TEXT NOT NULL DEFAULT '[]',
    reply_to        INTEGER,
    promoted_job_id TEXT,
    job_id          TEXT,
    content_hash    TEXT,
    signature       TEXT,
    signer_pubkey   TEXT,
    UNIQUE (thread_id, seq)
);
CREATE INDEX chat_messages_promoted ON chat_messages(promoted_job_id) WHERE promoted_job_id IS NOT NULL;
CREATE INDEX chat_messages_job ON chat_messages(job_id) WHERE job_id IS NOT NULL;
CREATE INDEX chat_messages_kind ON chat_messages(thread_id, kind, author_name) WHERE kind != 'chat';
CREATE INDEX chat_messages_agent_turns ON chat_messages(thread_id) WHERE kind = 'chat' AND author_kind = 'agent';
CREATE UNIQUE INDEX chat_messages_hash ON chat_messages(content_hash) WHERE content_hash IS NOT NULL;
CREATE TABLE chat_mentions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id   TEXT NOT NULL REFERENCES chat_messages(id),
    thread_id    TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    agent        TEXT NOT NULL,
    agent_origin TEXT NOT NULL,
    resolved     INTEGER NOT NULL DEFAULT 1,
    unread       INTEGER NOT NULL DEFAULT 1,
    created_ms   INTEGER NOT NULL
);
CREATE INDEX chat_mentions_inbox ON chat_mentions(agent, id);
CREATE INDEX chat_mentions_unread ON chat_mentions(agent, agent_origin) WHERE unread = 1 AND resolved = 1;
-- The per-thread unread badge reads this small index only, never the whole history.
CREATE INDEX chat_mentions_thread_badges ON chat_mentions(thread_id) WHERE unread = 1 AND resolved = 1;
CREATE TABLE chat_thread_meta (
    thread_id  TEXT NOT NULL REFERENCES chat_threads(id),
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (thread_id, key)
);
CREATE TABLE chat_job_links (
    root_id    TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL REFERENCES chat_threads(id),
    reply_to   INTEGER NOT NULL,
    purpose    TEXT NOT NULL,
    agent      TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE INDEX chat_job_links_thread ON chat_job_links(thread_id, agent, purpose);
";

/// Unread badge counters kept by triggers in the writer's own transaction, so they are
/// exact under any number of concurrent writers (SQLite serialises them) and a badge read
/// is a few rows however long the history. A counted mention is `unread = 1 AND resolved
/// = 1`; rows that fall to zero stay and are filtered out on read.
pub(super) const UNREAD_COUNTERS: &str = "
CREATE TABLE chat_unread (
    agent        TEXT NOT NULL,
    agent_origin TEXT NOT NULL,
    thread_id    TEXT NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (agent, agent_origin, thread_id)
) WITHOUT ROWID;
INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
    SELECT agent, agent_origin, thread_id, COUNT(*) FROM chat_mentions
    WHERE unread = 1 AND resolved = 1 GROUP BY agent, agent_origin, thread_id;
CREATE TRIGGER chat_unread_insert AFTER INSERT ON chat_mentions
    WHEN NEW.unread = 1 AND NEW.resolved = 1
BEGIN
    INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
        VALUES (NEW.agent, NEW.agent_origin, NEW.thread_id, 1)
        ON CONFLICT(agent, agent_origin, thread_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER chat_unread_update_old AFTER UPDATE OF unread, resolved, agent, agent_origin, thread_id
    ON chat_mentions WHEN OLD.unread = 1 AND OLD.resolved = 1
BEGIN
    UPDATE chat_unread SET n = n - 1
        WHERE agent = OLD.agent AND agent_origin = OLD.agent_origin AND thread_id = OLD.thread_id;
END;
CREATE TRIGGER chat_unread_update_new AFTER UPDATE OF unread, resolved, agent, agent_origin, thread_id
    ON chat_mentions WHEN NEW.unread = 1 AND NEW.resolved = 1
BEGIN
    INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
        VALUES (NEW.agent, NEW.agent_origin, NEW.thread_id, 1)
        ON CONFLICT(agent, agent_origin, thread_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER chat_unread_delete AFTER DELETE ON chat_mentions
    WHEN OLD.unread = 1 AND OLD.resolved = 1
BEGIN
    UPDATE chat_unread SET n = n - 1
        WHERE agent = OLD.agent AND agent_origin = OLD.agent_origin AND thread_id = OLD.thread_id;
END;
";

named_enum!(
    /// Open threads take messages; archived ones are kept for audit only.
    ThreadState, "chat thread state",
    unknown(other) => Invalid(format!("chat thread state {other:?} is not supported")),
    { Open => "open", Archived => "archived" }
);

named_enum!(
    /// The fixed message vocabulary; only `chat` is ever scanned for mentions.
    MessageKind, "chat message kind",
    unknown(other) => Invalid(format!("chat message kind {other:?} is not supported")),
    {
        Chat => "chat",
        PromotionRequest => "promotion_request",
        JobResult => "job_result",
        System => "system",
    }
);

named_enum!(
    /// Who wrote a message.
    AuthorKind, "chat author kind",
    unknown(other) => Invalid(format!("chat author kind {other:?} is not supported")),
    { Human => "human", Agent => "agent", System => "system" }
);

named_enum!(
    /// Why a tree is linked to a thread, which decides what its result looks like there.
    LinkPurpose, "chat link purpose",
    unknown(other) => Invalid(format!("chat link purpose {other:?} is not supported")),
    {
        Promotion => "promotion",
        AutoRespond => "auto_respond",
        MootSeat => "moot_seat",
        AskGate => "ask_gate",
    }
);

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thread {
    pub id: String,
    pub slug: String,
    pub title: String,
    pub repo: String,
    pub origin: String,
    pub state: ThreadState,
    pub created_by: String,
    pub created_ms: Millis,
    pub updated_ms: Millis,
}

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

const THREAD_COLS: &str =
    "id, slug, title, repo, origin, state, created_by, created_ms, updated_ms";

/// The columns of a thread read back, with `updated_ms` raised to its newest message: a
/// send does not rewrite the thread row (one page less per message).
const THREAD_READ: &str = "t.id, t.slug, t.title, t.repo, t.origin, t.state, t.created_by, t.created_ms, \
    MAX(t.updated_ms, COALESCE((SELECT c.ts_ms FROM chat_messages c WHERE c.thread_id = t.id ORDER BY c.seq DESC LIMIT 1), 0))";

fn thread_row(r: &Row<'_>) -> rusqlite::Result<Thread> {
    Ok(Thread {
        id: r.get(0)?,
        slug: r.get(1)?,
        title: r.get(2)?,
        repo: r.get(3)?,
        origin: r.get(4)?,
        state: r.get(5)?,
        created_by: r.get(6)?,
        created_ms: r.get(7)?,
        updated_ms: r.get(8)?,
    })
}

pub fn insert_thread(conn: &Connection, t: &Thread) -> Result<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO chat_threads({THREAD_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
    ))?
    .execute(params![
        t.id,
        t.slug,
        t.title,
        t.repo,
        t.origin,
        t.state,
        t.created_by,
        t.created_ms,
        t.updated_ms
    ])?;
    Ok(())
}

pub fn thread(conn: &Connection, id: &str) -> Result<Option<Thread>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {THREAD_READ} FROM chat_threads t WHERE t.id = ?1"
        ))?
        .query_row([id], thread_row)
        .optional()?)
}

/// Threads with this slug, in one repo or in all of them, archived included.
pub fn threads_by_slug(conn: &Connection, slug: &str, repo: Option<&str>) -> Result<Vec<Thread>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {THREAD_READ} FROM chat_threads t WHERE t.slug = ?1 AND (?2 IS NULL OR t.repo = ?2) ORDER BY t.repo"
    ))?;
    Ok(st
        .query_map(params![slug, repo], thread_row)?
        .collect::<rusqlite::Result<_>>()?)
}

/// Threads, most recent activity first.
pub fn list_threads(
    conn: &Connection,
    repo: Option<&str>,
    include_archived: bool,
) -> Result<Vec<Thread>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {THREAD_READ} AS activity FROM chat_threads t WHERE (?1 IS NULL OR t.repo = ?1) AND (?2 OR t.state = 'open')
         ORDER BY activity DESC, t.id DESC"
    ))?;
    Ok(st
        .query_map(params![repo, include_archived], thread_row)?
        .collect::<rusqlite::Result<_>>()?)
}

pub fn update_thread(conn: &Connection, t: &Thread) -> Result<()> {
    conn.prepare_cached(
        "UPDATE chat_threads SET title = ?2, state = ?3, updated_ms = ?4 WHERE id = ?1",
    )?
    .execute(params![t.id, t.title, t.state, t.updated_ms])?;
    Ok(())
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

pub fn insert_mention(conn: &Connection, m: &Mention) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO chat_mentions(message_id, thread_id, seq, kind, agent, agent_origin, resolved, unread, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        m.message_id,
        m.thread_id,
        m.seq,
        m.kind,
        m.agent,
        m.agent_origin,
        m.resolved,
        m.unread,
        m.created_ms
    ])?;
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
pub fn inbox(
    conn: &Connection,
    agent: &str,
    origin: &str,
    unread_only: bool,
    limit: Option<usize>,
) -> Result<Vec<InboxRow>> {
    let mut out = Vec::new();
    inbox_each(conn, agent, origin, unread_only, limit, None, |r| {
        out.push(r);
        Ok::<_, super::StoreError>(())
    })?;
    Ok(out)
}

fn inbox_row(r: &Row<'_>) -> rusqlite::Result<InboxRow> {
    Ok(InboxRow {
        mention_id: r.get(0)?,
        thread_id: r.get(1)?,
        thread_slug: r.get(2)?,
        repo: r.get(3)?,
        seq: r.get(4)?,
        kind: r.get(5)?,
        author: r.get(6)?,
        body: r.get(7)?,
        ts_ms: r.get(8)?,
        unread: r.get(9)?,
    })
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
pub fn inbox_each<E: From<super::StoreError>>(
    conn: &Connection,
    agent: &str,
    origin: &str,
    unread_only: bool,
    limit: Option<usize>,
    before: Option<i64>,
    mut each: impl FnMut(InboxRow) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut st = conn
        .prepare_cached(&inbox_query(unread_only))
        .map_err(super::StoreError::from)?;
    let limit = limit.map(|n| n as i64).unwrap_or(-1);
    let mut rows = st
        .query(params![agent, origin, limit, before.unwrap_or(i64::MAX)])
        .map_err(super::StoreError::from)?;
    while let Some(r) = rows.next().map_err(super::StoreError::from)? {
        each(inbox_row(r).map_err(super::StoreError::from)?)?;
    }
    Ok(())
}

/// Unread resolved mentions per agent, for inbox badges (from the maintained counters).
pub fn unread_counts(conn: &Connection, origin: &str) -> Result<Vec<(String, i64)>> {
    let mut st = conn.prepare_cached(
        "SELECT agent, SUM(n) FROM chat_unread WHERE agent_origin = ?1
         GROUP BY agent HAVING SUM(n) > 0 ORDER BY agent",
    )?;
    Ok(st
        .query_map([origin], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Unread resolved mentions per thread, every origin (the thread list's badges).
pub fn unread_by_thread(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let mut st = conn.prepare_cached(
        "SELECT thread_id, SUM(n) FROM chat_unread GROUP BY thread_id HAVING SUM(n) > 0",
    )?;
    Ok(st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Every unread resolved mention, from the counters (a change signature for badges).
pub fn unread_total(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(SUM(n), 0) FROM chat_unread")?
        .query_row([], |r| r.get(0))?)
}

/// Marks mentions read: one thread or all, some seqs or all, some kinds or all.
pub fn mark_read(
    conn: &Connection,
    agent: &str,
    origin: &str,
    thread_id: Option<&str>,
    seqs: Option<&[i64]>,
    kind: Option<MessageKind>,
) -> Result<usize> {
    let mut st = conn.prepare_cached(
        "UPDATE chat_mentions SET unread = 0 WHERE agent = ?1 AND agent_origin = ?2 AND unread = 1
         AND (?3 IS NULL OR thread_id = ?3) AND (?4 IS NULL OR seq = ?4) AND (?5 IS NULL OR kind = ?5)",
    )?;
    match seqs {
        None => Ok(st.execute(params![agent, origin, thread_id, None::<i64>, kind])?),
        Some(list) => {
            let mut n = 0;
            for s in list {
                n += st.execute(params![agent, origin, thread_id, s, kind])?;
            }
            Ok(n)
        }
    }
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

pub fn meta_get(conn: &Connection, thread_id: &str, key: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT value FROM chat_thread_meta WHERE thread_id = ?1 AND key = ?2")?
        .query_row(params![thread_id, key], |r| r.get(0))
        .optional()?)
}

pub fn meta_set(
    conn: &Connection,
    thread_id: &str,
    key: &str,
    value: &str,
    now: Millis,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO chat_thread_meta(thread_id, key, value, updated_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(thread_id, key) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms",
    )?
    .execute(params![thread_id, key, value, now])?;
    Ok(())
}

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
pub fn insert_link(conn: &Connection, l: &JobLink) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "INSERT INTO chat_job_links(root_id, thread_id, reply_to, purpose, agent, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(root_id) DO NOTHING",
        )?
        .execute(params![
            l.root_id,
            l.thread_id,
            l.reply_to,
            l.purpose,
            l.agent,
            l.created_ms
        ])?
        > 0)
}

fn link_row(r: &Row<'_>) -> rusqlite::Result<JobLink> {
    Ok(JobLink {
        root_id: r.get(0)?,
        thread_id: r.get(1)?,
        reply_to: r.get(2)?,
        purpose: r.get(3)?,
        agent: r.get(4)?,
        created_ms: r.get(5)?,
    })
}

pub fn link(conn: &Connection, root_id: &str) -> Result<Option<JobLink>> {
    Ok(conn
        .prepare_cached(
            "SELECT root_id, thread_id, reply_to, purpose, agent, created_ms FROM chat_job_links WHERE root_id = ?1",
        )?
        .query_row([root_id], link_row)
        .optional()?)
}

/// Links of one purpose for (thread, agent) whose root job is still queued or running.
pub fn in_flight_links(
    conn: &Connection,
    thread_id: &str,
    agent: &str,
    purpose: LinkPurpose,
) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "SELECT COUNT(*) FROM chat_job_links l JOIN jobs j ON j.id = l.root_id
             WHERE l.thread_id = ?1 AND l.agent = ?2 AND l.purpose = ?3 AND j.state IN ('queued', 'running')",
        )?
        .query_row(params![thread_id, agent, purpose], |r| r.get(0))?)
}

/// When the newest link of one purpose for (thread, agent) was made.
pub fn last_link_ms(
    conn: &Connection,
    thread_id: &str,
    agent: &str,
    purpose: LinkPurpose,
) -> Result<Option<Millis>> {
    Ok(conn
        .prepare_cached(
            "SELECT MAX(created_ms) FROM chat_job_links WHERE thread_id = ?1 AND agent = ?2 AND purpose = ?3",
        )?
        .query_row(params![thread_id, agent, purpose], |r| r.get(0))?)
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
pub fn autorespond_candidates(
    conn: &Connection,
    origin: &str,
    also_enrolled: &[String],
) -> Result<Vec<AutoCandidate>> {
    let also = serde_json::to_string(also_enrolled).unwrap_or_else(|_| "[]".into());
    let mut st = conn.prepare_cached(
        "SELECT m.thread_id, m.agent, MAX(m.seq)
         FROM chat_mentions m
         JOIN agents a ON a.name = m.agent
           AND (a.chat_autorespond = 1 OR a.name IN (SELECT value FROM json_each(?2)))
         JOIN chat_threads t ON t.id = m.thread_id AND t.state = 'open'
         WHERE m.unread = 1 AND m.resolved = 1 AND m.kind = 'chat' AND m.agent_origin = ?1
           AND NOT EXISTS (SELECT 1 FROM chat_thread_meta x WHERE x.thread_id = t.id AND x.key = 'moot')
         GROUP BY m.thread_id, m.agent ORDER BY m.thread_id, m.agent",
    )?;
    Ok(st
        .query_map(params![origin, also], |r| {
            Ok(AutoCandidate {
                thread_id: r.get(0)?,
                agent: r.get(1)?,
                seq: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// Whether an agent with this exact name is registered (no row decoding: the send path
/// asks this once per mention).
pub fn agent_exists(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM agents WHERE name = ?1")?
        .query_row([name], |_| Ok(()))
        .optional()?
        .is_some())
}

/// This home's origin stamp (`meta.home_id`), through a cached statement.
pub fn origin(conn: &Connection) -> Result<String> {
    conn.prepare_cached("SELECT value FROM meta WHERE key = 'home_id'")?
        .query_row([], |r| r.get(0))
        .optional()?
        .ok_or_else(|| super::StoreError::not_found("meta home_id is missing"))
}
