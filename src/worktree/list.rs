//! `worktree list` and `worktree prune`: every write job's worktree with what it holds and
//! where it stands against its base, and the removal of what is left of landed or discarded
//! ones. Prune never touches a worktree whose work was neither landed nor discarded.
//!
//! Owns these two verbs; the CLI and the control room both call them.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::git;
use super::{WorktreeError, overlap};
use crate::config::Config;
use crate::domain::{JobState, WorktreeState};
use crate::store::Store;
use crate::store::jobs;
use crate::store::worktrees::{self, WriteTree};

/// One write job's worktree as `worktree list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    pub job: String,
    pub repo: String,
    pub branch: Option<String>,
    pub base: Option<String>,
    pub base_commit: Option<String>,
    pub path: Option<String>,
    /// `running`, `ready`, `base moved`, `conflicts`, `missing`, `unlinked` (its folder is
    /// there but git no longer knows it), `landed` or `discarded`.
    pub state: &'static str,
    /// The job's own state: anything but `succeeded` means its work may be partial.
    pub job_state: Option<JobState>,
    /// Files its work changed against its base (none once landed or discarded); the base
    /// is the newer tip of its base branch its branch took in, once it did.
    pub files: Option<usize>,
    /// Bytes the worktree's folder takes on disk, as `du -s` counts them.
    pub disk_bytes: Option<u64>,
    pub landed_commit: Option<String>,
    /// How often its work was sent back for review (`job review`).
    pub review_rounds: i64,
    /// The other open write jobs of its repo that change some of the same files or whose
    /// work conflicts with its own.
    pub overlaps: Vec<OverlapWith>,
    /// Its conflict with its base branch's tip (work landed there since it started).
    pub against_base: Option<overlap::BaseConflict>,
}

/// Another open job changing some of the same files (`overlaps`), or whose work
/// conflicts with this one's (`conflicts`, with where, on the older job's lines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverlapWith {
    pub job: String,
    pub kind: overlap::Clash,
    pub files: Vec<String>,
    pub hunks: Vec<overlap::ConflictHunk>,
}

/// Every write job's worktree that was opened, oldest first.
pub fn list(store: &Store) -> Result<Vec<Listed>, WorktreeError> {
    let rows = worktrees::list(store.conn())?;
    // The disk walk runs beside git's reads of the same worktrees: it needs no git.
    let (mut work, disks) = std::thread::scope(|s| {
        let disks = s.spawn(|| rows.iter().map(disk_of).collect::<Vec<_>>());
        let work = overlap::open_work(&rows);
        (work, disks.join().unwrap_or_default())
    });
    let pairs = overlap::pairs(&rows, &work);
    let mut out = Vec::new();
    for (w, disk) in rows
        .into_iter()
        .zip(disks)
        .filter(|(w, _)| w.state != WorktreeState::Requested)
    {
        let job_state = jobs::get(store.conn(), &w.job_id)?.map(|j| j.state);
        let overlaps = pairs
            .iter()
            .filter_map(|o| {
                let other = match &o.jobs {
                    [a, b] if *a == w.job_id => b,
                    [a, b] if *b == w.job_id => a,
                    _ => return None,
                };
                Some(OverlapWith {
                    job: other.clone(),
                    kind: o.kind,
                    files: o.files.clone(),
                    hunks: o.hunks.clone(),
                })
            })
            .collect();
        let mine = work.remove(&w.job_id);
        out.push(Listed {
            overlaps,
            disk_bytes: disk,
            ..describe(w, job_state, mine)
        });
    }
    Ok(out)
}

/// The bytes on disk of an open worktree that is there.
fn disk_of(w: &WriteTree) -> Option<u64> {
    let path = Path::new(w.path.as_deref()?);
    (w.state == WorktreeState::Open && path.exists()).then(|| disk_use(path))
}

