//! Opening a write job's worktree when its run starts: the base resolved (asked for, the
//! repo's `base`, else the checkout's current branch) and its commit recorded, a new branch
//! there checked out in a worktree of its own, and what git may write for the job (for the
//! agent's confinement).
//!
//! Each job owns a ref folder: its branch is `<prefix><job>/work`, and the branches and
//! tags it makes of its own live beside it under `<prefix><job>/`. Git updates a ref by
//! creating `<name>.lock` in the ref's folder and renaming it over the ref, so whoever may
//! update one ref may replace every ref of that folder: with the branch `<prefix><job>`
//! in the folder all jobs share, one job's agent could move another's branch. The folder
//! of its own is what lets the grant name exactly the job's refs. A worktree opened before
//! (on `<prefix><job>`) keeps its branch and the shared folder's grant it always had.
//!
//! Owns only the opening; the row is written by the daemon, which knows the job.

use std::path::{Path, PathBuf};

use super::WorktreeError;
use super::git;
use crate::runtime::sandbox::GitGrant;

/// The last part of a write job's branch name, under the job's own folder.
const WORK: &str = "work";

/// The branch of a new write job `job` of a repo whose branches start with `prefix`.
pub fn branch_for(prefix: &str, job: &str) -> String {
    format!("{prefix}{job}/{WORK}")
}

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
    /// The branch checked out: the spec's, or the one a worktree opened before kept.
    pub branch: String,
    pub base_ref: String,
    pub base_commit: String,
    /// The worktree, and what git writes for the job there: the object store, the
    /// worktree's admin folder under `.git/worktrees/`, and the job's ref folders.
    pub writable: Vec<PathBuf>,
    /// The same in the repository's git folder as the agent's layered view shows it; none
    /// for a repository whose refs are not loose files (reftable), where the layer would
    /// keep the job's commits from the operator.
    pub git: Option<GitGrant>,
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
    let on = spec
        .path
        .exists()
        .then(|| git::line(&spec.path, &["symbolic-ref", "-q", "--short", "HEAD"]).ok())
        .flatten();
    let before = spec.branch.strip_suffix(&format!("/{WORK}"));
    let reused = on
        .as_deref()
        .filter(|b| *b == spec.branch || Some(*b) == before);
    let branch = reused.unwrap_or(&spec.branch).to_string();
    if reused.is_none() {
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
    let (writable, git) = grant(&spec.path, &branch)?;
    Ok(Opened {
        branch,
        base_ref,
        base_commit,
        writable,
        git,
    })
}

/// The worktree and what git writes for the job's branch `branch` there, as plain paths
/// and as the git folder's layer binds them: its own ref folders writable over read-only
/// `refs/heads/`, `refs/tags/`, their reflogs, `packed-refs` and the main worktree's
/// `HEAD`. A file is bound as it was when the run started: one the operator's git
/// replaces meanwhile (a checkout's `HEAD`, a repack) reads as before until the next run.
fn grant(path: &Path, branch: &str) -> Result<(Vec<PathBuf>, Option<GitGrant>), WorktreeError> {
    let abs = |what: &str| -> Result<PathBuf, WorktreeError> {
        Ok(PathBuf::from(git::line(
            path,
            &["rev-parse", "--path-format=absolute", what],
        )?))
    };
    let common = abs("--git-common-dir")?;
    let admin = abs("--git-dir")?;
    let (heads, tags) = (Path::new("refs/heads"), Path::new("refs/tags"));
    let logs = Path::new("logs/refs/heads");
    let folder = branch.strip_suffix(&format!("/{WORK}"));
    // Opened before: the branch's folder is the one every job of its prefix shares.
    let own = folder
        .or_else(|| Path::new(branch).parent()?.to_str())
        .filter(|o| !o.is_empty());
    let ref_dir = own.map_or(heads.to_path_buf(), |o| heads.join(o));
    let log_dir = own.map_or(logs.to_path_buf(), |o| logs.join(o));
    let tag_dir = folder.map(|f| tags.join(f));
    // Folders git makes on a first reflog entry or tag, which the agent could not make
    // inside the confinement, and the mount points its layer needs.
    for dir in [Some(&log_dir), Some(&tags.to_path_buf()), tag_dir.as_ref()]
        .into_iter()
        .flatten()
    {
        let _ = std::fs::create_dir_all(common.join(dir));
    }
    empty_packed_refs(&common);
    let mut writable = vec![
        path.to_path_buf(),
        common.join("objects"),
        admin.clone(),
        common.join(&ref_dir),
        common.join(&log_dir),
    ];
    writable.extend(tag_dir.iter().map(|t| common.join(t)));
    let mut real = vec![
        (common.join("objects"), true),
        (admin, true),
        (common.join("HEAD"), false),
        (common.join("packed-refs"), false),
        (common.join(heads), false),
        (common.join(&ref_dir), true),
        (common.join(tags), false),
    ];
    real.extend(tag_dir.iter().map(|t| (common.join(t), true)));
    real.extend([(common.join(logs), false), (common.join(&log_dir), true)]);
    // Unset, the refs are files (the only format before git 2.45).
    let files = git::line(path, &["config", "--get", "extensions.refStorage"])
        .map_or(true, |f| f.eq_ignore_ascii_case("files"));
    let git = files.then(|| GitGrant {
        common,
        real,
        branch: branch.to_string(),
    });
    Ok((writable, git))
}

