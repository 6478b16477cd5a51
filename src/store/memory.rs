//! The `memory_observations` table: facts captured from chat, with provenance, tier,
//! owner, confirmation state and whether they were shared.
//!
//! Rows only: the pre-filter, dedupe policy and auto-confirm live in `crate::chat::remember`.

use super::row::row_columns;
use super::tx::{Tx, params};
use super::value::named_values;
use gitmoot_types::named_enum;
use serde::Serialize;

use super::Result;
use crate::clock::Millis;

named_enum!(
    /// `repo` memories apply to one repo; `general` ones to every repo.
    Tier, "--tier",
    unknown(other) => format!("invalid --tier {other:?}"),
    { Repo => "repo", General => "general" }
);
named_enum!(
    /// A pending observation waits for a confirm; a confirmed one is in the owner's pool.
    ObservationState, "memory state",
    unknown(other) => format!("invalid memory state {other:?}"),
    { Pending => "pending", Confirmed => "confirmed" }
);
named_values!(Tier, ObservationState);

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

row_columns! {
    const COLS;
    fn row -> Observation {
        id,
        agent,
        tier,
        repo,
        key,
        body,
        content_hash,
        provenance,
        trust,
        state,
        shared,
        created_ms,
        updated_ms,
    }
}

/// Inserts and returns the new id.
pub fn insert<'a>(tx: impl Into<Tx<'a>>, o: &Observation) -> Result<i64> {
    tx.into().one(
        "INSERT INTO memory_observations(agent, tier, repo, key, body, content_hash, provenance, trust, state, shared, created_ms, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id",
        params![
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
    ],
    )
}

/// The observation with the same owner, tier, repo and content, if any.
pub(crate) fn find_same<'a>(
    tx: impl Into<Tx<'a>>,
    agent: &str,
    tier: Tier,
    repo: &str,
    content_hash: &str,
) -> Result<Option<Observation>> {
    tx.into().query_opt(
        &format!(
            "SELECT {COLS} FROM memory_observations WHERE agent = ?1 AND tier = ?2 AND repo = ?3 AND content_hash = ?4"
        ),
        params![agent, tier, repo, content_hash],
        row,
    )
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, id: i64) -> Result<Option<Observation>> {
    tx.into().query_opt(
        &format!("SELECT {COLS} FROM memory_observations WHERE id = ?1"),
        params![id],
        row,
    )
}

/// Observations, newest first, optionally of one owner.
pub fn list<'a>(tx: impl Into<Tx<'a>>, agent: Option<&str>) -> Result<Vec<Observation>> {
    // `agent = ?1` before `?1 IS NULL`: PostgreSQL types a parameter at its first use.
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM memory_observations WHERE (agent = ?1 OR ?1 IS NULL) ORDER BY id DESC"
        ),
        params![agent],
        row,
    )
}

pub fn update<'a>(tx: impl Into<Tx<'a>>, o: &Observation) -> Result<()> {
    tx.into().execute(
        "UPDATE memory_observations SET state = ?2, shared = ?3, updated_ms = ?4 WHERE id = ?1",
        params![o.id, o.state, o.shared, o.updated_ms],
    )?;
    Ok(())
}
