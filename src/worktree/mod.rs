//! Git worktrees outside the home: where they live (`root`), and the write jobs' worktrees,
//! each on a branch of its own that is the job's work product until the operator lands or
//! discards it (`open`, `push`, `diff`, `land`, journalled so that `journal` finishes or
//! drops a land killed midway, `discard`, `many` for both over a
//! selection, `list`, `prune`, `forecast` of how open jobs' work merges, `follow` and
//! `rebase` for a base that moved, `keep_stash` for what its agent's run left stashed).
//!
//! Owns the git calls on a repo's registered checkout and its worktrees, and the
//! `job_worktrees` rows through `store::worktrees`. Must not decide a job's state (the engine
//! does) nor run an agent (the daemon does); it never changes the operator's checkout except
//! in `land`.

mod diff;
mod discard;
pub(crate) mod git;
mod hosts;
mod journal;
mod land;
mod land_step;
mod list;
pub mod many;
mod midway;
mod open;
mod overlap;
mod patch;
mod rebase;
mod review;
mod snapshot;
mod stash;
mod unlinked;

pub use diff::{DiffFile, DiffLine, Hunk, JobDiff, diff_files, diff_text, job_diff, job_diff_text};
pub use discard::{Loss, discard, loss};
pub use git::{GitError, with_worktree_lock};
pub use hosts::{StoredFrom, bounded as bounded_diff};
pub use journal::{Resumed, resume_lands};
pub use land::{Landed, Strategy, land};
pub use list::{Listed, Pruned, list, prune};
pub use open::{OpenSpec, Opened, branch_for, open, push};
pub use overlap::{BaseConflict, Clash, ConflictHunk, Forecast, LandedFirst, Overlap, forecast};
/// The forecasts among rows whose work was read already (the control room keeps each
/// job's read).
pub(crate) use overlap::{Work as OpenWork, against_base_now, pairs as forecast_pairs, work_of};
pub use rebase::{Followed, Rebased, follow, rebase};
pub use review::{Reviewed, review};
#[cfg(test)]
pub(crate) use snapshot::reads::of as reads_of;
pub use snapshot::touched_since;
pub use stash::keep_stash;
pub use unlinked::UnlinkedFolder;

use std::path::{Path, PathBuf};

use crate::Invalid;
use crate::clock::Millis;
use crate::config::Config;
use crate::domain::{Action, WorktreeState};
use crate::store::jobs::{self, Job};
use crate::store::worktrees::{self, WriteTree};
use crate::store::{StoreError, Tx};

#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// A land or discard that would lose or clobber work, refused with nothing changed.
    #[error("{reason}")]
    Refused { reason: String },
    #[error("{what} {}: {cause}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
}

impl WorktreeError {
    /// Bad input (exit 2) rather than a failure of git or the store.
    pub fn is_invalid(&self) -> bool {
        match self {
            Self::Invalid(_) => true,
            Self::Store(e) => e.is_invalid(),
            Self::Engine(e) => e.is_invalid(),
            _ => false,
        }
    }
}

/// Whether `path` is the top of (or inside) a git work tree.
pub fn is_git_checkout(path: &Path) -> bool {
    git::yes(path, &["rev-parse", "--is-inside-work-tree"]).unwrap_or(false)
}

/// The registered git checkout of `repo`, if it has one.
pub fn checkout_of(config: &Config, repo: &str) -> Option<PathBuf> {
    config
        .repos
        .get(repo)
        .and_then(|r| r.path.clone())
        .filter(|p| is_git_checkout(p))
}

/// The folder an implement job on `repo` edits in place: the repo's registered path when
/// it is not a git checkout, where the job gets no worktree or branch of its own (nothing
/// to diff, land or discard). `None` for any other job.
pub fn edited_in_place(config: &Config, repo: Option<&str>, action: Action) -> Option<PathBuf> {
    if action != Action::Implement {
        return None;
    }
    let path = config.repos.get(repo?)?.path.clone()?;
    (!is_git_checkout(&path)).then_some(path)
}

/// Checks a `--base REF` asked for at submission: only an implement job on a repo with a
/// registered git checkout has a branch of its own, and the ref must name a branch there:
/// a job's work lands by moving its base branch, so a tag or a commit could never land.
pub fn check_base(
    config: &Config,
    repo: Option<&str>,
    action: Action,
    base: &str,
) -> Result<(), WorktreeError> {
    if action != Action::Implement {
        return Err(crate::invalid!(
            "--base is for implement jobs (their branch starts there), not {action}"
        )
        .into());
    }
    let Some(repo) = repo else {
        return Err(
            crate::invalid!("--base needs --repo: a repo with a registered git checkout").into(),
        );
    };
    let Some(checkout) = checkout_of(config, repo) else {
        return Err(crate::invalid!(
            "--base: {repo} has no registered git checkout ([repos.\"{repo}\"] path)"
        )
        .into());
    };
    let spec = format!("{base}^{{commit}}");
    git::run(&checkout, &["rev-parse", "--verify", "--quiet", &spec]).map_err(|e| {
        crate::invalid!(
            "--base {base:?} names no commit in {}{}",
            checkout.display(),
            if e.message.is_empty() {
                String::new()
            } else {
                format!(": {}", e.message)
            }
        )
    })?;
    if !land::branch_exists(&checkout, base) {
        return Err(crate::invalid!(
            "--base {base:?} is not a branch of {}: a job's work lands on its base branch, so a tag or commit could never be landed; name a branch (`git branch NAME {base}` makes one there)",
            checkout.display()
        )
        .into());
    }
    Ok(())
}

