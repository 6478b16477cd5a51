//! The chat tables: threads, messages (per-thread gap-free `seq`), mentions (the inbox
//! index), per-thread metadata and the job links that route results back into threads.
//! This file holds the schema, the shared vocabulary and the two lookups of other tables;
//! each table's rows live in its own child file.
//!
//! Rows and queries only: whether a send is allowed, who gets an inbox row and when a job
//! result is posted are decided in `crate::chat`. Must not touch job or escalation rows.

use super::Result;
use super::tx::{Tx, params};
use super::value::named_values;

mod links;
mod mentions;
mod messages;
mod seen;
mod threads;
mod unread;

pub use gitmoot_types::{AuthorKind, LinkPurpose, MessageKind, ThreadState};
pub use links::{JobLink, in_flight_links, insert_link, last_link_ms, link};
pub use mentions::{
    AutoCandidate, InboxRow, Mention, autorespond_candidates, inbox, inbox_each, inbox_query,
    insert_mention, mark_read,
};
pub use messages::{
    Message, Ref, authors, count_agent_turns, count_kind, insert_message, last_result_ms, last_seq,
    mentioned_agents, message_by_seq, messages, next_seq, recent_promotion_exists, result_posted,
    set_promoted_job, system_body_exists,
};
pub(in crate::store) use seen::SCHEMA as SEEN_SCHEMA;
pub use seen::{count_unseen, mark_seen, unseen_by_thread};
pub use threads::{
    Thread, insert_thread, list_threads, meta_get, meta_set, thread, threads_by_slug, update_thread,
};
pub(super) use unread::{UNREAD_COUNTERS, UNREAD_TRIGGERS};

/// The per-thread badge index the maintained counters (`chat_unread`) replaced: every send
/// still paid for it (a page written per mention) though no read used it any more.
pub(in crate::store) const DROP_BADGE_INDEX: &str =
    "DROP INDEX IF EXISTS chat_mentions_thread_badges;";

/// The columns of `chat_mentions` after its `id`, shared by the first schema and the
/// rebuild of migration 6.
macro_rules! mention_columns {
    () => {
        "    message_id   TEXT NOT NULL REFERENCES chat_messages(id),
    thread_id    TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    agent        TEXT NOT NULL,
    agent_origin TEXT NOT NULL,
    resolved     INTEGER NOT NULL DEFAULT 1,
    unread       INTEGER NOT NULL DEFAULT 1,
    created_ms   INTEGER NOT NULL
);
"
    };
}

/// The indexes `chat_mentions` serves its inbox and unread reads with.
macro_rules! mention_indexes {
    () => {
        "CREATE INDEX chat_mentions_inbox ON chat_mentions(agent, id);
CREATE INDEX chat_mentions_unread ON chat_mentions(agent, agent_origin) WHERE unread = 1 AND resolved = 1;
"
    };
}

/// `chat_mentions` rebuilt with a plain `INTEGER PRIMARY KEY`: `AUTOINCREMENT` rewrote its
/// `sqlite_sequence` row, one more page, on every mention sent. Mentions are never deleted,
/// so a new id is still the largest so far plus one and the inbox cursors keep their order.
/// The ids, the indexes and (through `UNREAD_TRIGGERS`, run after this) the counters'
/// triggers come back as they were.
pub(in crate::store) const MENTIONS_WITHOUT_AUTOINCREMENT: &str = concat!(
    "CREATE TABLE chat_mentions_rebuilt (\n    id           INTEGER PRIMARY KEY,\n",
    mention_columns!(),
    "INSERT INTO chat_mentions_rebuilt(id, message_id, thread_id, seq, kind, agent, agent_origin, resolved, unread, created_ms)
    SELECT id, message_id, thread_id, seq, kind, agent, agent_origin, resolved, unread, created_ms FROM chat_mentions;
DROP TABLE chat_mentions;
ALTER TABLE chat_mentions_rebuilt RENAME TO chat_mentions;
DELETE FROM sqlite_sequence WHERE name = 'chat_mentions';
",
    mention_indexes!(),
);
pub use unread::{unread_by_thread, unread_counts, unread_in_thread, unread_total};

pub(super) const SCHEMA: &str = concat!(
    "
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
",
    mention_columns!(),
    mention_indexes!(),
    "-- (Migration 5 drops `chat_mentions_thread_badges`, made here before the counters.)
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
",
);

named_values!(ThreadState, MessageKind, AuthorKind, LinkPurpose);

/// Whether an agent with this exact name is registered (no row decoding: the send path
/// asks this once per mention).
pub fn agent_exists<'a>(tx: impl Into<Tx<'a>>, name: &str) -> Result<bool> {
    Ok(tx
        .into()
        .query_opt(
            "SELECT 1 FROM agents WHERE name = ?1",
            params![name],
            |_| Ok(()),
        )?
        .is_some())
}

/// This home's origin stamp (`meta.home_id`), through a cached statement.
pub fn origin<'a>(tx: impl Into<Tx<'a>>) -> Result<String> {
    tx.into()
        .query_opt(
            "SELECT value FROM meta WHERE key = 'home_id'",
            params![],
            |r| r.get(0),
        )?
        .ok_or_else(|| super::StoreError::not_found("meta home_id is missing"))
}
