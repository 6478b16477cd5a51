//! Session review jobs: a review done in the operator's own session (no daemon, no
//! runtime) recorded as a root job. `job open` starts one as `running`, `job note` adds
//! progress notes, `job close` settles it with a result; `job record` does all at once.
//!
//! The result goes through the contract (so `changes_requested` needs `--severity`) and
//! through `settle` (so result checks and `blocking_severity` apply). Its review status
//! is always graded `reported` and `non_authoritative`: the reviewer's identity is the
//! caller's assertion. Pure over the caller's transaction.

use crate::store::Tx;
use serde_json::json;

use super::{EngineError, Env, Outcome, Settlement};
use crate::Invalid;
use crate::clock::Clock;
use crate::contract::GitmootResult;
use crate::domain::{Action, EventKind, JobState};
use crate::store::events::{self, NewEvent};
use crate::store::jobs;

pub use crate::domain::SESSION;

/// What `job open` records.
#[derive(Debug, Clone, Default)]
pub struct SessionOpen {
    /// The reviewer as the caller names it.
    pub agent: String,
    pub repo: Option<String>,
    pub pr: Option<u64>,
    pub head_sha: Option<String>,
    pub workflow: Option<String>,
    pub prompt: Option<String>,
}

/// Starts a session review job (`running`, never claimed by the daemon); returns its id.
pub fn open(tx: &Tx<'_>, clock: &dyn Clock, s: SessionOpen) -> Result<String, EngineError> {
    let agent = s.agent.trim();
    if agent.is_empty() {
        return Err(Invalid("--agent cannot be empty".into()).into());
    }
    super::submit::check_repo_name(s.repo.as_deref())?;
    let now = clock.now_ms();
    let prompt = s
        .prompt
        .clone()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| {
            let mut p = "session review".to_string();
            if let Some(pr) = s.pr {
                p.push_str(&format!(" of PR #{pr}"));
            }
            if let Some(sha) = &s.head_sha {
                p.push_str(&format!(" at {sha}"));
            }
            if let Some(w) = &s.workflow {
                p.push_str(&format!(" ({w})"));
            }
            p
        });
    let mut job = super::submit::new_root(
        tx,
        agent.to_string(),
        Action::Review,
        prompt,
        s.repo.clone(),
        now,
    )?;
    let id = job.id.clone();
    job.state = JobState::Running;
    job.started_ms = Some(now);
    job.dispatched_by = SESSION.into();
    jobs::put(tx, &job)?;
    events::append(
        tx,
        NewEvent::job(now, &id, &id, EventKind::SessionOpened)
            .message(format!(
                "session review opened by {agent} (reported, non_authoritative)"
            ))
            .data(json!({"pr": s.pr, "head_sha": s.head_sha, "workflow": s.workflow})),
    )?;
    Ok(id)
}

/// The open session job `id`, or why it is not one.
fn open_session(tx: &Tx<'_>, id: &str) -> Result<jobs::Job, EngineError> {
    let job = jobs::require(tx, id)?;
    if job.dispatched_by != SESSION {
        return Err(Invalid(format!(
            "job {id} is not a session job (open one with `job open --type review`)"
        ))
        .into());
    }
    if job.state.is_terminal() {
        return Err(Invalid(format!("session job {id} is already {}", job.state)).into());
    }
    Ok(job)
}

/// `job note`: a progress note on an open session job.
pub fn note(tx: &Tx<'_>, clock: &dyn Clock, id: &str, text: &str) -> Result<(), EngineError> {
    let job = open_session(tx, id)?;
    if text.trim().is_empty() {
        return Err(Invalid("the note is empty".into()).into());
    }
    events::append(
        tx,
        NewEvent::job(
            clock.now_ms(),
            &job.root_id,
            &job.id,
            EventKind::SessionNote,
        )
        .message(text.trim().to_string()),
    )?;
    Ok(())
}

/// `job close`: settles an open session job with `result` (already contract-valid).
pub fn close(
    tx: &Tx<'_>,
    env: Env<'_>,
    id: &str,
    result: GitmootResult,
) -> Result<JobState, EngineError> {
    open_session(tx, id)?;
    if !result.delegations.is_empty() || !result.human_questions.is_empty() {
        return Err(Invalid("a session review cannot delegate or ask".into()).into());
    }
    super::settle(tx, env, id, Settlement::of(Outcome::Parsed(result)))
}
