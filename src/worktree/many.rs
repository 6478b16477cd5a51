//! Land or discard many write jobs' work at once: `job land|discard --where … [--dry-run]`
//! and the control room's marked rows both call `apply`, which runs each job through the
//! verb it would get alone (`land`, `discard`).
//!
//! Each job's git work commits on its own, so a refused job (not a write job, already
//! landed, a conflict, a worktree on another host) is reported with its reason and the rest
//! go on. A dry run cannot roll git back, so it stops each job where its verb's checks end
//! (`land::plan` builds the land as objects only, `discard::check` reads the loss) and says
//! what the verb would do (`preview`, which `job land|discard JOB --dry-run` calls too).

use super::{Strategy, WorktreeError};
use crate::config::Config;
use crate::domain::BulkVerb;
use crate::engine::Env;
use crate::engine::bulk::Item;
use crate::store::Store;

/// `verb` (land with `strategy`, or discard) on each of `ids` in order.
pub fn apply(
    store: &mut Store,
    env: Env<'_>,
    config: &Config,
    (verb, strategy): (BulkVerb, Strategy),
    ids: &[String],
    dry_run: bool,
) -> Result<Vec<Item>, WorktreeError> {
    if !matches!(verb, BulkVerb::Land | BulkVerb::Discard) {
        return Err(crate::invalid!("{verb} is not a worktree verb (land, discard)").into());
    }
    let mut items = Vec::new();
    for id in ids {
        let item = match one(store, env, config, (verb, strategy), id, dry_run) {
            Ok(what) => Item::done(id, what),
            // Each job's git work is its own: one that failed is that job's refusal.
            Err(e) => Item::refused(id, verb, &e),
        };
        items.push(item);
    }
    Ok(items)
}

fn one(
    store: &mut Store,
    env: Env<'_>,
    config: &Config,
    (verb, strategy): (BulkVerb, Strategy),
    id: &str,
    dry_run: bool,
) -> Result<String, WorktreeError> {
    let here = &config.daemon.labels;
    match (verb, dry_run) {
        (_, true) => preview(store, config, (verb, strategy), id, None),
        (BulkVerb::Land, false) => Ok(super::land(store, env, config, id, strategy, None)?.line()),
        (_, false) => {
            let lost = super::discard(store, env, here, id)?;
            Ok(format!("discarded {id}: {lost}"))
        }
    }
}

/// What land (with `strategy` and the operator's `message`) or discard would do to `id`,
/// through the checks the verb itself runs first (`land::plan`, `discard::check`); nothing
/// moves. A dry run of one job (`job land|discard JOB --dry-run`) and of a selection both
/// say this.
pub fn preview(
    store: &Store,
    config: &Config,
    (verb, strategy): (BulkVerb, Strategy),
    id: &str,
    message: Option<&str>,
) -> Result<String, WorktreeError> {
    if verb == BulkVerb::Land {
        let (plan, _) = super::land::plan(store, config, id, strategy, message)?;
        plan.check()?;
        return Ok(format!("land {id}: {}", plan.says()));
    }
    let (_, w, lost) = super::discard::check(store, &config.daemon.labels, id)?;
    let branch = w.branch.unwrap_or_default();
    Ok(format!(
        "discard {id}: deletes its worktree and branch {branch}; loses {lost}"
    ))
}
