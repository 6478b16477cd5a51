//! `job diff`: git's own diff of a write job's work (its commits and its worktree, untracked
//! files included) against its base (the recorded one, or the newer tip of its base branch
//! its branch took in), as git's text or as files with their hunks.
//!
//! Owns reading the diff; a file of it is what the CLI prints and the control room's Diff
//! tab will draw, from the same function.

use std::path::Path;

use serde::Serialize;

use super::WorktreeError;
use super::git::{self, GitError};
use super::hosts::{self, StoredFrom};
use super::snapshot::stage;
use crate::store::Store;
use crate::store::worktrees;

pub use crate::domain::{DiffFile, DiffLine, FileStatus, Hunk};

/// A write job's diff against its base, file by file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobDiff {
    pub job: String,
    pub branch: Option<String>,
    pub base: Option<String>,
    pub base_commit: String,
    pub files: Vec<DiffFile>,
    /// Set when the worktree is on another host and this is the copy its daemon stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored: Option<StoredFrom>,
}

/// The job's worktree and what its diff starts from: its recorded base, or with
/// `since_review` its work as it was when last sent back for review.
fn diff_from(
    job: crate::store::jobs::Job,
    w: crate::store::worktrees::WriteTree,
    since_review: bool,
) -> Result<
    (
        crate::store::worktrees::WriteTree,
        String,
        std::path::PathBuf,
        String,
    ),
    WorktreeError,
> {
    let (job, mut w, path, base) = super::opened(job, w)?;
    if let Some(old) = w.base_commit.replace(base.clone()).filter(|o| *o != base) {
        let carried = w.review_tree.as_deref().map(|r| {
            super::rebase::carried_review(&path, &old, &base, r).unwrap_or_else(|| r.to_string())
        });
        w.review_tree = carried;
    }
    let from = match (&w.review_tree, since_review) {
        (_, false) => base.clone(),
        (Some(tree), true) => tree.clone(),
        (None, true) => {
            return Err(
                crate::invalid!("{} had no review round (`gitmoot job review`)", job.id).into(),
            );
        }
    };
    Ok((w, job.id, path, from))
}

/// The copy of the job's diff its daemon stored, for a worktree on the host labelled
/// `host` (not this one).
fn stored_diff(
    store: &Store,
    (job, w): (crate::store::jobs::Job, crate::store::worktrees::WriteTree),
    host: String,
    since_review: bool,
) -> Result<JobDiff, WorktreeError> {
    if since_review {
        return Err(crate::invalid!(
            "{}'s worktree is on the host labelled {host:?}, and only its whole diff is stored; run `gitmoot job diff --since-review {}` there",
            job.id,
            job.id
        )
        .into());
    }
    let Some((text, at)) = worktrees::stored_diff(store.conn(), &job.id)? else {
        return Err(WorktreeError::Refused {
            reason: format!(
                "{}'s worktree is on the host labelled {host:?}, whose daemon has not stored its diff yet (it does when the job ends)",
                job.id
            ),
        });
    };
    let (files, from) = hosts::read_stored(&text, host, at)?;
    Ok(JobDiff {
        job: job.id,
        branch: w.branch,
        base: w.base_ref,
        base_commit: w.base_commit.unwrap_or_default(),
        files,
        stored: Some(from),
    })
}

/// The job's row, read once: its stored diff when its worktree is on another host, else
/// its worktree's folder and where its diff starts.
enum Source {
    Stored(JobDiff),
    Here(
        crate::store::worktrees::WriteTree,
        String,
        std::path::PathBuf,
        String,
    ),
}

fn source(
    store: &Store,
    here: &[String],
    id: &str,
    since_review: bool,
) -> Result<Source, WorktreeError> {
    let (job, w) = super::of_job(&store.conn(), id)?;
    Ok(match hosts::elsewhere(here, &job) {
        Some(host) => Source::Stored(stored_diff(store, (job, w), host, since_review)?),
        None => {
            let (w, job, path, from) = diff_from(job, w, since_review)?;
            Source::Here(w, job, path, from)
        }
    })
}

/// `job diff --json`: the job's work against its recorded base (or since its last review
/// round), file by file; from the store when the worktree is on another host.
pub fn job_diff(
    store: &Store,
    here: &[String],
    id: &str,
    since_review: bool,
) -> Result<JobDiff, WorktreeError> {
    let (w, job, path, from) = match source(store, here, id, since_review)? {
        Source::Stored(d) => return Ok(d),
        Source::Here(w, job, path, from) => (w, job, path, from),
    };
    let files = diff_files(&path, &from)?;
    Ok(JobDiff {
        job,
        branch: w.branch,
        base: w.base_ref,
        base_commit: w.base_commit.unwrap_or_default(),
        files,
        stored: None,
    })
}

