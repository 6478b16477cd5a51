//! The `escalations` table: ask-gate and failure rounds awaiting a human.
//!
//! Owns the rows only; opening, answering and resolving rounds is the engine's job.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Params, Row, params, params_from_iter};
use serde::Serialize;
use serde_json::Value;

use super::Result;
use crate::clock::Millis;

pub(super) const SCHEMA: &str = "
CREATE TABLE escalations (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    root_id       TEXT NOT NULL,
    job_id        TEXT NOT NULL,
    kind          TEXT NOT NULL,
    questions     TEXT,
    reason        TEXT NOT NULL DEFAULT '',
    failed_job_id TEXT,
    delegation_id TEXT,
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

/// An ask round (healthy result with questions) or a failure round (escalate_human).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundKind {
    Ask,
    Failure,
}

impl RoundKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RoundKind::Ask => "ask",
            RoundKind::Failure => "failure",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Round {
    pub id: i64,
    pub root_id: String,
    /// The coordinator the round holds (its continuation waits for the human).
    pub job_id: String,
    pub kind: RoundKind,
    /// `[{id, prompt, choices}]` for ask rounds.
    pub questions: Value,
    pub reason: String,
    /// The job that asked, or the leg attempt that failed.
    pub failed_job_id: Option<String>,
    pub delegation_id: Option<String>,
    pub opened_ms: Millis,
    pub resolved_ms: Option<Millis>,
    pub verb: Option<String>,
    /// `{qid: text}` plus `unmatched` for ask rounds once answered.
    pub answers: Option<Value>,
    pub instructions: Option<String>,
    pub thread_id: Option<String>,
}

const COLS: &str = "id, root_id, job_id, kind, questions, reason, failed_job_id, delegation_id, opened_ms, \
    resolved_ms, verb, answers, instructions, thread_id";

fn json_col(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<Value>> {
    let t: Option<String> = r.get(i)?;
    t.map(|t| {
        serde_json::from_str(&t).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<Round> {
    let kind: String = r.get(3)?;
    Ok(Round {
        id: r.get(0)?,
        root_id: r.get(1)?,
        job_id: r.get(2)?,
        kind: if kind == "ask" {
            RoundKind::Ask
        } else {
            RoundKind::Failure
        },
        questions: json_col(r, 4)?.unwrap_or(Value::Array(vec![])),
        reason: r.get(5)?,
        failed_job_id: r.get(6)?,
        delegation_id: r.get(7)?,
        opened_ms: r.get(8)?,
        resolved_ms: r.get(9)?,
        verb: r.get(10)?,
        answers: json_col(r, 11)?,
        instructions: r.get(12)?,
        thread_id: r.get(13)?,
    })
}

/// The columns a round's later steps rewrite, in the order `mutable_values` gives them.
const MUTABLE_COLS: [&str; 7] = [
    "questions",
    "reason",
    "resolved_ms",
    "verb",
    "answers",
    "instructions",
    "thread_id",
];

fn mutable_values(r: &Round) -> [SqlValue; 7] {
    [
        r.questions.to_string().into(),
        r.reason.clone().into(),
        r.resolved_ms.into(),
        r.verb.clone().into(),
        r.answers.as_ref().map(Value::to_string).into(),
        r.instructions.clone().into(),
        r.thread_id.clone().into(),
    ]
}

/// Inserts a new round (its `id` is ignored) and returns its row id.
pub fn insert(conn: &Connection, r: &Round) -> Result<i64> {
    let sql = format!(
        "INSERT INTO escalations(root_id, job_id, kind, failed_job_id, delegation_id, opened_ms, {}) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        MUTABLE_COLS.join(", ")
    );
    let fixed: [SqlValue; 6] = [
        r.root_id.clone().into(),
        r.job_id.clone().into(),
        r.kind.as_str().to_string().into(),
        r.failed_job_id.clone().into(),
        r.delegation_id.clone().into(),
        r.opened_ms.into(),
    ];
    conn.prepare_cached(&sql)?
        .execute(params_from_iter(fixed.into_iter().chain(mutable_values(r))))?;
    Ok(conn.last_insert_rowid())
}

/// Rewrites the mutable fields of a round.
pub fn update(conn: &Connection, r: &Round) -> Result<()> {
    let set: Vec<String> = MUTABLE_COLS
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ?{}", i + 2))
        .collect();
    let sql = format!("UPDATE escalations SET {} WHERE id = ?1", set.join(", "));
    conn.prepare_cached(&sql)?.execute(params_from_iter(
        std::iter::once(SqlValue::from(r.id)).chain(mutable_values(r)),
    ))?;
    Ok(())
}

/// Records the chat thread that carries a round (chat's ask-gate thread).
pub fn set_thread(conn: &Connection, id: i64, thread_id: &str) -> Result<()> {
    conn.prepare_cached("UPDATE escalations SET thread_id = ?2 WHERE id = ?1")?
        .execute(params![id, thread_id])?;
    Ok(())
}

pub fn get(conn: &Connection, id: i64) -> Result<Option<Round>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLS} FROM escalations WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?)
}

/// The open round holding `job_id`, if any (at most one is open per job).
pub fn open_for_job(conn: &Connection, job_id: &str) -> Result<Option<Round>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLS} FROM escalations WHERE job_id = ?1 AND resolved_ms IS NULL ORDER BY id LIMIT 1"
        ))?
        .query_row([job_id], from_row)
        .optional()?)
}

