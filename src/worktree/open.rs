//! Opening a write job's worktree when its run starts: the base resolved (asked for, the
//! repo's `base`, else the checkout's current branch) and its commit recorded, a new branch
//! there checked out in a worktree of its own, and the paths git must write for a commit
//! made in it (for the agent's confinement).
//!
//! Owns only the opening; the row is written by the daemon, which knows the job.

use std::path::{Path, PathBuf};

use super::WorktreeError;
use super::git;

/// What the daemon knows when a write job starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSpec {
    pub checkout: PathBuf,
    /// Where the worktree goes (under the home's worktree root, outside the home).
    pub path: PathBuf,
    pub branch: String,
    /// The base asked for (`--base`, then `[repos.X].base`); none: the checkout's branch.
    pub base: Option<String>,
    /// The base commit recorded when the job first started: a job started again (a retry
    /// after its daemon was lost, a review round) keeps it, wherever its base moved since.
    pub base_commit: Option<String>,
}

/// An opened worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub base_ref: String,
    pub base_commit: String,
    /// The worktree, and what git writes for a commit there: the object store, the
    /// worktree's admin folder under `.git/worktrees/`, and the folders of its branch ref
    /// and reflog (shared by the repo's branches of the same prefix).
    pub writable: Vec<PathBuf>,
}

/// Opens the worktree: a new branch at the base's commit, checked out at `spec.path`.
/// A worktree already on that branch (a job started again) is reused as it is; anything
/// else at the path is refused, never removed.
pub fn open(spec: &OpenSpec) -> Result<Opened, WorktreeError> {
    let co = &spec.checkout;
    let base_ref = match &spec.base {
        Some(b) => b.clone(),
        None => git::line(co, &["symbolic-ref", "-q", "--short", "HEAD"])
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| "HEAD".into()),
    };
    let base_commit = match &spec.base_commit {
        Some(c) => c.clone(),
        None => git::line(
            co,
            &["rev-parse", "--verify", &format!("{base_ref}^{{commit}}")],
        )?,
    };
    let reused = spec.path.exists()
        && git::line(&spec.path, &["symbolic-ref", "-q", "--short", "HEAD"])
            .ok()
            .as_deref()
            == Some(spec.branch.as_str());
    if !reused {
        if spec.path.exists() {
            return Err(crate::invalid!(
                "{} already exists and is not the worktree of {}; it is left as it is",
                spec.path.display(),
                spec.branch
            )
            .into());
        }
        if let Some(parent) = spec.path.parent() {
            std::fs::create_dir_all(parent).map_err(|cause| WorktreeError::Io {
                what: "creating",
                path: parent.to_path_buf(),
                cause,
            })?;
        }
        let at = spec.path.display().to_string();
        git::with_worktree_lock(co, || {
            git::run(
                co,
                &["worktree", "add", "-b", &spec.branch, &at, &base_commit],
            )
        })?;
    }
    Ok(Opened {
        base_ref,
        base_commit,
        writable: writable(&spec.path, &spec.branch)?,
    })
}

/// The worktree and what git itself writes for a commit made in it.
fn writable(path: &Path, branch: &str) -> Result<Vec<PathBuf>, WorktreeError> {
    let abs = |what: &str| -> Result<PathBuf, WorktreeError> {
        Ok(PathBuf::from(git::line(
            path,
            &["rev-parse", "--path-format=absolute", what],
        )?))
    };
    let common = abs("--git-common-dir")?;
    let admin = abs("--git-dir")?;
    let ref_dir = Path::new("refs/heads").join(branch);
    let ref_dir = ref_dir.parent().unwrap_or(Path::new("refs/heads"));
    let log_dir = Path::new("logs").join(ref_dir);
    // The reflog folder may not exist yet; git makes it on the first commit, which the
    // agent could not do inside the confinement.
    let _ = std::fs::create_dir_all(common.join(&log_dir));
    Ok(vec![
        path.to_path_buf(),
        common.join("objects"),
        admin,
        common.join(ref_dir),
        common.join(log_dir),
    ])
}

/// Pushes `branch` from the worktree at `dir` to the checkout's remote `remote`, under the
/// same name; git's own message when it fails.
pub fn push(dir: &Path, branch: &str, remote: &str) -> Result<(), super::GitError> {
    let refspec = format!("{branch}:refs/heads/{branch}");
    super::git::run(dir, &["push", "--quiet", remote, &refspec]).map(|_| ())
}