/// `job diff [--stat]`: git's own text of the job's work against its recorded base (or
/// since its last review round); the stored copy printed as git would when the worktree
/// is on another host.
pub fn job_diff_text(
    store: &Store,
    here: &[String],
    id: &str,
    stat: bool,
    since_review: bool,
) -> Result<String, WorktreeError> {
    let (path, from) = match source(store, here, id, since_review)? {
        Source::Stored(d) if stat => return Ok(hosts::stat_text(&d.files)),
        Source::Stored(d) => return Ok(hosts::patch_text(&d.files)),
        Source::Here(_, _, path, from) => (path, from),
    };
    Ok(diff_text(&path, &from, stat)?)
}

/// How every diff of a job's work is asked of git: the staged work against the base, as
/// git would show it (no colour, no external driver, renames found).
const STAGED_DIFF: [&str; 5] = ["diff", "--cached", "--no-color", "--no-ext-diff", "-M"];

/// Git's diff of the work in `path` against `base`: the patch, or with `stat` its
/// `--stat` summary.
pub fn diff_text(path: &Path, base: &str, stat: bool) -> Result<String, GitError> {
    let staged = stage(path)?;
    let mut args = STAGED_DIFF.to_vec();
    if stat {
        args.push("--stat");
    }
    args.push(base);
    // Not `from_utf8_lossy(..).into_owned()`, which copies a valid patch whole.
    Ok(String::from_utf8(git::run_env(path, &args, &staged.env())?)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

fn status_of(code: &str) -> FileStatus {
    match code.chars().next() {
        Some('A') => FileStatus::Added,
        Some('D') => FileStatus::Deleted,
        Some('R') => FileStatus::Renamed,
        Some('C') => FileStatus::Copied,
        Some('T') => FileStatus::TypeChanged,
        _ => FileStatus::Modified,
    }
}

/// The files the work in `path` changed against `base`, each with its counts and hunks:
/// one `git diff` printing the raw records and the counts, then its patch read as it comes.
pub fn diff_files(path: &Path, base: &str) -> Result<Vec<DiffFile>, GitError> {
    let staged = stage(path)?;
    let out = git::run_env(
        path,
        &[&STAGED_DIFF[..], &["-z", "--raw", "--numstat", base]].concat(),
        &staged.env(),
    )?;
    let mut fields = Fields(&out);
    let mut files = raw(&mut fields);
    let counts = numstat(&mut fields, files.len());
    for (file, (added, removed)) in files.iter_mut().zip(counts) {
        match (added, removed) {
            (Some(a), Some(r)) => (file.added, file.removed) = (a, r),
            _ => file.binary = true,
        }
    }
    // The patch is read as it comes, each file's hunks kept up to the bound.
    let patch = super::patch::read(
        path,
        &[&STAGED_DIFF[..], &["--patch", base]].concat(),
        &staged.env(),
    )?;
    for (file, hunks) in files.iter_mut().zip(patch) {
        (file.hunks, file.hunks_cut) = (hunks.hunks, hunks.cut);
    }
    Ok(files)
}

/// NUL-separated fields read off the front of git's `-z` output; what is left is `.0`.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.0.is_empty() {
            return None;
        }
        let end = self.0.iter().position(|b| *b == 0).unwrap_or(self.0.len());
        let field = &self.0[..end];
        self.0 = self.0.get(end + 1..).unwrap_or_default();
        Some(field)
    }

    fn text(&mut self) -> String {
        String::from_utf8_lossy(self.next().unwrap_or_default()).into_owned()
    }
}

/// `--raw -z` records (`:modes shas STATUS`, then one path or a rename's two) as files.
fn raw(fields: &mut Fields<'_>) -> Vec<DiffFile> {
    let mut files = Vec::new();
    while fields.0.first() == Some(&b':') {
        let rec = fields.text();
        let code = rec.rsplit(' ').next().unwrap_or_default().to_string();
        let first = fields.text();
        let (old_path, path) = if code.starts_with('R') || code.starts_with('C') {
            (Some(first), fields.text())
        } else {
            (None, first)
        };
        files.push(DiffFile {
            path,
            old_path,
            status: status_of(&code),
            binary: false,
            added: 0,
            removed: 0,
            hunks: Vec::new(),
            hunks_cut: false,
        });
    }
    files
}

/// `n` records of `--numstat -z` as (added, removed) per file, `None` for a binary file's `-`.
fn numstat(fields: &mut Fields<'_>, n: usize) -> Vec<(Option<u64>, Option<u64>)> {
    let mut out = Vec::new();
    while out.len() < n {
        let Some(rec) = fields.next() else { break };
        let rec = String::from_utf8_lossy(rec);
        let mut parts = rec.splitn(3, '\t');
        let a = parts.next().and_then(|n| n.parse().ok());
        let r = parts.next().and_then(|n| n.parse().ok());
        // A rename's record ends in a tab; its two paths follow as fields of their own.
        if parts.next().is_some_and(str::is_empty) {
            fields.next();
            fields.next();
        }
        out.push((a, r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_reads_renames_and_binaries() {
        let raw = b"1\t2\ta.txt\0-\t-\tbin\x003\t0\t\0old\0new\0";
        assert_eq!(
            numstat(&mut Fields(raw), 3),
            vec![(Some(1), Some(2)), (None, None), (Some(3), Some(0))]
        );
    }
}
