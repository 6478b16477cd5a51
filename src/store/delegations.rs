//! The `delegations` table: the legs of each coordinator batch with their spec and state.

pub(super) const SCHEMA: &str = "
CREATE TABLE delegations (
    parent_id     TEXT NOT NULL REFERENCES jobs(id),
    delegation_id TEXT NOT NULL,
    root_id       TEXT NOT NULL,
    position      INTEGER NOT NULL,
    spec          TEXT NOT NULL,
    state         TEXT NOT NULL,
    job_id        TEXT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    created_ms    INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    PRIMARY KEY (parent_id, delegation_id)
);
CREATE INDEX delegations_root ON delegations(root_id);
CREATE INDEX delegations_job ON delegations(job_id);
";