fn describe(w: WriteTree, job_state: Option<JobState>, work: Option<overlap::Work>) -> Listed {
    let path = w.path.as_deref().map(PathBuf::from);
    let present = path.as_ref().is_some_and(|p| p.exists());
    let (state, files) = match (w.state, &work) {
        (WorktreeState::Landed, _) => ("landed", None),
        (WorktreeState::Discarded, _) => ("discarded", None),
        _ if !present => ("missing", None),
        _ if super::unlinked::is_unlinked(path.as_deref().unwrap_or(Path::new(""))) => {
            ("unlinked", None)
        }
        (_, None) => ("ready", None),
        (_, Some(work)) => {
            let state = if job_state == Some(JobState::Running) {
                "running"
            } else if work.against_base.is_some() {
                "conflicts"
            } else if work.based.holds_tip() {
                "ready"
            } else {
                "base moved"
            };
            (state, Some(work.touched.len()))
        }
    };
    let (base_commit, against_base) = match work {
        Some(work) => (Some(work.based.base), work.against_base),
        None => (w.base_commit, None),
    };
    Listed {
        disk_bytes: None,
        job: w.job_id,
        repo: w.repo,
        branch: w.branch,
        base: w.base_ref,
        base_commit,
        path: w.path,
        state,
        job_state,
        files,
        landed_commit: w.landed_commit,
        review_rounds: w.review_rounds,
        overlaps: Vec::new(),
        against_base,
    }
}

/// The disk `dir` takes, as `du -s` counts it: the blocks allocated to every file and
/// folder under it (the folder and its `.git` link included), each inode once however
/// many hard links name it, links not followed. Not the files' lengths: a worktree is
/// mostly small files, each taking at least a whole block, so their lengths add up to
/// about half of what the folder really holds on disk.
fn disk_use(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fn walk(path: &Path, meta: &std::fs::Metadata, seen: &mut HashSet<(u64, u64)>) -> u64 {
        if !seen.insert((meta.dev(), meta.ino())) {
            return 0;
        }
        let mut bytes = meta.blocks() * 512;
        if meta.is_dir() {
            for e in std::fs::read_dir(path).into_iter().flatten().flatten() {
                if let Ok(m) = e.metadata() {
                    bytes += walk(&e.path(), &m, seen);
                }
            }
        }
        bytes
    }
    std::fs::symlink_metadata(dir)
        .map(|m| walk(dir, &m, &mut HashSet::new()))
        .unwrap_or(0)
}

/// What `worktree prune` removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pruned {
    /// Worktree folders of landed or discarded jobs that were still on disk.
    pub worktrees: Vec<String>,
    /// Branches of landed jobs kept against `keep_branches = false` by a failed delete.
    pub branches: Vec<String>,
    /// Checkouts whose git records of vanished worktrees were pruned.
    pub checkouts: Vec<String>,
}

/// Removes what is left of landed and discarded jobs' worktrees; an open one (work neither
/// landed nor discarded) is never touched.
pub fn prune(store: &Store, config: &Config) -> Result<Pruned, WorktreeError> {
    let rows = worktrees::list(store.conn())?;
    let mut pruned = Pruned {
        worktrees: Vec::new(),
        branches: Vec::new(),
        checkouts: Vec::new(),
    };
    for w in &rows {
        let done = matches!(w.state, WorktreeState::Landed | WorktreeState::Discarded);
        let (Some(co), true) = (w.checkout.as_deref().map(Path::new), done) else {
            continue;
        };
        if let Some(p) = w.path.as_deref().filter(|p| Path::new(p).exists()) {
            git::with_worktree_lock(co, || git::run(co, &["worktree", "remove", "--force", p]))?;
            pruned.worktrees.push(p.to_string());
        }
        let keep = w.state == WorktreeState::Landed
            && config.repos.get(&w.repo).is_some_and(|r| r.keep_branches);
        if let Some(b) = w.branch.as_deref().filter(|_| !keep)
            && git::yes(
                co,
                &[
                    "show-ref",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{b}"),
                ],
            )?
        {
            git::run(co, &["branch", "-D", b])?;
            pruned.branches.push(b.to_string());
        }
    }
    let mut checkouts: Vec<&str> = rows.iter().filter_map(|w| w.checkout.as_deref()).collect();
    checkouts.sort();
    checkouts.dedup();
    for co in checkouts.into_iter().filter(|c| Path::new(c).exists()) {
        git::with_worktree_lock(Path::new(co), || {
            git::run(Path::new(co), &["worktree", "prune"])
        })?;
        pruned.checkouts.push(co.to_string());
    }
    Ok(pruned)
}
