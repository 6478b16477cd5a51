//! Conflicts before they happen: for every pair of open write jobs of a repo (running or
//! not yet landed), and for each against its base branch's current tip, what `git
//! merge-tree --write-tree` makes of their work (a clean overlap of the same files, or a
//! conflict with its files and lines), and at land time the files a job shares with the
//! jobs of its repo that landed since it started.
//!
//! Owns land's `merged_tree` (git's merge as objects, `git::merge`: no worktree, index or
//! ref moves) and the forecasts; showing them is the verbs' and the control room's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::git::{self, merge, split_z};
use super::rebase::{Based, based};
use super::{WorktreeError, snapshot};
use crate::domain::{EventKind, WorktreeState};
use crate::store::Store;
use crate::store::events;
use crate::store::worktrees::{self, WriteTree};

use crate::domain::places;
pub use crate::domain::{Clash, ConflictHunk};

/// The tree of `ours` and `theirs` merged, or a land's refusal naming the conflicting files.
pub(super) fn merged_tree(
    co: &Path,
    ours: &str,
    theirs: &str,
    merge_base: Option<&str>,
) -> Result<String, WorktreeError> {
    let m = merge(co, ours, theirs, merge_base)?;
    if m.conflicted.is_empty() {
        return Ok(m.tree);
    }
    Err(WorktreeError::Refused {
        reason: format!(
            "landing would conflict in {}; nothing was changed",
            m.conflicted.join(", ")
        ),
    })
}

/// The conflicted stretches git marked in `files` of the merged `tree`, numbered on the
/// first side's lines; a file without markers (deleted on one side, binary) has none.
fn hunks(dir: &Path, tree: &str, files: &[String]) -> Vec<ConflictHunk> {
    let mut out = Vec::new();
    for f in files {
        if let Ok(blob) = git::run(dir, &["cat-file", "blob", &format!("{tree}:{f}")]) {
            out.extend(marked(f, &blob));
        }
    }
    out
}

/// The `<<<<<<<` … `>>>>>>>` stretches of one merged file (diff3's `|||||||` base part
/// too), each as the lines its first side holds there.
fn marked(file: &str, text: &[u8]) -> Vec<ConflictHunk> {
    #[derive(PartialEq)]
    enum Part {
        Outside,
        Ours,
        Base,
        Theirs,
    }
    let (mut out, mut line, mut start, mut part) = (Vec::new(), 0u64, 0u64, Part::Outside);
    for l in text.split(|b| *b == b'\n') {
        let is = |m: &[u8]| l == m || (l.starts_with(m) && l.get(m.len()) == Some(&b' '));
        match part {
            Part::Outside if is(b"<<<<<<<") => (part, start) = (Part::Ours, line + 1),
            Part::Ours if is(b"|||||||") => part = Part::Base,
            Part::Ours | Part::Base if l == b"=======" => part = Part::Theirs,
            Part::Theirs if is(b">>>>>>>") => {
                out.push(ConflictHunk {
                    file: file.to_string(),
                    start,
                    end: line,
                });
                part = Part::Outside;
            }
            Part::Outside | Part::Ours => line += 1,
            Part::Base | Part::Theirs => {}
        }
    }
    out
}

/// Two open write jobs of one repo that change the same files, or whose work conflicts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overlap {
    pub repo: String,
    pub jobs: [String; 2],
    pub kind: Clash,
    /// The files both change (`overlaps`), or those that conflict (`conflicts`).
    pub files: Vec<String>,
    /// Where git marked the conflict, on the first job's lines.
    pub hunks: Vec<ConflictHunk>,
}

impl Overlap {
    /// `job A and job B both change src/auth.rs`, or `… conflict in src/auth.rs:12-14`.
    pub fn message(&self) -> String {
        match self.kind {
            Clash::Overlaps => format!(
                "job {} and job {} both change {}",
                self.jobs[0],
                self.jobs[1],
                self.files.join(", ")
            ),
            Clash::Conflicts => format!(
                "job {} and job {} conflict in {}",
                self.jobs[0],
                self.jobs[1],
                places(&self.files, &self.hunks)
            ),
        }
    }
}

/// An open job whose work conflicts with its base branch's current tip: work landed (or
/// committed) there since it started. It stays until the job is rebased, landed or
/// discarded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BaseConflict {
    pub repo: String,
    pub job: String,
    /// The base branch and its tip.
    pub base: String,
    pub tip: String,
    pub kind: Clash,
    pub files: Vec<String>,
    /// Where git marked the conflict, on the job's lines.
    pub hunks: Vec<ConflictHunk>,
}

impl BaseConflict {
    /// `job J would conflict in F with work landed on main`.
    pub fn message(&self) -> String {
        format!(
            "job {} would conflict in {} with work landed on {} (`gitmoot job rebase {}` names it)",
            self.job,
            places(&self.files, &self.hunks),
            self.base,
            self.job
        )
    }
}

