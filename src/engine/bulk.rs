//! Acting on many jobs at once: a selection (the query of `job cancel|kill|retry --where`,
//! or the rows the control room marked) and one verb applied to each through the same
//! engine verb it would get alone (`cancel_job`, `kill_root`, `resume … retry`). `each` is
//! the savepoint loop `chat::answer::answer_many` shares for `job answer --where`.
//!
//! Each job runs in its own savepoint, so one refused item (already ended, nothing to
//! retry) is reported with its reason and the rest proceed; a dry run performs each in a
//! savepoint it then rolls back, so what it says it would do is what the verb does.

use serde::Serialize;

use super::{EngineError, Env};
use crate::Invalid;
use crate::clock::Millis;
use crate::domain::{Action, BulkVerb, JobKind, JobState, ResumeVerb};
use crate::store::Tx;
use crate::store::jobs::{self, JobFilter, ListColumns};

/// A selection written as `key=value` words: every key narrows (`state` takes a
/// comma-separated list; `older`/`newer` compare the job's age with a duration).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    pub states: Vec<JobState>,
    pub agent: Option<String>,
    pub repo: Option<String>,
    pub root: Option<String>,
    pub kind: Option<JobKind>,
    pub action: Option<Action>,
    pub older_ms: Option<Millis>,
    pub newer_ms: Option<Millis>,
}

/// The keys a query may name, for the error that names a bad one.
const KEYS: &str = "state, agent, repo, root, kind, action, older, newer";

impl std::str::FromStr for Query {
    type Err = Invalid;

    fn from_str(text: &str) -> Result<Self, Invalid> {
        let mut q = Query::default();
        for word in text.split_whitespace() {
            let Some((key, value)) = word.split_once('=').filter(|(_, v)| !v.is_empty()) else {
                return Err(crate::invalid!(
                    "--where: {word:?} is not key=value (keys: {KEYS})"
                ));
            };
            let value = value.to_string();
            match key {
                "state" => {
                    for s in value.split(',') {
                        q.states.push(s.parse()?);
                    }
                }
                "agent" => q.agent = Some(value),
                "repo" => q.repo = Some(value),
                "root" => q.root = Some(value),
                "kind" => q.kind = Some(value.parse()?),
                "action" => q.action = Some(value.parse()?),
                "older" => q.older_ms = Some(crate::duration::parse_positive_ms(&value)?),
                "newer" => q.newer_ms = Some(crate::duration::parse_positive_ms(&value)?),
                other => {
                    return Err(crate::invalid!(
                        "--where: unknown key {other:?} (keys: {KEYS})"
                    ));
                }
            }
        }
        if q == Query::default() {
            // An empty query would select every job: nothing touches more than was asked.
            return Err(crate::invalid!(
                "--where names no condition; say which jobs, e.g. 'state=queued agent=scout older=2h'"
            ));
        }
        Ok(q)
    }
}

/// The ids of the jobs `q` selects at `now`, newest first.
pub fn select(tx: &Tx<'_>, q: &Query, now: Millis) -> Result<Vec<String>, EngineError> {
    let root = match &q.root {
        Some(r) => Some(jobs::resolve_id(tx, r)?),
        None => None,
    };
    let filter = JobFilter {
        state: match q.states.as_slice() {
            [one] => Some(*one),
            _ => None,
        },
        root,
        agent: q.agent.clone(),
        repo: q.repo.clone(),
        ..JobFilter::default()
    };
    let mut ids = Vec::new();
    jobs::list_each(tx, &filter, ListColumns::Table, |j| {
        let age = now - j.created_ms;
        let keep = (q.states.is_empty() || q.states.contains(&j.state))
            && q.kind.is_none_or(|k| k == j.kind)
            && q.action.is_none_or(|a| a == j.action)
            && q.older_ms.is_none_or(|d| age >= d)
            && q.newer_ms.is_none_or(|d| age < d);
        if keep {
            ids.push(j.id);
        }
        Ok::<_, EngineError>(())
    })?;
    Ok(ids)
}

/// What the verb did (or would do) to one selected job, or why it was refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub job_id: String,
    /// The consequence in words: "cancel job-… (queued: it never starts)".
    pub what: String,
    /// Why the verb refused this job; the others went on.
    pub refused: Option<String>,
}

