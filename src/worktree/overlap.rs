//! Conflicts before they happen: the files each open write job of a repo (running or not
//! yet landed) has touched, compared pairwise, and at land time the files a job shares with
//! jobs of its repo that landed since it started.
//!
//! Owns reading and comparing touched files; showing an overlap is the verbs' and the
//! control room's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::{WorktreeError, git, snapshot};
use crate::domain::WorktreeState;
use crate::store::Store;
use crate::store::worktrees::{self, WriteTree};

/// Two open write jobs of one repo that change the same files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overlap {
    pub repo: String,
    pub jobs: [String; 2],
    pub files: Vec<String>,
}

impl Overlap {
    /// `job A and job B both change src/auth.rs`.
    pub fn message(&self) -> String {
        format!(
            "job {} and job {} both change {}",
            self.jobs[0],
            self.jobs[1],
            self.files.join(", ")
        )
    }
}

/// The files each open write job with a worktree on disk has touched since its base.
pub(crate) fn open_touched(rows: &[WriteTree]) -> BTreeMap<String, Vec<String>> {
    rows.iter()
        .filter(|w| w.state == WorktreeState::Open)
        .filter_map(|w| {
            let path = w.path.as_deref().filter(|p| Path::new(p).exists())?;
            let base = w.base_commit.as_deref()?;
            let files = snapshot::touched_since(Path::new(path), base).ok()?;
            Some((w.job_id.clone(), files))
        })
        .collect()
}

/// Every pair of open write jobs of one repo whose touched files meet, oldest job first.
pub(crate) fn pairs(rows: &[WriteTree], touched: &BTreeMap<String, Vec<String>>) -> Vec<Overlap> {
    let open: Vec<&WriteTree> = rows
        .iter()
        .filter(|w| touched.contains_key(&w.job_id))
        .collect();
    let mut out = Vec::new();
    for (i, a) in open.iter().enumerate() {
        for b in open[i + 1..].iter().filter(|b| b.repo == a.repo) {
            let theirs: BTreeSet<&String> = touched[&b.job_id].iter().collect();
            let files: Vec<String> = touched[&a.job_id]
                .iter()
                .filter(|f| theirs.contains(f))
                .cloned()
                .collect();
            if !files.is_empty() {
                out.push(Overlap {
                    repo: a.repo.clone(),
                    jobs: [a.job_id.clone(), b.job_id.clone()],
                    files,
                });
            }
        }
    }
    out
}

/// Every overlap among the open write jobs (`job pending`, the control room's Attention).
pub fn overlaps(store: &Store) -> Result<Vec<Overlap>, WorktreeError> {
    let rows = worktrees::list(store.conn())?;
    let touched = open_touched(&rows);
    Ok(pairs(&rows, &touched))
}

/// What a job about to land shares with the jobs of its repo that landed since it started:
/// the files both changed, and those jobs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LandedFirst {
    pub files: Vec<String>,
    pub jobs: Vec<String>,
}

/// The files the work (`tree`) changed since `base_commit` that the base branch (now at
/// `onto`) changed too, and the landed jobs of the repo that moved it there.
pub(crate) fn landed_first(
    store: &Store,
    w: &WriteTree,
    co: &Path,
    (base_commit, onto, tree): (&str, &str, &str),
) -> Result<LandedFirst, WorktreeError> {
    if base_commit == onto {
        return Ok(LandedFirst::default());
    }
    let names = |from: &str, to: &str| -> Result<BTreeSet<String>, WorktreeError> {
        let out = git::run(co, &["diff", "--name-only", "-z", "--no-renames", from, to])?;
        Ok(git::split_z(&out).into_iter().collect())
    };
    let on_base = names(base_commit, onto)?;
    let files: Vec<String> = names(base_commit, tree)?
        .into_iter()
        .filter(|f| on_base.contains(f))
        .collect();
    if files.is_empty() {
        return Ok(LandedFirst::default());
    }
    let mut jobs = Vec::new();
    for other in worktrees::list(store.conn())? {
        let landed = match (&other.state, &other.landed_commit) {
            (WorktreeState::Landed, Some(c))
                if other.repo == w.repo && other.job_id != w.job_id =>
            {
                c
            }
            _ => continue,
        };
        let after_base = !git::yes(co, &["merge-base", "--is-ancestor", landed, base_commit])?;
        if after_base && git::yes(co, &["merge-base", "--is-ancestor", landed, onto])? {
            jobs.push(other.job_id);
        }
    }
    Ok(LandedFirst { files, jobs })
}