/// Records the base a submitted job's branch will start from (checked by [`check_base`]),
/// in the submission's transaction.
pub fn request_base(tx: &Tx<'_>, job: &Job, base: &str, now: Millis) -> Result<(), StoreError> {
    let repo = job.repo.as_deref().unwrap_or_default();
    worktrees::put(
        tx,
        &WriteTree::requested(&job.id, &job.root_id, repo, Some(base), now),
    )
}

/// An open worktree's job, row, folder and base commit, for a verb that works on the
/// worktree itself (`verb`): refused, naming the host, when the worktree is on another
/// host than the one whose labels are `here`.
pub(crate) fn open_here(
    tx: &Tx<'_>,
    here: &[String],
    id: &str,
    verb: &str,
) -> Result<(Job, WriteTree, PathBuf, String), WorktreeError> {
    let (job, w) = of_job(tx, id)?;
    hosts::refuse_elsewhere(here, &job, verb)?;
    opened(job, w)
}

/// The folder and base of an opened worktree's row (the base its branch followed, when
/// newer than the recorded one); a landed, discarded or vanished one is refused naming
/// what became of it.
pub(super) fn opened(
    job: Job,
    w: WriteTree,
) -> Result<(Job, WriteTree, PathBuf, String), WorktreeError> {
    let gone = match w.state {
        WorktreeState::Landed => Some(format!(
            "was landed{}",
            w.landed_commit
                .as_deref()
                .map(|c| format!(" as {}", &c[..c.len().min(12)]))
                .unwrap_or_default()
        )),
        WorktreeState::Discarded => Some("was discarded".to_string()),
        _ => None,
    };
    if let Some(gone) = gone {
        return Err(crate::invalid!("{}'s work {gone}; its worktree is gone", job.id).into());
    }
    let (Some(path), Some(base)) = (w.path.clone(), w.base_commit.clone()) else {
        return Err(crate::invalid!("{}'s worktree was not recorded", job.id).into());
    };
    let path = PathBuf::from(path);
    if !path.exists() {
        return Err(WorktreeError::Refused {
            reason: format!(
                "{}'s worktree {} is missing from disk (`gitmoot job discard {}` says what its branch still holds and removes it)",
                job.id,
                path.display(),
                job.id
            ),
        });
    }
    if unlinked::is_unlinked(&path) {
        return Err(unlinked::refusal(&job.id, &path, w.branch.as_deref()));
    }
    // Once the branch took in a newer tip of its base branch, its work starts there.
    let base = rebase::based(&path, &base, w.base_ref.as_deref()).base;
    Ok((job, w, path, base))
}

/// The job `id` names (a unique prefix will do) and its worktree row.
pub fn of_job(tx: &Tx<'_>, id: &str) -> Result<(Job, WriteTree), WorktreeError> {
    let id = jobs::resolve_id(tx, id)?;
    let job = jobs::require(tx, &id)?;
    match worktrees::get(tx, &id)? {
        Some(w) if w.state != WorktreeState::Requested => Ok((job, w)),
        _ => Err(crate::invalid!(
            "{id} has no worktree: only an implement job on a repo with a registered git checkout works on a branch of its own, once it has started"
        )
        .into()),
    }
}

/// The folder under which a home's worktrees live: `[daemon] worktrees` when set, else
/// `$XDG_STATE_HOME/gitmoot/worktrees/<hash>`, falling back to
/// `~/.local/state/gitmoot/worktrees/<hash>`, where `<hash>` is the first 12 hex digits of
/// the SHA-256 of the home's path. An agent's working directory is a worktree, so it must
/// not name the home: the hash tells homes apart without saying where one is.
pub fn root(home: &Path, configured: Option<&Path>) -> PathBuf {
    if let Some(dir) = configured {
        return dir.to_path_buf();
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::home_dir().map(|h| h.join(".local").join("state")))
        .unwrap_or_else(std::env::temp_dir);
    let hash = crate::ids::sha256_hex(home.as_os_str().as_encoded_bytes());
    state.join("gitmoot").join("worktrees").join(&hash[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_never_names_the_home_and_differs_per_home() {
        let a = root(Path::new("/srv/home-a/.gitmoot"), None);
        let b = root(Path::new("/srv/home-b/.gitmoot"), None);
        assert_ne!(a, b);
        assert!(!a.display().to_string().contains("home-a"));
        assert_eq!(
            root(Path::new("/x"), Some(Path::new("/wt"))),
            PathBuf::from("/wt")
        );
    }
}
