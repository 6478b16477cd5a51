//! The `escalations` table: ask-gate and failure rounds awaiting a human.

pub(super) const SCHEMA: &str = "
CREATE TABLE escalations (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    root_id       TEXT NOT NULL,
    job_id        TEXT NOT NULL,
    kind          TEXT NOT NULL,
    questions     TEXT,
    reason        TEXT NOT NULL DEFAULT '',
    failed_job_id TEXT,
    opened_ms     INTEGER NOT NULL,
    resolved_ms   INTEGER,
    verb          TEXT,
    answers       TEXT,
    instructions  TEXT,
    thread_id     TEXT
);
CREATE INDEX escalations_open ON escalations(resolved_ms, opened_ms);
CREATE INDEX escalations_job ON escalations(job_id);
CREATE INDEX escalations_root ON escalations(root_id);
";