/// Applies `verb` to each of `ids` in order (a kill once per tree), each in its own
/// savepoint; with `dry_run` every change is rolled back and only the report stays.
/// `answer` goes through `chat::answer::answer_many` and `land`/`discard` through
/// `worktree::many`, which do more than this transaction can hold.
pub fn apply(
    tx: &Tx<'_>,
    env: Env<'_>,
    verb: BulkVerb,
    ids: &[String],
    dry_run: bool,
) -> Result<Vec<Item>, EngineError> {
    let mut chosen: Vec<String> = Vec::new();
    let mut roots_killed: Vec<String> = Vec::new();
    for id in ids {
        if verb == BulkVerb::Kill {
            let root = jobs::require(tx, id)?.root_id;
            if roots_killed.contains(&root) {
                continue;
            }
            roots_killed.push(root);
        }
        chosen.push(id.clone());
    }
    each(tx, verb, &chosen, dry_run, EngineError::is_invalid, |id| {
        one(tx, env, verb, id)
    })
}

/// Runs `one` on each of `ids` in its own savepoint: a job it refuses (`refused` says
/// which errors are that job's bad input) is reported with the reason, its writes undone,
/// and the rest go on; any other error stops them all. With `dry_run` every savepoint is
/// rolled back, so the report is what the verb would do.
pub fn each<E>(
    tx: &Tx<'_>,
    verb: BulkVerb,
    ids: &[String],
    dry_run: bool,
    refused: impl Fn(&E) -> bool,
    mut one: impl FnMut(&str) -> Result<String, E>,
) -> Result<Vec<Item>, E>
where
    E: From<crate::store::StoreError> + std::error::Error + 'static,
{
    let mut items = Vec::new();
    for id in ids {
        let outcome = tx.savepoint(|| match one(id) {
            Ok(what) if dry_run => Err(Ok(what)),
            Ok(what) => Ok(what),
            Err(e) => Err(Err(e)),
        })?;
        let item = match outcome {
            Ok(what) | Err(Ok(what)) => Item::done(id, what),
            Err(Err(e)) if refused(&e) => Item::refused(id, verb, &e),
            Err(Err(e)) => return Err(e),
        };
        items.push(item);
    }
    Ok(items)
}

impl Item {
    /// The verb done (or, in a dry run, what it would do).
    pub fn done(id: &str, what: String) -> Self {
        Item {
            job_id: id.to_string(),
            what,
            refused: None,
        }
    }

    /// The verb refused on this job, with the error's one line as the reason.
    pub fn refused(id: &str, verb: BulkVerb, e: &(dyn std::error::Error + 'static)) -> Self {
        Item {
            job_id: id.to_string(),
            what: format!("{verb} {id}"),
            refused: Some(crate::error_line(e)),
        }
    }
}

/// `job kill` on `id`'s tree (`force` terminates its running jobs), said as a bulk item
/// says it: what a single `job kill ID --dry-run` and a selection both print.
pub fn kill(tx: &Tx<'_>, env: Env<'_>, id: &str, force: bool) -> Result<String, EngineError> {
    let r = super::kill_root(tx, env, id, force)?;
    let then = if force {
        "are terminated"
    } else {
        "finish their turn"
    };
    Ok(format!(
        "kill tree {}: {} queued cancelled, {} running {then} (run {})",
        r.root_id,
        r.cancelled.len(),
        r.running.len(),
        r.run_state
    ))
}

/// One job through its verb; the answer states what it did.
fn one(tx: &Tx<'_>, env: Env<'_>, verb: BulkVerb, id: &str) -> Result<String, EngineError> {
    let job = jobs::require(tx, id)?;
    match verb {
        BulkVerb::Cancel => {
            super::cancel_job(tx, env, id)?;
            let then = match job.state {
                JobState::Queued => "it never starts",
                JobState::Running => "its process is terminated",
                _ => "its wait ends",
            };
            Ok(format!("cancel {id} ({}: {then})", job.state))
        }
        BulkVerb::Kill => kill(tx, env, id, false),
        BulkVerb::Retry => {
            super::resume(tx, env, id, ResumeVerb::Retry, None)?;
            Ok(format!(
                "retry {id} ({}: runs again as a new attempt)",
                job.state
            ))
        }
        BulkVerb::Answer | BulkVerb::Land | BulkVerb::Discard => Err(crate::invalid!(
            "{verb} acts on many through its own verb, not the store's bulk"
        )
        .into()),
    }
}
