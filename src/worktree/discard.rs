//! `job discard`: a write job's worktree and branch thrown away, after saying what is lost
//! (`loss`, the figures the CLI's question and the control room's dialog both state).
//!
//! Owns this verb; the CLI and the control room both call it.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use super::WorktreeError;
use super::git;
use super::land::{branch_exists, settled};
use crate::domain::{EventKind, WorktreeState};
use crate::engine::Env;
use crate::store::Store;
use crate::store::events::{self, NewEvent};
use crate::store::jobs::Job;
use crate::store::worktrees::{self, WriteTree};

/// What discarding a job's work would lose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    pub job: String,
    pub branch: Option<String>,
    pub files: Vec<String>,
    pub added: u64,
    pub removed: u64,
    /// Commits on the job's branch since its base.
    pub commits: u64,
    /// The worktree's folder when git no longer knows it (its `.git` is gone): its files go
    /// with it, unreadable as git work.
    pub unlinked: Option<super::UnlinkedFolder>,
}

impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} file(s) changed (+{} -{}), {} commit(s)",
            self.files.len(),
            self.added,
            self.removed,
            self.commits
        )?;
        if !self.files.is_empty() {
            write!(f, ": {}", self.files.join(", "))?;
        }
        if let Some(u) = &self.unlinked {
            write!(
                f,
                "; and its unlinked folder {} ({} file(s), no longer git work: its .git file is gone)",
                u.folder, u.files
            )?;
        }
        Ok(())
    }
}

/// What discarding `id` would lose.
pub fn loss(store: &Store, id: &str) -> Result<Loss, WorktreeError> {
    let (job, w) = super::of_job(&store.conn(), id)?;
    if w.state != WorktreeState::Open {
        return Err(crate::invalid!("{}'s work was already {}", job.id, w.state).into());
    }
    let base = w.base_commit.clone().unwrap_or_default();
    let path = Path::new(w.path.as_deref().unwrap_or_default());
    let co = Path::new(w.checkout.as_deref().unwrap_or_default());
    let mut loss = Loss {
        job: job.id.clone(),
        branch: w.branch.clone(),
        files: Vec::new(),
        added: 0,
        removed: 0,
        commits: 0,
        unlinked: None,
    };
    if super::unlinked::is_unlinked(path) {
        loss.unlinked = Some(super::unlinked::folder(path));
    }
    if path.exists() && loss.unlinked.is_none() {
        let files = super::diff::diff_files(path, &base)?;
        loss.added = files.iter().map(|f| f.added).sum();
        loss.removed = files.iter().map(|f| f.removed).sum();
        loss.files = files.into_iter().map(|f| f.path).collect();
        let n = git::line(path, &["rev-list", "--count", &format!("{base}..HEAD")])?;
        loss.commits = n.parse().unwrap_or(0);
    } else if let Some(branch) = w.branch.as_deref().filter(|b| branch_exists(co, b)) {
        // The folder is gone; what its branch holds is still lost with the branch.
        let range = format!("{base}..refs/heads/{branch}");
        let nums = git::run(
            co,
            &[
                "diff",
                "--numstat",
                "-z",
                "--no-renames",
                &base,
                &format!("refs/heads/{branch}"),
            ],
        )?;
        for rec in git::split_z(&nums) {
            let mut p = rec.splitn(3, '\t');
            loss.added += p.next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            loss.removed += p.next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            loss.files.extend(p.next().map(str::to_string));
        }
        loss.commits = git::line(co, &["rev-list", "--count", &range])?
            .parse()
            .unwrap_or(0);
    }
    Ok(loss)
}

/// Everything a discard refuses, checked, and what it would lose; nothing moves.
pub(super) fn check(
    store: &Store,
    here: &[String],
    id: &str,
) -> Result<(Job, WriteTree, Loss), WorktreeError> {
    let (job, w) = super::of_job(&store.conn(), id)?;
    super::hosts::refuse_elsewhere(here, &job, "discard")?;
    settled(&job, "discard")?;
    if w.state != WorktreeState::Open {
        return Err(crate::invalid!("{}'s work was already {}", job.id, w.state).into());
    }
    // A land under way (or one its process left midway, until a start finishes or drops
    // it) may already have moved the base: discarding would lose its record.
    if let Some(i) = crate::store::lands::get(store.conn(), &job.id)? {
        return Err(super::land::refuse(format!(
            "{} is being landed on {} (process {} on {}); discard it once that land has ended",
            job.id, i.base, i.pid, i.host
        )));
    }
    let lost = loss(store, &job.id)?;
    Ok((job, w, lost))
}

/// Removes the job's worktree and branch and records the loss (`discarded`).
pub fn discard(
    store: &mut Store,
    env: Env<'_>,
    here: &[String],
    id: &str,
) -> Result<Loss, WorktreeError> {
    let (job, w, lost) = check(store, here, id)?;
    let checkout = Path::new(w.checkout.as_deref().unwrap_or_default()).to_path_buf();
    let path = w.path.clone().unwrap_or_default();
    git::with_worktree_lock(&checkout, || -> Result<_, WorktreeError> {
        if lost.unlinked.is_some() {
            // Git cannot remove what it no longer sees as a worktree: the folder goes by
            // hand (its loss was said), then git forgets its record of it.
            std::fs::remove_dir_all(&path).map_err(|cause| WorktreeError::Io {
                what: "removing the unlinked worktree folder",
                path: path.clone().into(),
                cause,
            })?;
            Ok(git::run(&checkout, &["worktree", "prune"])?)
        } else if Path::new(&path).exists() {
            Ok(git::run(
                &checkout,
                &["worktree", "remove", "--force", &path],
            )?)
        } else {
            Ok(git::run(&checkout, &["worktree", "prune"])?)
        }
    })?;
    if let Some(branch) = &w.branch
        && branch_exists(&checkout, branch)
    {
        git::run(&checkout, &["branch", "-D", branch])?;
    }
    let now = env.clock.now_ms();
    store.write(|tx| {
        worktrees::put(
            tx,
            &WriteTree {
                state: WorktreeState::Discarded,
                updated_ms: now,
                ..w.clone()
            },
        )?;
        events::append(
            tx,
            NewEvent::job(now, &job.root_id, &job.id, EventKind::Discarded)
                .message(format!("discarded: {lost}"))
                .data(
                    json!({"files": lost.files, "added": lost.added, "removed": lost.removed,
                    "commits": lost.commits, "branch": w.branch, "unlinked": lost.unlinked}),
                ),
        )?;
        let note = format!("{}'s work was discarded: {lost}", job.id);
        env.hooks.work_settled(tx, env.clock, &job, &note)?;
        Ok::<_, WorktreeError>(())
    })?;
    Ok(lost)
}
