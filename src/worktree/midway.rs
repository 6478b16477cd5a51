//! A git operation stopped half-way (rebase, `am`, merge, cherry-pick, revert, bisect) in a
//! registered checkout or in a worktree of it working on a land's base branch: what `land`
//! refuses to move a branch under. Read from the state files git itself leaves in each
//! worktree's git folder (the ones `git status` reads to say "You are currently
//! rebasing"), so a `git rebase -i` of the base, which detaches HEAD, still names the branch
//! it rewrites (`rebase-merge/head-name`).
//!
//! Owns reading those files; it runs git once, for the checkout's own and common git
//! folders, and never writes anything.

use std::path::{Path, PathBuf};

use super::WorktreeError;
use super::git;

/// An operation git has in progress, with the commands that finish and abort it.
struct Midway {
    what: &'static str,
    finish: &'static str,
    abort: &'static str,
}

/// What git has in progress in the worktree whose git folder is `dir`.
fn midway(dir: &Path) -> Option<Midway> {
    let has = |p: &str| dir.join(p).exists();
    let op = |what, finish, abort| {
        Some(Midway {
            what,
            finish,
            abort,
        })
    };
    // `git am` keeps its state in rebase-apply/ too, marked by `applying`.
    if has("rebase-apply/applying") {
        return op("a `git am`", "git am --continue", "git am --abort");
    }
    if has("rebase-merge") || has("rebase-apply") {
        return op("a rebase", "git rebase --continue", "git rebase --abort");
    }
    if has("MERGE_HEAD") {
        return op("a merge", "git merge --continue", "git merge --abort");
    }
    if has("CHERRY_PICK_HEAD") {
        return op(
            "a cherry-pick",
            "git cherry-pick --continue",
            "git cherry-pick --abort",
        );
    }
    if has("REVERT_HEAD") {
        return op("a revert", "git revert --continue", "git revert --abort");
    }
    // A sequence of picks or reverts stopped between two of them.
    if let Ok(todo) = std::fs::read_to_string(dir.join("sequencer/todo")) {
        return match todo.split_whitespace().next() {
            Some("revert") => op("a revert", "git revert --continue", "git revert --abort"),
            _ => op(
                "a cherry-pick",
                "git cherry-pick --continue",
                "git cherry-pick --abort",
            ),
        };
    }
    if has("BISECT_LOG") {
        return op("a bisect", "git bisect reset", "git bisect reset");
    }
    None
}

/// The branches (full ref names) the worktree whose git folder is `dir` works on: its
/// HEAD's, and the one a rebase or bisect started from (HEAD is detached meanwhile).
fn working_on(dir: &Path) -> Vec<String> {
    let read = |p: &str| {
        std::fs::read_to_string(dir.join(p))
            .map(|s| s.trim().to_string())
            .ok()
    };
    let mut refs: Vec<String> = [
        read("HEAD").and_then(|h| h.strip_prefix("ref: ").map(str::to_string)),
        read("rebase-merge/head-name"),
        read("rebase-apply/head-name"),
        read("BISECT_START").map(|b| format!("refs/heads/{b}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    refs.dedup();
    refs
}

/// Refused, changing nothing, when the checkout `co` has an operation in progress, or a
/// worktree of it does on `base_ref`: names it, where, and how to finish or abort it.
pub(super) fn refuse_midway(co: &Path, base_ref: &str) -> Result<(), WorktreeError> {
    let dirs = git::line(
        co,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-dir",
            "--git-common-dir",
        ],
    )?;
    let mut lines = dirs.lines().map(PathBuf::from);
    let (Some(own), Some(common)) = (lines.next(), lines.next()) else {
        return Ok(());
    };
    let mut others: Vec<PathBuf> = std::fs::read_dir(common.join("worktrees"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    others.push(common);
    others.retain(|d| *d != own);
    others.sort();
    let found = midway(&own).map(|m| (m, co.to_path_buf())).or_else(|| {
        others.iter().find_map(|d| {
            let m = midway(d).filter(|_| working_on(d).iter().any(|r| r == base_ref))?;
            Some((m, worktree_of(d)))
        })
    });
    let Some((m, at)) = found else {
        return Ok(());
    };
    let base = base_ref.strip_prefix("refs/heads/").unwrap_or(base_ref);
    let place = if at == co {
        format!("the checkout {}", co.display())
    } else {
        format!(
            "{}, a worktree of {} on {base},",
            at.display(),
            co.display()
        )
    };
    let how = if m.finish == m.abort {
        format!("end it with `{}`", m.finish)
    } else {
        format!(
            "finish it with `{}` or abort it with `{}`",
            m.finish, m.abort
        )
    };
    Err(crate::invalid!(
        "{place} is in the middle of {}; {how}, then land again (nothing was changed)",
        m.what
    )
    .into())
}

/// The folder of the worktree whose git folder is `dir` (its `gitdir` file names the
/// worktree's `.git`; the common folder's worktree is its parent).
fn worktree_of(dir: &Path) -> PathBuf {
    std::fs::read_to_string(dir.join("gitdir"))
        .ok()
        .and_then(|g| Path::new(g.trim()).parent().map(Path::to_path_buf))
        .unwrap_or_else(|| dir.parent().unwrap_or(dir).to_path_buf())
}
