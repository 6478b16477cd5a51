//! `worktree list` and `worktree prune`: every write job's worktree with what it holds and
//! where it stands against its base, and the removal of what is left of landed or discarded
//! ones. Prune never touches a worktree whose work was neither landed nor discarded.
//!
//! Owns these two verbs; the CLI and the control room both call them.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::git;
use super::{WorktreeError, overlap, snapshot};
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
    /// `running`, `ready`, `base moved`, `conflicts`, `missing`, `landed` or `discarded`.
    pub state: &'static str,
    /// The job's own state: anything but `succeeded` means its work may be partial.
    pub job_state: Option<JobState>,
    /// Files its work changed against its base (none once landed or discarded).
    pub files: Option<usize>,
    /// Bytes on disk of the worktree's files (its `.git` link excluded).
    pub disk_bytes: Option<u64>,
    pub landed_commit: Option<String>,
    /// How often its work was sent back for review (`job review`).
    pub review_rounds: i64,
    /// The other open write jobs of its repo that change some of the same files.
    pub overlaps: Vec<OverlapWith>,
}

/// Another open job changing some of the same files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverlapWith {
    pub job: String,
    pub files: Vec<String>,
}

/// Every write job's worktree that was opened, oldest first.
pub fn list(store: &Store) -> Result<Vec<Listed>, WorktreeError> {
    let rows = worktrees::list(store.conn())?;
    // The disk walk runs beside git's reads of the same worktrees: it needs no git.
    let (touched, disks) = std::thread::scope(|s| {
        let disks = s.spawn(|| rows.iter().map(disk_of).collect::<Vec<_>>());
        let touched = overlap::open_touched(&rows);
        (touched, disks.join().unwrap_or_default())
    });
    let pairs = overlap::pairs(&rows, &touched);
    let mut tips = Tips::new();
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
                    files: o.files.clone(),
                })
            })
            .collect();
        let files = touched.get(&w.job_id).map(Vec::len);
        out.push(Listed {
            overlaps,
            disk_bytes: disk,
            ..describe(w, job_state, files, &mut tips)
        });
    }
    Ok(out)
}

/// Each base branch's tip, read once per listing (every job of a repo shares it).
type Tips = std::collections::HashMap<(Option<String>, String), Option<String>>;

/// The bytes on disk of an open worktree that is there.
fn disk_of(w: &WriteTree) -> Option<u64> {
    let path = Path::new(w.path.as_deref()?);
    (w.state == WorktreeState::Open && path.exists()).then(|| disk_use(path))
}

fn describe(
    w: WriteTree,
    job_state: Option<JobState>,
    touched: Option<usize>,
    tips: &mut Tips,
) -> Listed {
    let path = w.path.as_deref().map(PathBuf::from);
    let present = path.as_ref().is_some_and(|p| p.exists());
    let (state, files) = match w.state {
        WorktreeState::Landed => ("landed", None),
        WorktreeState::Discarded => ("discarded", None),
        _ if !present => ("missing", None),
        _ => {
            let p = path.as_deref().unwrap_or(Path::new("."));
            let files = touched;
            let state = if job_state == Some(JobState::Running) {
                "running"
            } else {
                against_base(&w, p, tips)
            };
            (state, files)
        }
    };
    Listed {
        disk_bytes: None,
        job: w.job_id,
        repo: w.repo,
        branch: w.branch,
        base: w.base_ref,
        base_commit: w.base_commit,
        path: w.path,
        state,
        job_state,
        files,
        landed_commit: w.landed_commit,
        review_rounds: w.review_rounds,
        overlaps: Vec::new(),
    }
}

/// `ready` while the base branch is where the job started; else whether the job's work
/// still merges onto it.
fn against_base(w: &WriteTree, path: &Path, tips: &mut Tips) -> &'static str {
    let (Some(base), Some(start)) = (&w.base_ref, &w.base_commit) else {
        return "ready";
    };
    let now = tips
        .entry((w.checkout.clone().or(w.path.clone()), base.clone()))
        .or_insert_with(|| {
            let tip = format!("refs/heads/{base}");
            git::line(path, &["rev-parse", "--verify", "-q", &tip]).ok()
        });
    match now.clone() {
        Some(now) if &now != start => {
            let merge_base = format!("--merge-base={start}");
            // A tree merges as well as a commit once the merge base is named.
            let clean = snapshot::snapshot(path).ok().is_none_or(|t| {
                let args = ["merge-tree", "--write-tree", "--no-messages", &merge_base];
                git::yes(
                    path,
                    &[&args[..], &[now.as_str(), t.tree.as_str()]].concat(),
                )
                .unwrap_or(true)
            });
            if clean { "base moved" } else { "conflicts" }
        }
        _ => "ready",
    }
}

/// The bytes of every file under `dir`, links not followed, its `.git` entry left out.
fn disk_use(dir: &Path) -> u64 {
    fn walk(dir: &Path, top: bool) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .flatten()
            .filter(|e| !(top && e.file_name() == ".git"))
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => walk(&e.path(), false),
                Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
                Err(_) => 0,
            })
            .sum()
    }
    walk(dir, true)
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
