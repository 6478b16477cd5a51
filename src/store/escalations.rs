//! The `escalations` table: ask-gate and failure rounds awaiting a human.
//!
//! Owns the rows only; opening, answering and resolving rounds is the engine's job.

use serde::Serialize;
use serde_json::Value;

use super::Result;
use super::row::row_columns;
use super::tx::{Param, Row, Tx, params};
use super::value::FromValue;
use crate::clock::Millis;

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

impl FromValue for RoundKind {
    fn from_value(v: super::value::Value<'_>) -> std::result::Result<Self, String> {
        Ok(if String::from_value(v)? == "ask" {
            RoundKind::Ask
        } else {
            RoundKind::Failure
        })
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

row_columns! {
    const COLS;
    fn from_row -> Round {
        id,
        root_id,
        job_id,
        kind,
        questions: questions_or_empty,
        reason,
        failed_job_id,
        delegation_id,
        opened_ms,
        resolved_ms,
        verb,
        answers: Row::json,
        instructions,
        thread_id,
    }
}

/// An ask round's questions; no questions (a failure round's) read as an empty list.
fn questions_or_empty(r: &Row<'_>, index: usize) -> Result<Value> {
    Ok(r.json(index)?.unwrap_or(Value::Array(vec![])))
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

/// Hands `run` the parameters `head`, then the round's mutable values in `MUTABLE_COLS`
/// order.
fn with_mutable<T>(
    r: &Round,
    head: &[&dyn Param],
    run: impl FnOnce(&[&dyn Param]) -> Result<T>,
) -> Result<T> {
    let (questions, answers) = (
        r.questions.to_string(),
        r.answers.as_ref().map(Value::to_string),
    );
    let mutable = params![
        questions,
        r.reason,
        r.resolved_ms,
        r.verb,
        answers,
        r.instructions,
        r.thread_id
    ];
    let all: Vec<&dyn Param> = head.iter().chain(mutable).copied().collect();
    run(&all)
}

/// Inserts a new round (its `id` is ignored) and returns its row id.
pub fn insert<'a>(tx: impl Into<Tx<'a>>, r: &Round) -> Result<i64> {
    let tx = tx.into();
    let sql = format!(
        "INSERT INTO escalations(root_id, job_id, kind, failed_job_id, delegation_id, opened_ms, {}) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id",
        MUTABLE_COLS.join(", ")
    );
    let head = params![
        r.root_id,
        r.job_id,
        r.kind.as_str(),
        r.failed_job_id,
        r.delegation_id,
        r.opened_ms
    ];
    with_mutable(r, head, |all| tx.one(&sql, all))
}

/// Rewrites the mutable fields of a round.
pub fn update<'a>(tx: impl Into<Tx<'a>>, r: &Round) -> Result<()> {
    let tx = tx.into();
    let set: Vec<String> = MUTABLE_COLS
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ?{}", i + 2))
        .collect();
    let sql = format!("UPDATE escalations SET {} WHERE id = ?1", set.join(", "));
    with_mutable(r, params![r.id], |all| tx.execute(&sql, all))?;
    Ok(())
}

/// Records the chat thread that carries a round (chat's ask-gate thread).
pub(crate) fn set_thread<'a>(tx: impl Into<Tx<'a>>, id: i64, thread_id: &str) -> Result<()> {
    tx.into().execute(
        "UPDATE escalations SET thread_id = ?2 WHERE id = ?1",
        params![id, thread_id],
    )?;
    Ok(())
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, id: i64) -> Result<Option<Round>> {
    tx.into().query_opt(
        &format!("SELECT {COLS} FROM escalations WHERE id = ?1"),
        params![id],
        from_row,
    )
}

/// The open round holding `job_id`, if any (at most one is open per job).
pub(crate) fn open_for_job<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Option<Round>> {
    tx.into().query_opt(
        &format!(
            "SELECT {COLS} FROM escalations WHERE job_id = ?1 AND resolved_ms IS NULL ORDER BY id LIMIT 1"
        ),
        params![job_id],
        from_row,
    )
}

/// Every round ever opened on `job_id`, oldest first.
pub fn for_job<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Vec<Round>> {
    rounds(tx.into(), "job_id = ?1 ORDER BY id", params![job_id])
}

/// Whether a human resolved any round of the tree with `abort`.
pub(crate) fn aborted_in_root<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<bool> {
    Ok(tx
        .into()
        .query_opt(
            "SELECT 1 FROM escalations WHERE root_id = ?1 AND verb = 'abort' LIMIT 1",
            params![root_id],
            |_| Ok(()),
        )?
        .is_some())
}

/// Every open round, oldest first.
pub fn open<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<Round>> {
    open_first(tx, None)
}

/// The oldest `limit` open rounds (all of them with `None`), walking the open-rounds index.
pub(crate) fn open_first<'a>(tx: impl Into<Tx<'a>>, limit: Option<usize>) -> Result<Vec<Round>> {
    // No bound is the largest one: PostgreSQL refuses SQLite's negative "no limit".
    let limit = limit.map_or(i64::MAX, |n| n as i64);
    rounds(
        tx.into(),
        "resolved_ms IS NULL ORDER BY opened_ms, id LIMIT ?1",
        params![limit],
    )
}

/// Open rounds of one tree.
pub fn open_for_root<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<Vec<Round>> {
    rounds(
        tx.into(),
        "root_id = ?1 AND resolved_ms IS NULL ORDER BY id",
        params![root_id],
    )
}

/// The rounds matching `filter`, the SQL after `WHERE`.
fn rounds(tx: Tx<'_>, filter: &str, params: &[&dyn Param]) -> Result<Vec<Round>> {
    tx.query_map(
        &format!("SELECT {COLS} FROM escalations WHERE {filter}"),
        params,
        from_row,
    )
}

/// The job and kind of the newest open round linked to `thread_id`.
pub(crate) fn open_on_thread<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
) -> Result<Option<(String, String)>> {
    tx.into().query_opt(
        "SELECT job_id, kind FROM escalations WHERE thread_id = ?1 AND resolved_ms IS NULL \
         ORDER BY id DESC LIMIT 1",
        params![thread_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// The job of the newest round ever linked to `thread_id`, open or not.
pub(crate) fn last_job_on_thread<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
) -> Result<Option<String>> {
    tx.into().query_opt(
        "SELECT job_id FROM escalations WHERE thread_id = ?1 ORDER BY id DESC LIMIT 1",
        params![thread_id],
        |r| r.get(0),
    )
}
