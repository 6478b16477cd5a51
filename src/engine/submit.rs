//! Submitting a root job: the single entry point for new trees (`job run`, `chat task`,
//! auto-respond, moot seats). Validates through the registry gate, then records the run,
//! the queued root job and their events in the caller's transaction.

use rusqlite::Transaction;
use serde_json::json;

use super::EngineError;
use crate::clock::Clock;
use crate::domain::{Action, JobKind};
use crate::store::events::{self, NewEvent};
use crate::store::{agents, jobs, runs};
use crate::{Invalid, ids, registry};

/// What a new tree starts from.
#[derive(Debug, Clone)]
pub struct SubmitRoot {
    pub agent: String,
    pub action: Action,
    pub prompt: String,
    pub repo: Option<String>,
    pub model: Option<String>,
    pub timeout_ms: Option<i64>,
    /// Who asked for the job (`cli`, `chat:<thread>`, `tui`…).
    pub dispatched_by: String,
}

/// Records a queued root job and its run; returns the root id.
pub fn submit_root(
    tx: &Transaction<'_>,
    clock: &dyn Clock,
    s: SubmitRoot,
) -> Result<String, EngineError> {
    if s.prompt.trim().is_empty() {
        return Err(Invalid("the prompt is empty".into()).into());
    }
    if let Some(repo) = &s.repo
        && !crate::config::is_repo_name(repo)
    {
        return Err(Invalid(format!("--repo {repo:?} must look like owner/name")).into());
    }
    let agent = agents::require(tx, &s.agent)?;
    registry::check_dispatch(&agent, s.action, s.repo.as_deref())?;
    let now = clock.now_ms();
    let id = loop {
        let candidate = ids::root_job_id();
        if jobs::get(tx, &candidate)?.is_none() {
            break candidate;
        }
    };
    let mut run = runs::Run::new(id.clone(), title_of(&s.prompt), s.repo.clone(), now);
    run.jobs = 1;
    runs::put(tx, &run)?;
    let mut job = jobs::Job::queued(
        id.clone(),
        id.clone(),
        JobKind::Root,
        s.agent,
        s.action,
        s.prompt,
        now,
    );
    job.repo = s.repo;
    job.model = s.model.or(agent.model);
    job.effort = agent.effort;
    job.timeout_ms = s.timeout_ms;
    job.dispatched_by = s.dispatched_by;
    jobs::put(tx, &job)?;
    events::append(
        tx,
        NewEvent::job(now, &id, &id, "queued")
            .message(format!(
                "{} {} queued for {}",
                job.kind, job.action, job.agent
            ))
            .data(json!({
                "agent": job.agent,
                "action": job.action,
                "dispatched_by": job.dispatched_by,
            })),
    )?;
    Ok(id)
}

/// A run's title: the prompt's first line, trimmed to 80 characters.
pub fn title_of(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        title.push('…');
    }
    title
}
