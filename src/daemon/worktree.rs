//! Throwaway detached worktrees for read-only legs: `git worktree add --detach` at the
//! checkout's committed tip, removed after the job even when it failed.
//!
//! Owns only the git calls and the folder layout (`<worktrees root>/<job segment>`, the root
//! being `crate::worktree::root`, outside the home).

use std::path::{Path, PathBuf};

use crate::worktree::git;

/// Git checkouts among the configured repos (read-only legs get worktrees of them).
pub(crate) fn git_checkouts(config: &crate::config::Config) -> std::collections::HashSet<String> {
    config
        .repos
        .iter()
        .filter(|(_, r)| r.path.as_deref().is_some_and(is_git_checkout))
        .map(|(name, _)| name.clone())
        .collect()
}

#[derive(Debug, thiserror::Error)]
#[error("git worktree for {checkout}: {message}")]
pub struct WorktreeError {
    pub checkout: PathBuf,
    pub message: String,
}

/// Whether `path` is the top of (or inside) a git work tree.
pub(crate) fn is_git_checkout(path: &Path) -> bool {
    crate::worktree::is_git_checkout(path)
}

/// Every path a checkout changed against its `HEAD`, untracked files included, each
/// repo-relative: what `result_observation` grades claims against.
pub fn touched_files(dir: &Path) -> Result<Vec<String>, String> {
    let run = |args: &[&str]| {
        git::run(dir, args)
            .map(|out| git::split_z(&out))
            .map_err(|e| e.to_string())
    };
    let mut files = run(&["diff", "HEAD", "--name-only", "-z"])?;
    for f in run(&[
        "ls-files",
        "--others",
        "--exclude-standard",
        "--full-name",
        "-z",
    ])? {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    files.sort();
    Ok(files)
}

/// A job id as one safe path segment.
pub fn segment(job_id: &str) -> String {
    job_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Where the worktree of `job_id` lives.
pub(crate) fn path_for(worktrees_dir: &Path, job_id: &str) -> PathBuf {
    worktrees_dir.join(segment(job_id))
}

fn git_in(checkout: &Path, args: &[&str]) -> Result<(), WorktreeError> {
    git::run(checkout, args)
        .map(drop)
        .map_err(|e| WorktreeError {
            checkout: checkout.to_path_buf(),
            message: e.message,
        })
}

/// Adds a detached worktree of `checkout`'s HEAD commit at `at`.
pub fn add(checkout: &Path, at: &Path) -> Result<(), WorktreeError> {
    if at.exists() {
        remove(checkout, at);
    }
    if let Some(parent) = at.parent() {
        std::fs::create_dir_all(parent).map_err(|e| WorktreeError {
            checkout: checkout.to_path_buf(),
            message: format!("creating {}: {e}", parent.display()),
        })?;
    }
    let at_text = at.display().to_string();
    crate::worktree::with_worktree_lock(checkout, || {
        git_in(checkout, &["worktree", "add", "--detach", &at_text, "HEAD"])
    })
}

/// Removes the worktree at `at`; falls back to deleting the folder and pruning git's
/// record of it, so a half-created or damaged worktree never lingers.
pub fn remove(checkout: &Path, at: &Path) {
    let at_text = at.display().to_string();
    crate::worktree::with_worktree_lock(checkout, || {
        if git_in(checkout, &["worktree", "remove", "--force", &at_text]).is_err() {
            let _ = std::fs::remove_dir_all(at);
            let _ = git_in(checkout, &["worktree", "prune"]);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn repo() -> PathBuf {
        let dir = crate::ids::scratch_dir("wt");
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let run = |args: &[&str]| {
            assert!(
                Command::new("git")
                    .arg("-C")
                    .arg(&repo)
                    .args(args)
                    .output()
                    .unwrap()
                    .status
                    .success()
            )
        };
        run(&["init", "-q"]);
        std::fs::write(repo.join("a.txt"), "committed").unwrap();
        run(&["add", "."]);
        run(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ]);
        repo
    }

    #[test]
    fn a_worktree_holds_the_committed_tip_and_is_removed_after() {
        let repo = repo();
        std::fs::write(repo.join("a.txt"), "dirty").unwrap();
        assert!(is_git_checkout(&repo));
        let at = path_for(&repo.parent().unwrap().join("worktrees"), "job-x/leg:1");
        assert!(at.ends_with("job-x-leg-1"));
        add(&repo, &at).unwrap();
        assert_eq!(
            std::fs::read_to_string(at.join("a.txt")).unwrap(),
            "committed"
        );
        remove(&repo, &at);
        assert!(!at.exists());
        let list = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["worktree", "list"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 1);
        assert!(!is_git_checkout(repo.parent().unwrap()));
        std::fs::remove_dir_all(repo.parent().unwrap()).unwrap();
    }
}