/// Gives a repository that has none the `packed-refs` git itself writes when nothing is
/// packed: the agent's view binds it read-only, so no `pack-refs` there can empty the
/// job's loose refs into a file only the run sees.
fn empty_packed_refs(common: &Path) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(common.join("packed-refs"))
    {
        let _ = f.write_all(b"# pack-refs with: peeled fully-peeled sorted \n");
    }
}

/// Pushes `branch` from the worktree at `dir` to the checkout's remote `remote`, under the
/// same name; git's own message when it fails.
pub fn push(dir: &Path, branch: &str, remote: &str) -> Result<(), super::GitError> {
    let refspec = format!("{branch}:refs/heads/{branch}");
    super::git::run(dir, &["push", "--quiet", remote, &refspec]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository on `main` with one commit, its refs in `format`, and where its
    /// worktrees go.
    fn repo_of(format: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let co = dir.path().join("co");
        std::fs::create_dir(&co).unwrap();
        let t = ["-c", "user.name=t", "-c", "user.email=t@t"];
        let format = format!("--ref-format={format}");
        git::run(&co, &["init", "-q", "-b", "main", &format]).unwrap();
        std::fs::write(co.join("f"), "f").unwrap();
        git::run(&co, &["add", "."]).unwrap();
        git::run(&co, &[&t[..], &["commit", "-qm", "one"]].concat()).unwrap();
        let co = co.canonicalize().unwrap();
        (dir, co)
    }

    fn repo() -> (tempfile::TempDir, PathBuf) {
        repo_of("files")
    }

    fn spec(co: &Path, job: &str) -> OpenSpec {
        OpenSpec {
            checkout: co.to_path_buf(),
            path: co.parent().unwrap().join(job),
            branch: branch_for("gitmoot/", job),
            base: None,
            base_commit: None,
        }
    }

    #[test]
    fn a_new_jobs_grant_names_its_own_ref_folders_over_read_only_shared_ones() {
        let (_dir, co) = repo();
        let opened = open(&spec(&co, "j1")).unwrap();
        assert_eq!(opened.branch, "gitmoot/j1/work");
        let git = co.join(".git");
        let own = git.join("refs/heads/gitmoot/j1");
        assert!(opened.writable.contains(&own), "{:?}", opened.writable);
        assert!(!opened.writable.contains(&git.join("refs/heads/gitmoot")));
        assert!(opened.writable.contains(&git.join("refs/tags/gitmoot/j1")));
        let layer = opened.git.expect("a files repository is layered");
        assert_eq!(layer.common, git);
        for (path, writable) in [
            (git.join("objects"), true),
            (git.join("HEAD"), false),
            (git.join("packed-refs"), false),
            (git.join("refs/heads"), false),
            (own, true),
            (git.join("refs/tags"), false),
            (git.join("logs/refs/heads/gitmoot/j1"), true),
        ] {
            assert!(path.exists(), "{}", path.display());
            assert!(
                layer.real.contains(&(path.clone(), writable)),
                "{} {writable}: {:?}",
                path.display(),
                layer.real
            );
        }
        // What git itself writes for an empty pack: the repository reads as before.
        let refs = git::line(&co, &["for-each-ref", "--format=%(refname)"]).unwrap();
        assert_eq!(refs, "refs/heads/gitmoot/j1/work\nrefs/heads/main");
    }

    #[test]
    fn a_worktree_opened_before_on_the_old_branch_name_is_reused_with_its_grant() {
        let (_dir, co) = repo();
        let s = spec(&co, "j2");
        let at = s.path.display().to_string();
        git::run(&co, &["worktree", "add", "-q", "-b", "gitmoot/j2", &at]).unwrap();
        let opened = open(&s).unwrap();
        assert_eq!(opened.branch, "gitmoot/j2");
        let shared = co.join(".git/refs/heads/gitmoot");
        assert!(opened.writable.contains(&shared), "{:?}", opened.writable);
        assert!(opened.git.unwrap().real.contains(&(shared, true)));
    }

    #[test]
    fn a_reftable_repository_gets_no_layer_that_would_hide_the_jobs_refs() {
        let (_dir, co) = repo_of("reftable");
        let opened = open(&spec(&co, "j3")).unwrap();
        assert_eq!(opened.git, None);
        assert!(opened.writable.contains(&co.join(".git/objects")));
    }
}
