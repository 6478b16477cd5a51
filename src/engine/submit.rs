//! Submitting a root job: the single entry point for new trees (`job run`, `chat task`,
//! auto-respond, moot seats). Validates through the registry gate, then records the run,
//! the queued root job and their events in the caller's transaction.

use crate::store::Tx;
use serde_json::json;

use super::EngineError;
use crate::clock::{Clock, Millis};
use crate::domain::{Action, EventKind, JobKind};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};
use crate::store::{agents, runs};
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
    /// Only a daemon carrying this host label runs the tree (`job run --on`).
    pub on_label: Option<String>,
}

impl SubmitRoot {
    /// `action` of `agent` on `prompt`, asked for by `dispatched_by`, with the agent's own
    /// model, no repo, deadline or host label: a caller that sets those sets them after
    /// (`SubmitRoot { repo, ..SubmitRoot::new(…) }`).
    pub fn new(
        agent: impl Into<String>,
        action: Action,
        prompt: impl Into<String>,
        dispatched_by: impl Into<String>,
    ) -> Self {
        Self {
            agent: agent.into(),
            action,
            prompt: prompt.into(),
            repo: None,
            model: None,
            timeout_ms: None,
            dispatched_by: dispatched_by.into(),
            on_label: None,
        }
    }
}

/// Records a queued root job and its run; returns the root id.
pub fn submit_root(tx: &Tx<'_>, clock: &dyn Clock, s: SubmitRoot) -> Result<String, EngineError> {
    if s.prompt.trim().is_empty() {
        return Err(Invalid("the prompt is empty".into()).into());
    }
    check_repo_name(s.repo.as_deref())?;
    if let Some(label) = &s.on_label {
        crate::config::check_label(label)?;
    }
    let agent = agents::require(tx, &s.agent)?;
    registry::check_dispatch(&agent, s.action, s.repo.as_deref())?;
    let now = clock.now_ms();
    let mut job = new_root(tx, s.agent, s.action, s.prompt, s.repo, now)?;
    let id = job.id.clone();
    job.model = s.model.or(agent.model);
    job.effort = agent.effort;
    job.timeout_ms = s.timeout_ms;
    job.dispatched_by = s.dispatched_by;
    job.on_label = s.on_label;
    jobs::put(tx, &job)?;
    events::append(
        tx,
        NewEvent::job(now, &id, &id, EventKind::Queued)
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

pub(super) fn check_repo_name(repo: Option<&str>) -> Result<(), EngineError> {
    match repo {
        Some(repo) if !crate::config::is_repo_name(repo) => {
            Err(Invalid(format!("--repo {repo:?} must look like owner/name")).into())
        }
        _ => Ok(()),
    }
}

/// A new tree under a fresh root id: its run, already counting the root, is written; the
/// root job is returned unwritten, for the entry point to finish.
pub(super) fn new_root(
    tx: &Tx<'_>,
    agent: String,
    action: Action,
    prompt: String,
    repo: Option<String>,
    now: Millis,
) -> Result<Job, EngineError> {
    let id = loop {
        let candidate = ids::root_job_id();
        if jobs::get(tx, &candidate)?.is_none() {
            tx.new_tree(&candidate)?;
            break candidate;
        }
    };
    let mut run = runs::Run::new(id.clone(), title_of(&prompt), repo.clone(), now);
    run.jobs = 1;
    runs::put(tx, &run)?;
    let mut job = Job::queued(id.clone(), id, JobKind::Root, agent, action, prompt, now);
    job.repo = repo;
    Ok(job)
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