/// Every forecast among the open write jobs: the pairs that overlap or conflict, and the
/// jobs that conflict with their base branch's tip.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Forecast {
    pub pairs: Vec<Overlap>,
    pub base: Vec<BaseConflict>,
}

/// One open job's work as the forecasts read it.
pub(crate) struct Work {
    pub repo: String,
    dir: PathBuf,
    head: String,
    tree: String,
    /// Its worktree holds work its branch does not.
    dirty: bool,
    pub based: Based,
    /// The files its work changed since its (followed) base.
    pub touched: Vec<String>,
    /// Its conflict with its base branch's tip, or `None` when it merges there cleanly.
    pub against_base: Option<BaseConflict>,
}

/// Each open write job with a worktree on disk, its work read once.
pub(crate) fn open_work(rows: &[WriteTree]) -> BTreeMap<String, Work> {
    rows.iter()
        .filter_map(|w| Some((w.job_id.clone(), work_of(w)?)))
        .collect()
}

/// One open write job's work, read from its worktree; `None` when it is not open or not
/// on disk.
pub(crate) fn work_of(w: &WriteTree) -> Option<Work> {
    if w.state != WorktreeState::Open {
        return None;
    }
    let dir = PathBuf::from(w.path.as_deref().filter(|p| Path::new(p).exists())?);
    let b = based(&dir, w.base_commit.as_deref()?, w.base_ref.as_deref());
    let snap = snapshot::snapshot(&dir).ok()?;
    let names = git::run(
        &dir,
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            &b.base,
            &snap.tree,
        ],
    )
    .ok()?;
    let mut touched = split_z(&names);
    touched.sort();
    let against_base = base_conflict(w, &dir, &b, &snap.tree);
    Some(Work {
        repo: w.repo.clone(),
        dir,
        head: snap.head,
        tree: snap.tree,
        dirty: snap.dirty,
        based: b,
        touched,
        against_base,
    })
}

/// A job's work read before, forecast again against its base branch's tip as it is now
/// (another job's land moves it without this job's row changing): git objects only, its
/// worktree is not read again.
pub(crate) fn against_base_now(w: &WriteTree, work: &mut Work) {
    let Some(recorded) = w.base_commit.as_deref() else {
        return;
    };
    work.based = based(&work.dir, recorded, w.base_ref.as_deref());
    work.against_base = base_conflict(w, &work.dir, &work.based, &work.tree);
}

impl Work {
    /// Whether another read of the same job found the same work.
    pub fn same_as(&self, other: &Self) -> bool {
        (&self.head, &self.tree, &self.touched) == (&other.head, &other.tree, &other.touched)
    }
}

/// The job's work merged onto its base branch's tip (from their merge base), when the
/// branch does not hold that tip yet; the conflict, if it does not merge cleanly.
fn base_conflict(w: &WriteTree, dir: &Path, b: &Based, tree: &str) -> Option<BaseConflict> {
    if b.holds_tip() {
        return None;
    }
    let (tip, mb) = (b.tip.as_deref()?, b.merge_base.as_deref()?);
    let m = merge(dir, tree, tip, Some(mb)).ok()?;
    if m.conflicted.is_empty() {
        return None;
    }
    Some(BaseConflict {
        repo: w.repo.clone(),
        job: w.job_id.clone(),
        base: w.base_ref.clone().unwrap_or_default(),
        tip: tip.to_string(),
        kind: Clash::Conflicts,
        hunks: hunks(dir, &m.tree, &m.conflicted),
        files: m.conflicted,
    })
}

/// Every pair of open write jobs of one repo whose work meets, oldest job first: merged
/// from their merge base, `conflicts` when git cannot, else `overlaps` when they change
/// the same files.
pub(crate) fn pairs(rows: &[WriteTree], work: &BTreeMap<String, Work>) -> Vec<Overlap> {
    let open: Vec<(&String, &Work)> = rows
        .iter()
        .filter_map(|w| work.get_key_value(&w.job_id))
        .collect();
    let mut out = Vec::new();
    for (i, (a_id, a)) in open.iter().enumerate() {
        for (b_id, b) in open[i + 1..].iter().filter(|(_, b)| b.repo == a.repo) {
            if let Some(o) = pair(a, b) {
                out.push(Overlap {
                    repo: a.repo.clone(),
                    jobs: [(*a_id).clone(), (*b_id).clone()],
                    ..o
                });
            }
        }
    }
    out
}

