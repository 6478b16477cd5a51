//! A write job's work in the view model: each job's worktree row (landed, review rounds,
//! overlaps) for the tree and the Attention pane, the drawer job's land/discard figures, and
//! its parsed diff as the Diff tab walks it (files, hunks, lines flattened into rows once,
//! so drawing a screen of a 20,000-line diff touches only that screen).
//!
//! Owns data and navigation over it (next file, hunk, match; a line's file:line anchor);
//! the glue fills it from the library's `worktree` functions, the widgets draw it. Must not
//! read git or the store.

use std::collections::HashMap;
use std::sync::Arc;

pub use gitmoot_types::{
    Clash, ConflictHunk, DiffFile, DiffLine, FileStatus, Hunk, LandStrategy, LineOp, WorktreeState,
    places,
};

/// One write job's worktree, as its tree row shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkRow {
    /// `None` until the worktree exists.
    pub state: Option<WorktreeState>,
    pub review_rounds: u32,
    /// The other open jobs of its repo that change some of the same files.
    pub overlaps: Vec<String>,
    /// What merging its work would do: `Conflicts` with another open job's work or with
    /// its base branch's tip, else `Overlaps` while it shares files; `None` otherwise.
    pub clash: Option<Clash>,
    /// Its base branch, when its work conflicts with what landed there.
    pub base_conflict: Option<String>,
    /// Its repo, its branch and the base a land moves, for the many-jobs land dialog.
    pub repo: String,
    pub branch: String,
    pub base: String,
    /// What discarding it loses, in `job discard`'s words, once its job has ended with
    /// its worktree open (`None` before, or after it was landed or discarded).
    pub loss: Option<String>,
}

/// Two open write jobs of one repo changing the same files (`job pending`'s overlap item),
/// cleanly or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlapView {
    pub repo: String,
    pub jobs: [String; 2],
    pub kind: Clash,
    pub files: Vec<String>,
    pub hunks: Vec<ConflictHunk>,
}

/// An open job whose work conflicts with its base branch's tip (`job pending`'s
/// `base_conflict` item).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseConflictView {
    pub job: String,
    pub base: String,
    pub files: Vec<String>,
    pub hunks: Vec<ConflictHunk>,
}

/// What the drawer's job holds, for the land and discard questions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobWork {
    pub job_id: String,
    pub state: WorktreeState,
    /// The branch its work is on and the base branch a land moves.
    pub branch: String,
    pub base: String,
    /// What discarding loses (the figures `job discard` states): files, lines, commits.
    pub files: Vec<String>,
    pub added: u64,
    pub removed: u64,
    pub commits: u64,
    pub review_rounds: u32,
    /// What discarding loses, in `job discard`'s own words (or why it could not be read).
    pub loss: String,
}

/// Everything about write jobs one load carries.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Work {
    /// Per job id.
    pub rows: HashMap<String, WorkRow>,
    pub overlaps: Vec<OverlapView>,
    pub base_conflicts: Vec<BaseConflictView>,
    /// The drawer job's figures, when it has a worktree.
    pub job: Option<JobWork>,
    /// The Diff tab's diff, loaded once per change of the job's work and shared, not
    /// copied, between snapshots.
    pub diff: Option<Arc<DiffView>>,
}

/// One screen row of the Diff tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffRow {
    /// The summary list at the top: one file with its counts.
    Summary(usize),
    /// A blank separator.
    Gap,
    /// A file's header (path, status, rename, counts).
    File(usize),
    /// What a file without hunks is (binary, a rename only, an empty file).
    Note(usize),
    Hunk(usize, usize),
    Line(usize, usize, usize),
}

/// A job's diff with its rows laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffView {
    pub job_id: String,
    /// The job's state of work when read (a changed attempt or land reloads it).
    pub files: Vec<DiffFile>,
    /// Why there is no diff (no worktree, landed, git's message).
    pub error: Option<String>,
    rows: Vec<DiffRow>,
    /// The first row of each file's section.
    file_rows: Vec<usize>,
}

impl DiffView {
    pub fn new(job_id: impl Into<String>, files: Vec<DiffFile>) -> Self {
        let mut rows: Vec<DiffRow> = (0..files.len()).map(DiffRow::Summary).collect();
        let mut file_rows = Vec::with_capacity(files.len());
        for (f, file) in files.iter().enumerate() {
            rows.push(DiffRow::Gap);
            file_rows.push(rows.len());
            rows.push(DiffRow::File(f));
            if file.hunks.is_empty() {
                rows.push(DiffRow::Note(f));
            }
            for (h, hunk) in file.hunks.iter().enumerate() {
                rows.push(DiffRow::Hunk(f, h));
                rows.extend((0..hunk.lines.len()).map(|l| DiffRow::Line(f, h, l)));
            }
        }
        DiffView {
            job_id: job_id.into(),
            files,
            error: None,
            rows,
            file_rows,
        }
    }

    /// A diff that could not be read, saying why.
    pub fn failed(job_id: impl Into<String>, error: impl Into<String>) -> Self {
        let mut v = DiffView::new(job_id, Vec::new());
        v.error = Some(error.into());
        v
    }

    pub fn rows(&self) -> &[DiffRow] {
        &self.rows
    }

    /// Added and removed lines over every file.
    pub fn totals(&self) -> (u64, u64) {
        self.files
            .iter()
            .fold((0, 0), |(a, r), f| (a + f.added, r + f.removed))
    }

