//! The chat tables: threads, messages (per-thread gap-free `seq`), mentions (the inbox
//! index) and per-thread metadata.

pub(super) const SCHEMA: &str = "
CREATE TABLE chat_threads (
    id         TEXT PRIMARY KEY,
    slug       TEXT NOT NULL,
    title      TEXT NOT NULL,
    topic      TEXT NOT NULL DEFAULT '',
    repo       TEXT NOT NULL,
    origin     TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'open',
    created_by TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    UNIQUE (repo, slug)
);
CREATE INDEX chat_threads_activity ON chat_threads(state, updated_ms);
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
    content_hash    TEXT,
    signature       TEXT,
    signer_pubkey   TEXT,
    UNIQUE (thread_id, seq)
);
CREATE INDEX chat_messages_promoted ON chat_messages(promoted_job_id);
CREATE UNIQUE INDEX chat_messages_hash ON chat_messages(content_hash) WHERE content_hash IS NOT NULL;
CREATE TABLE chat_mentions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id   TEXT NOT NULL REFERENCES chat_messages(id),
    thread_id    TEXT NOT NULL,
    agent        TEXT NOT NULL,
    agent_origin TEXT NOT NULL,
    resolved     INTEGER NOT NULL DEFAULT 1,
    unread       INTEGER NOT NULL DEFAULT 1,
    created_ms   INTEGER NOT NULL
);
CREATE INDEX chat_mentions_inbox ON chat_mentions(agent, unread);
CREATE INDEX chat_mentions_message ON chat_mentions(message_id);
CREATE TABLE chat_thread_meta (
    thread_id  TEXT NOT NULL REFERENCES chat_threads(id),
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (thread_id, key)
);
";
