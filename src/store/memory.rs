//! The `memory_observations` table: facts captured from chat, with provenance and tier.

pub(super) const SCHEMA: &str = "
CREATE TABLE memory_observations (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    agent        TEXT NOT NULL,
    tier         TEXT NOT NULL,
    repo         TEXT,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    provenance   TEXT NOT NULL,
    state        TEXT NOT NULL,
    shared       INTEGER NOT NULL DEFAULT 0,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL
);
CREATE INDEX memory_agent ON memory_observations(agent, state);
";
