//! The `memory_observations` table: facts captured from chat, with provenance, tier,
//! owner, confirmation state and whether they were shared.
//!
//! Rows only: the pre-filter, dedupe policy and auto-confirm live in `crate::chat::remember`.

use crate::domain::named_enum;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use super::Result;
use crate::Invalid;
use crate::clock::Millis;

pub(super) const SCHEMA: &str = "
CREATE TABLE memory_observations (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    agent        TEXT NOT NULL,
    tier         TEXT NOT NULL,
    repo         TEXT NOT NULL DEFAULT '',
    key          TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    provenance   TEXT NOT NULL,
    trust        TEXT NOT NULL DEFAULT 'low',
    state        TEXT NOT NULL,
    shared       INTEGER NOT NULL DEFAULT 0,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL,
    UNIQUE (agent, tier, repo, content_hash)
);
CREATE INDEX memory_agent ON memory_observations(agent, state);
";

named_enum!(
    /// `repo` memories apply to one repo; `general` ones to every repo.
    Tier, "--tier",
    unknown(other) => Invalid(format!("invalid --tier {other:?}")),
    { Repo => "repo", General => "general" }
);
named_enum!(
    /// A pending observation waits for a confirm; a confirmed one is in the owner's pool.
    ObservationState, "memory state",
    unknown(other) => Invalid(format!("invalid memory state {other:?}")),
    { Pending => "pending", Confirmed => "confirmed" }
);

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    pub id: i64,
    pub agent: String,
    pub tier: Tier,
    /// Empty for the general tier.
    pub repo: String,
    pub key: String,
    pub body: String,
    pub content_hash: String,
    pub provenance: String,
    pub trust: String,
    pub state: ObservationState,
    pub shared: bool,
    pub created_ms: Millis,
    pub updated_ms: Millis,
}

const COLS: &str = "id, agent, tier, repo, key, body, content_hash, provenance, trust, state, shared, created_ms, updated_ms";

fn row(r: &Row<'_>) -> rusqlite::Result<Observation> {
    Ok(Observation {
        id: r.get(0)?,
        agent: r.get(1)?,
        tier: r.get(2)?,
        repo: r.get(3)?,
        key: r.get(4)?,
        body: r.get(5)?,
        content_hash: r.get(6)?,
        provenance: r.get(7)?,
        trust: r.get(8)?,
        state: r.get(9)?,
        shared: r.get(10)?,
        created_ms: r.get(11)?,
        updated_ms: r.get(12)?,
    })
}

/// Inserts and returns the new id.
pub fn insert(conn: &Connection, o: &Observation) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO memory_observations(agent, tier, repo, key, body, content_hash, provenance, trust, state, shared, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        o.agent,
        o.tier,
        o.repo,
        o.key,
        o.body,
        o.content_hash,
        o.provenance,
        o.trust,
        o.state,
        o.shared,
        o.created_ms,
        o.updated_ms
    ])?;
    Ok(conn.last_insert_rowid())
}

/// The observation with the same owner, tier, repo and content, if any.
pub fn find_same(
    conn: &Connection,
    agent: &str,
    tier: Tier,
    repo: &str,
    content_hash: &str,
) -> Result<Option<Observation>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLS} FROM memory_observations WHERE agent = ?1 AND tier = ?2 AND repo = ?3 AND content_hash = ?4"
        ))?
        .query_row(params![agent, tier, repo, content_hash], row)
        .optional()?)
}

pub fn get(conn: &Connection, id: i64) -> Result<Option<Observation>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLS} FROM memory_observations WHERE id = ?1"
        ))?
        .query_row([id], row)
        .optional()?)
}

/// Observations, newest first, optionally of one owner.
pub fn list(conn: &Connection, agent: Option<&str>) -> Result<Vec<Observation>> {
    let mut st = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM memory_observations WHERE (?1 IS NULL OR agent = ?1) ORDER BY id DESC"
    ))?;
    Ok(st
        .query_map(params![agent], row)?
        .collect::<rusqlite::Result<_>>()?)
}

pub fn update(conn: &Connection, o: &Observation) -> Result<()> {
    conn.prepare_cached(
        "UPDATE memory_observations SET state = ?2, shared = ?3, updated_ms = ?4 WHERE id = ?1",
    )?
    .execute(params![o.id, o.state, o.shared, o.updated_ms])?;
    Ok(())
}
