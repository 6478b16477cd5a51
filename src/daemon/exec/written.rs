//! What follows a write job's end, before it settles: its branch pushed to the repo's
//! `push` remote, the base its branch followed recorded (`worktree::follow`), and its diff
//! stored for hosts other than the one holding its worktree.
//!
//! Owns these steps; none touches the work in the worktree.

use std::sync::Arc;

use super::super::Shared;
use crate::domain::EventKind;
use crate::store::events::{self, NewEvent};
use crate::store::jobs::Job;

/// Pushes an ended write job's branch to its repo's `push` remote, when it has one, and
/// says how that went in the job's events (git's own words when it failed). What the agent
/// committed is pushed; uncommitted work stays in the worktree.
pub(super) async fn push_branch(shared: &Arc<Shared>, job: &Job, spec: &crate::worktree::OpenSpec) {
    let config = shared.config();
    let Some(remote) = job
        .repo
        .as_ref()
        .and_then(|r| config.repos.get(r))
        .and_then(|r| r.push.clone())
    else {
        return;
    };
    let (dir, branch) = (spec.path.clone(), spec.branch.clone());
    let pushed = tokio::task::spawn_blocking(move || {
        crate::worktree::push(&dir, &branch, &remote)
            .map(|()| format!("pushed {branch} to {remote}"))
            .map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(format!("pushing the branch: {e}")));
    let (kind, message) = match pushed {
        Ok(said) => (EventKind::BranchPushed, said),
        Err(why) => (EventKind::BranchPushFailed, why),
    };
    let (root, id) = (job.root_id.clone(), job.id.clone());
    let written = shared
        .with_store(move |store, sh| {
            let now = sh.clock.now_ms();
            store.write(|tx| {
                events::append(tx, NewEvent::job(now, &root, &id, kind).message(message))
            })
        })
        .await;
    if let Err(e) = written {
        tracing::warn!(job = %job.id, "recording the branch push: {e}");
    }
}

/// Records the base an ended write job's branch followed, then stores its diff (bounded) for control rooms and CLIs on other hosts;
/// a review round's end stores it again. A diff that cannot be read or stored is logged:
/// the worktree, where the work is, stays.
pub(super) async fn store_diff(shared: &Arc<Shared>, job: &Job, spec: &crate::worktree::OpenSpec) {
    // An agent that merged or rebased onto its base branch's newer tip moved its base.
    let id = job.id.clone();
    let followed = shared
        .with_store(move |store, sh| crate::worktree::follow(store, sh.clock.now_ms(), Some(&id)))
        .await;
    if let Err(e) = followed {
        tracing::warn!(job = %job.id, "recording the job's followed base: {e}");
    }
    let id = job.id.clone();
    let base = shared
        .with_store(move |store, _| crate::store::worktrees::get(store.conn(), &id))
        .await
        .ok()
        .flatten()
        .and_then(|w| w.base_commit);
    let Some(base) = base else {
        return;
    };
    let dir = spec.path.clone();
    let read = tokio::task::spawn_blocking(move || crate::worktree::diff_files(&dir, &base))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
    let text = match read {
        Ok(files) => crate::worktree::bounded_diff(files),
        Err(e) => {
            tracing::warn!(job = %job.id, "reading the job's diff to store: {e}");
            return;
        }
    };
    let id = job.id.clone();
    let stored = shared
        .with_store(move |store, sh| {
            let now = sh.clock.now_ms();
            store.write(|tx| crate::store::worktrees::put_diff(tx, &id, &text, now))
        })
        .await;
    if let Err(e) = stored {
        tracing::warn!(job = %job.id, "storing the job's diff: {e}");
    }
}