fn pair(a: &Work, b: &Work) -> Option<Overlap> {
    let theirs: BTreeSet<&String> = b.touched.iter().collect();
    let shared: Vec<String> = a
        .touched
        .iter()
        .filter(|f| theirs.contains(f))
        .cloned()
        .collect();
    // Git can only fail to merge a path both sides touched, or a file one side has where
    // the other has a folder: without either there is nothing to forecast.
    if shared.is_empty() && !file_meets_folder(&a.touched, &b.touched) {
        return None;
    }
    // Two branch tips merge as commits; uncommitted work merges as trees from their base.
    let m = if a.dirty || b.dirty {
        let mb = git::line(&a.dir, &["merge-base", &a.head, &b.head]).ok();
        mb.and_then(|mb| merge(&a.dir, &a.tree, &b.tree, Some(&mb)).ok())
    } else {
        merge(&a.dir, &a.head, &b.head, None).ok()
    };
    let blank = |kind, files| Overlap {
        repo: String::new(),
        jobs: [String::new(), String::new()],
        kind,
        files,
        hunks: Vec::new(),
    };
    match m {
        Some(m) if !m.conflicted.is_empty() => Some(Overlap {
            hunks: hunks(&a.dir, &m.tree, &m.conflicted),
            ..blank(Clash::Conflicts, m.conflicted)
        }),
        _ if !shared.is_empty() => Some(blank(Clash::Overlaps, shared)),
        _ => None,
    }
}

/// Whether a path one side touched is a folder above a path the other touched (`a` and
/// `a/b`), where a merge can conflict though no path is shared.
fn file_meets_folder(a: &[String], b: &[String]) -> bool {
    fn folders(paths: &[String]) -> BTreeSet<&str> {
        paths
            .iter()
            .flat_map(|p| p.match_indices('/').map(move |(i, _)| &p[..i]))
            .collect()
    }
    let (above_a, above_b) = (folders(a), folders(b));
    b.iter().any(|p| above_a.contains(p.as_str())) || a.iter().any(|p| above_b.contains(p.as_str()))
}

/// Every forecast among the open write jobs (`job pending`, the control room's Attention
/// and rows, `worktree list`).
pub fn forecast(store: &Store) -> Result<Forecast, WorktreeError> {
    let rows = worktrees::list(store.conn())?;
    let work = open_work(&rows);
    Ok(Forecast {
        pairs: pairs(&rows, &work),
        base: work.into_values().filter_map(|w| w.against_base).collect(),
    })
}

/// What a job about to land shares with the jobs of its repo that landed since it started:
/// the files both changed, and those of the jobs whose own change touched them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LandedFirst {
    pub files: Vec<String>,
    pub jobs: Vec<String>,
}

/// The files the work (`tree`) changed since `base_commit` that the base branch (now at
/// `onto`) changed too, and the landed jobs of the repo that moved it there changing them.
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
        Ok(split_z(&out).into_iter().collect())
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
        if !after_base || !git::yes(co, &["merge-base", "--is-ancestor", landed, onto])? {
            continue;
        }
        let own = names(&own_start(store, co, &other, landed)?, landed)?;
        if files.iter().any(|f| own.contains(f)) {
            jobs.push(other.job_id);
        }
    }
    Ok(LandedFirst { files, jobs })
}

/// Where a landed job's own change starts: the base's commit before a merge or squash (the
/// landed commit's first parent), else (a fast-forward or rebase) the job's recorded base.
fn own_start(
    store: &Store,
    co: &Path,
    w: &WriteTree,
    landed: &str,
) -> Result<String, WorktreeError> {
    let how = events::for_job(store.conn(), &w.job_id)?
        .into_iter()
        .rev()
        .find(|e| e.is(EventKind::Landed))
        .and_then(|e| e.data?["how"].as_str().map(str::to_string));
    let parents = git::line(co, &["rev-list", "--parents", "-n", "1", landed])?;
    let first_parent = parents.split(' ').nth(1).map(str::to_string);
    Ok(match (how.as_deref(), first_parent, &w.base_commit) {
        (Some("merge" | "squash"), Some(p), _) => p,
        (_, _, Some(base)) => base.clone(),
        (_, Some(p), None) => p,
        (_, None, None) => landed.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_shared_path_or_a_file_where_the_other_has_a_folder_can_conflict() {
        let v = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(file_meets_folder(&v(&["src/foo"]), &v(&["src/foo/bar.rs"])));
        assert!(file_meets_folder(&v(&["a/b/c"]), &v(&["a"])));
        assert!(!file_meets_folder(&v(&["src/foo"]), &v(&["src/foobar"])));
        assert!(!file_meets_folder(&v(&["src/a.rs"]), &v(&["src/b.rs"])));
    }

    #[test]
    fn a_conflict_is_placed_on_the_first_side_s_lines_diff3_or_not() {
        let merged = b"one\n<<<<<<< a\nA\nA2\n||||||| base\ntwo\n=======\nB\n>>>>>>> b\nthree\n<<<<<<< a\n=======\nC\n>>>>>>> b\n";
        let h = marked("f", merged);
        assert_eq!(h.len(), 2);
        assert_eq!((h[0].start, h[0].end), (2, 3));
        assert_eq!(h[0].place(), "f:2-3");
        assert_eq!((h[1].start, h[1].end), (5, 4));
        assert_eq!(h[1].place(), "f:after 4");
    }
}