    /// The file a row belongs to.
    pub fn file_of(&self, row: usize) -> Option<usize> {
        match *self.rows.get(row)? {
            DiffRow::Summary(f) | DiffRow::File(f) | DiffRow::Note(f) => Some(f),
            DiffRow::Hunk(f, _) | DiffRow::Line(f, _, _) => Some(f),
            DiffRow::Gap => None,
        }
    }

    /// The header row of file `f`.
    pub fn file_row(&self, f: usize) -> Option<usize> {
        self.file_rows.get(f).copied()
    }

    /// The next (`dir` 1) or previous (-1) file header from `row`.
    pub fn step_file(&self, row: usize, dir: isize) -> Option<usize> {
        if dir > 0 {
            self.file_rows.iter().copied().find(|&r| r > row)
        } else {
            self.file_rows.iter().rev().copied().find(|&r| r < row)
        }
    }

    /// The next or previous hunk header from `row`.
    pub fn step_hunk(&self, row: usize, dir: isize) -> Option<usize> {
        let is_hunk = |r: &usize| matches!(self.rows[*r], DiffRow::Hunk(..));
        if dir > 0 {
            (row + 1..self.rows.len()).find(is_hunk)
        } else {
            (0..row).rev().find(is_hunk)
        }
    }

    /// The searchable text of a row (a path, a hunk header, a line's text).
    pub fn row_text(&self, row: usize) -> &str {
        match self.rows.get(row) {
            Some(DiffRow::Summary(f) | DiffRow::File(f)) => &self.files[*f].path,
            Some(DiffRow::Hunk(f, h)) => &self.files[*f].hunks[*h].header,
            Some(DiffRow::Line(f, h, l)) => &self.files[*f].hunks[*h].lines[*l].text,
            _ => "",
        }
    }

    /// The next row after (`dir` 1) or before (-1) `row` whose text holds `query`
    /// (case-insensitive), wrapping around the whole diff.
    pub fn find(&self, query: &str, row: usize, dir: isize) -> Option<usize> {
        if query.is_empty() || self.rows.is_empty() {
            return None;
        }
        let q = query.to_lowercase();
        let n = self.rows.len();
        (1..=n)
            .map(|i| {
                if dir > 0 {
                    (row + i) % n
                } else {
                    (row + n * 2 - i) % n
                }
            })
            .filter(|&r| !matches!(self.rows[r], DiffRow::Summary(_)))
            .find(|&r| contains_lower(self.row_text(r), &q))
    }

    /// The `path:line` a review comment on `row` is anchored to: the line's number on the
    /// job's side (the base's for a removed line), a hunk's first line, or the file alone.
    pub fn anchor(&self, row: usize) -> Option<String> {
        match *self.rows.get(row)? {
            DiffRow::Line(f, h, l) => {
                let line = &self.files[f].hunks[h].lines[l];
                let n = line.new.or(line.old).unwrap_or(0);
                Some(format!("{}:{n}", self.files[f].path))
            }
            DiffRow::Hunk(f, h) => {
                let first = self.files[f].hunks[h].lines.first();
                let n = first.and_then(|l| l.new.or(l.old)).unwrap_or(0);
                Some(format!("{}:{n}", self.files[f].path))
            }
            DiffRow::Summary(f) | DiffRow::File(f) | DiffRow::Note(f) => {
                Some(self.files[f].path.clone())
            }
            DiffRow::Gap => None,
        }
    }
}

/// Whether `text` holds the already lower-cased `q`, without allocating for ASCII text.
fn contains_lower(text: &str, q: &str) -> bool {
    if text.is_ascii() && q.is_ascii() {
        let (t, q) = (text.as_bytes(), q.as_bytes());
        return q.len() <= t.len() && t.windows(q.len()).any(|w| w.eq_ignore_ascii_case(q));
    }
    text.to_lowercase().contains(q)
}

/// A review comment attached in the Diff tab, waiting to be sent (`job review`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewComment {
    pub job_id: String,
    /// `path:line`, as the agent reads it.
    pub anchor: String,
    pub text: String,
}

impl ReviewComment {
    /// The comment as one line of the review's text.
    pub fn line(&self) -> String {
        format!("{}: {}", self.anchor, self.text)
    }
}

/// Where the operator is in the Diff tab; kept across refreshes of the same job's diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffCursor {
    /// The selected row.
    pub row: usize,
    /// The first row on screen.
    pub top: usize,
    /// The `/` search being typed, while it is open.
    pub editing: Option<String>,
    /// The last search, for `n`/`N`.
    pub query: String,
    /// Comments attached and not yet sent, every job's.
    pub comments: Vec<ReviewComment>,
}

impl DiffCursor {
    /// The comments waiting for `job`.
    pub fn comments_for<'a>(&'a self, job: &'a str) -> impl Iterator<Item = &'a ReviewComment> {
        self.comments.iter().filter(move |c| c.job_id == job)
    }
}

/// The first row on screen that keeps `row` in view, moving as little as possible.
pub fn keep_in_view(top: usize, row: usize, height: usize) -> usize {
    if row < top {
        row
    } else if row >= top + height {
        row + 1 - height
    } else {
        top
    }
}

/// A file's one-word status as the Diff tab shows it.
pub fn status_word(f: &DiffFile) -> &'static str {
    match f.status {
        FileStatus::Added => "added",
        FileStatus::Deleted => "deleted",
        FileStatus::Renamed => "renamed",
        FileStatus::Copied => "copied",
        FileStatus::TypeChanged => "type changed",
        FileStatus::Modified => "modified",
    }
}
