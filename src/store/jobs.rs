//! The `jobs` table: every root, leg, continuation and finalize job with its prompt,
//! outcome, output, usage and timing.

mod reads;
mod writes;

pub use reads::{
    JobFilter, ListColumns, by_root, by_root_in_state, children, count_daemon_running, count_state,
    exists, get, list, list_each, list_query, list_readable, live_in_root, require, resolve_id,
    to_terminate,
};
pub use writes::{put, put_over, quarantine};

use serde::Serialize;
use serde_json::Value;

use super::row::{counter, json_text, row_columns};
use super::tx::Row;
use super::{Result, StoreError};
use crate::clock::Millis;
use crate::domain::{Action, JobKind, JobState};

/// What the engine still owes a settled job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowUp {
    /// Nothing: the job's own outcome is its outcome.
    None,
    /// Its batch of legs is in flight.
    Batch,
    /// A continuation (or finalize) job speaks for it.
    Continued,
    /// Its batch blocked it (`followup_reason`).
    Blocked,
}

impl FollowUp {
    pub fn as_str(self) -> &'static str {
        match self {
            FollowUp::None => "none",
            FollowUp::Batch => "batch",
            FollowUp::Continued => "continued",
            FollowUp::Blocked => "blocked",
        }
    }
}

impl super::value::Param for FollowUp {
    fn value(&self) -> super::value::Value<'_> {
        super::value::Value::Text(self.as_str().into())
    }
}

impl super::value::FromValue for FollowUp {
    fn from_value(v: super::value::Value<'_>) -> std::result::Result<Self, String> {
        Ok(
            match <String as super::value::FromValue>::from_value(v)?.as_str() {
                "batch" => FollowUp::Batch,
                "continued" => FollowUp::Continued,
                "blocked" => FollowUp::Blocked,
                _ => FollowUp::None,
            },
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub id: String,
    pub root_id: String,
    pub parent_id: Option<String>,
    pub delegation_id: Option<String>,
    pub kind: JobKind,
    pub agent: String,
    pub action: Action,
    pub prompt: String,
    pub repo: Option<String>,
    pub state: JobState,
    pub attempt: u32,
    pub depth: u32,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub phase: Option<String>,
    pub timeout_ms: Option<i64>,
    pub fingerprint: Option<String>,
    pub retries_left: u32,
    /// The ephemeral worker spec of a leg that has no registered agent.
    pub ephemeral: Option<Value>,
    /// The parsed `gitmoot_result`, once the job settled with one.
    pub result: Option<Value>,
    pub raw_output: Option<String>,
    pub output_truncated: bool,
    pub error: Option<String>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    pub dispatched_by: String,
    pub runtime_pid: Option<i64>,
    pub worktree: Option<String>,
    /// What the engine still owes this job after it settled (its batch, its continuation).
    pub followup: FollowUp,
    /// Why the follow-up blocked (block_parent, a failed vote or quorum).
    pub followup_reason: Option<String>,
    /// The continuation or finalize job that speaks for this job's outcome.
    pub continuation_id: Option<String>,
    /// Engine state carried from one generation to the next (loop window, streaks).
    pub carry: Option<Value>,
    pub created_ms: Millis,
    pub started_ms: Option<Millis>,
    pub finished_ms: Option<Millis>,
    pub updated_ms: Millis,
    /// The daemon (`daemons.id`) whose lease covers it while it runs.
    pub daemon_id: Option<String>,
    /// The host label its daemon must carry (`job run --on`), inherited down the tree.
    pub on_label: Option<String>,
}

impl Job {
    /// A fresh queued job with everything optional left empty.
    pub fn queued(
        id: String,
        root_id: String,
        kind: JobKind,
        agent: String,
        action: Action,
        prompt: String,
        now: Millis,
    ) -> Self {
        Self {
            id,
            root_id,
            parent_id: None,
            delegation_id: None,
            kind,
            agent,
            action,
            prompt,
            repo: None,
            state: JobState::Queued,
            attempt: 1,
            depth: 0,
            model: None,
            effort: None,
            phase: None,
            timeout_ms: None,
            fingerprint: None,
            retries_left: 0,
            ephemeral: None,
            result: None,
            raw_output: None,
            output_truncated: false,
            error: None,
            tokens_in: 0,
            tokens_out: 0,
            cost_usd: 0.0,
            dispatched_by: String::new(),
            runtime_pid: None,
            worktree: None,
            followup: FollowUp::None,
            followup_reason: None,
            continuation_id: None,
            carry: None,
            created_ms: now,
            started_ms: None,
            finished_ms: None,
            updated_ms: now,
            daemon_id: None,
            on_label: None,
        }
    }

    pub fn tokens(&self) -> u64 {
        self.tokens_in + self.tokens_out
    }
}

/// A job row that cannot be decoded (a corrupt column), named so one bad row fails or is
/// skipped alone instead of stopping every read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("job {id} is unreadable: column {column}: {reason}")]
pub struct Unreadable {
    pub id: String,
    pub column: String,
    pub reason: String,
}

/// The unreadable row behind `e`, when that is what it is.
pub(crate) fn unreadable(e: &StoreError) -> Option<&Unreadable> {
    match e {
        StoreError::Unreadable(u) => Some(u),
        _ => None,
    }
}

/// Decodes one row; a failure names the job and the column.
pub(crate) fn from_row(r: &Row<'_>) -> Result<Job> {
    decode_row(r).map_err(|e| match e {
        StoreError::Column { index, reason } => StoreError::Unreadable(Unreadable {
            id: r.get::<String>(0).unwrap_or_default(),
            column: COLS.split(", ").nth(index).unwrap_or("?").to_string(),
            reason,
        }),
        other => other,
    })
}

row_columns! {
    pub(crate) const COLS;
    fn decode_row -> Job in "jobs" {
        id,
        root_id,
        parent_id,
        delegation_id,
        kind,
        agent,
        action,
        prompt,
        repo,
        state,
        attempt,
        depth,
        model,
        effort,
        phase,
        timeout_ms,
        fingerprint,
        retries_left,
        ephemeral: Row::json => json_text,
        result: Row::json => json_text,
        raw_output,
        output_truncated,
        error,
        tokens_in: counter,
        tokens_out: counter,
        cost_usd,
        dispatched_by,
        runtime_pid,
        worktree,
        followup,
        followup_reason,
        continuation_id,
        carry: Row::json => json_text,
        created_ms,
        started_ms,
        finished_ms,
        updated_ms,
        daemon_id,
        on_label,
    }
}