/// Every round ever opened on `job_id`, oldest first.
pub fn for_job(conn: &Connection, job_id: &str) -> Result<Vec<Round>> {
    rounds(conn, "job_id = ?1 ORDER BY id", [job_id])
}

/// Whether a human resolved any round of the tree with `abort`.
pub fn aborted_in_root(conn: &Connection, root_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM escalations WHERE root_id = ?1 AND verb = 'abort' LIMIT 1")?
        .query_row([root_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Every open round, oldest first.
pub fn open(conn: &Connection) -> Result<Vec<Round>> {
    open_first(conn, None)
}

/// The oldest `limit` open rounds (all of them with `None`), walking the open-rounds index.
pub fn open_first(conn: &Connection, limit: Option<usize>) -> Result<Vec<Round>> {
    let limit = limit.map_or(-1, |n| n as i64);
    rounds(
        conn,
        "resolved_ms IS NULL ORDER BY opened_ms, id LIMIT ?1",
        [limit],
    )
}

/// Open rounds of one tree.
pub fn open_for_root(conn: &Connection, root_id: &str) -> Result<Vec<Round>> {
    rounds(
        conn,
        "root_id = ?1 AND resolved_ms IS NULL ORDER BY id",
        [root_id],
    )
}

/// The rounds matching `filter`, the SQL after `WHERE`.
fn rounds(conn: &Connection, filter: &str, params: impl Params) -> Result<Vec<Round>> {
    let mut st = conn.prepare_cached(&format!("SELECT {COLS} FROM escalations WHERE {filter}"))?;
    Ok(st
        .query_map(params, from_row)?
        .collect::<rusqlite::Result<_>>()?)
}

/// The job and kind of the newest open round linked to `thread_id`.
pub fn open_on_thread(conn: &Connection, thread_id: &str) -> Result<Option<(String, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT job_id, kind FROM escalations WHERE thread_id = ?1 AND resolved_ms IS NULL \
             ORDER BY id DESC LIMIT 1",
        )?
        .query_row([thread_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// The job of the newest round ever linked to `thread_id`, open or not.
pub fn last_job_on_thread(conn: &Connection, thread_id: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT job_id FROM escalations WHERE thread_id = ?1 ORDER BY id DESC LIMIT 1",
        )?
        .query_row([thread_id], |r| r.get(0))
        .optional()?)
}
