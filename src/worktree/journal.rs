//! The land journal's other half: a land whose process died before recording it (its
//! intent, `store::lands`, is still there) is finished or dropped by the next start of the
//! CLI, the control room or a daemon, from what git says became of it: a base that holds
//! the new commit is recorded as landed, once; a base still at the tip the land was planned
//! on means the land never happened (the job stays open); a base moved anywhere else leaves
//! the job open and says so with a `land_interrupted` event.
//!
//! Owns only those passes over this host's journal; must not start a land nor touch a
//! land whose process still lives.

use std::path::Path;

use serde_json::json;

use super::WorktreeError;
use super::git;
use super::land::{Landed, finish};
use crate::config::Config;
use crate::domain::{EventKind, WorktreeState};
use crate::engine::Env;
use crate::store::Store;
use crate::store::events::{self, NewEvent};
use crate::store::lands::{self, Intent};
use crate::store::{jobs, worktrees};

/// What became of a land its process left midway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resumed {
    /// The base held the land's commit: the land was finished and recorded.
    Finished { landed: Landed },
    /// The base was still where the land was planned on: nothing had moved.
    NotDone { job: String },
    /// The base had moved elsewhere (`now`), without the land's commit.
    BaseMoved { job: String, now: String },
}

impl Resumed {
    /// What became of the interrupted land, in a line.
    pub fn line(&self) -> String {
        match self {
            Resumed::Finished { landed } => {
                format!("an interrupted land was finished: {}", landed.line())
            }
            Resumed::NotDone { job } => {
                format!("an interrupted land of {job} had not moved its base; {job} is still open")
            }
            Resumed::BaseMoved { job, now } => format!(
                "an interrupted land of {job} found its base moved elsewhere (now at {}); {job} is still open",
                short(now)
            ),
        }
    }
}

/// Finishes or drops every land of this host whose process is gone.
pub fn resume_lands(
    store: &mut Store,
    env: Env<'_>,
    config: &Config,
) -> Result<Vec<Resumed>, WorktreeError> {
    let host = crate::pid::hostname();
    let orphans: Vec<Intent> = lands::on_host(store.conn(), &host)?
        .into_iter()
        .filter(|i| {
            !i32::try_from(i.pid).is_ok_and(|pid| crate::pid::still_runs(pid, i.pid_started))
        })
        .collect();
    let mut out = Vec::new();
    for i in orphans {
        match resume(store, env, config, &i) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            // A checkout git cannot read now is tried again at the next start.
            Err(WorktreeError::Git(e)) => {
                tracing::warn!("an interrupted land of {} is left as it is: {e}", i.job_id)
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

fn resume(
    store: &mut Store,
    env: Env<'_>,
    config: &Config,
    i: &Intent,
) -> Result<Option<Resumed>, WorktreeError> {
    let co = Path::new(&i.checkout);
    // A checkout git cannot read now (unmounted, moved) says nothing of the land yet.
    if !super::is_git_checkout(co) {
        tracing::warn!(
            "an interrupted land of {} waits for its checkout {}",
            i.job_id,
            co.display()
        );
        return Ok(None);
    }
    let base_ref = format!("refs/heads/{}", i.base);
    let now = git::line(co, &["rev-parse", "--verify", "-q", &base_ref]).unwrap_or_default();
    let holds =
        !now.is_empty() && git::yes(co, &["merge-base", "--is-ancestor", &i.commit, &base_ref])?;
    let job = jobs::require(store.conn(), &i.job_id)?;
    let w = worktrees::get(store.conn(), &i.job_id)?;
    let open = w
        .as_ref()
        .is_some_and(|w| !matches!(w.state, WorktreeState::Landed | WorktreeState::Discarded));
    match w {
        Some(w) if holds && open => {
            if now == i.commit {
                follow_files(co, i);
            }
            let first = super::LandedFirst::default();
            let landed = finish(store, env, config, (&job, &w, i), first)?;
            Ok(Some(Resumed::Finished { landed }))
        }
        _ if now == i.onto || !open => {
            store.write(|tx| lands::take(tx, &i.job_id))?;
            Ok((now == i.onto).then(|| Resumed::NotDone {
                job: i.job_id.clone(),
            }))
        }
        _ => {
            let at = env.clock.now_ms();
            let taken = store.write(|tx| {
                if !lands::take(tx, &i.job_id)? {
                    return Ok::<_, WorktreeError>(false);
                }
                events::append(
                    tx,
                    NewEvent::job(at, &job.root_id, &job.id, EventKind::LandInterrupted)
                        .message(format!(
                            "a land on {} was interrupted and {} moved elsewhere (now at {}, without {}); the job is still open, land it again",
                            i.base,
                            i.base,
                            short(&now),
                            short(&i.commit)
                        ))
                        .data(json!({"base": i.base, "onto": i.onto, "commit": i.commit, "now": now})),
                )?;
                Ok(true)
            })?;
            Ok(taken.then(|| Resumed::BaseMoved {
                job: i.job_id.clone(),
                now,
            }))
        }
    }
}

/// A checked-out base whose branch moved but whose files had not followed yet (the land
/// died between the two) gets them now, as the land would have: only when the index is
/// still the planned-on tip's, so nothing of the operator's is overwritten.
fn follow_files(co: &Path, i: &Intent) {
    let head = git::line(co, &["symbolic-ref", "-q", "HEAD"]).unwrap_or_default();
    if head != format!("refs/heads/{}", i.base) {
        return;
    }
    let tree = |c: &str| git::line(co, &["rev-parse", &format!("{c}^{{tree}}")]);
    let (Ok(index), Ok(was)) = (git::line(co, &["write-tree"]), tree(&i.onto)) else {
        return;
    };
    if index == was && tree(&i.commit).is_ok_and(|t| t != was) {
        let _ = git::run(co, &["read-tree", "-u", "-m", &i.onto, &i.commit]);
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}
