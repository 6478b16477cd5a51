//! What merging two write jobs' work (or one job's work onto its base branch's tip) would
//! do, as `job pending`, `worktree list --json` and the control room say it: a clean
//! overlap of the same files, or a conflict with the files and lines git marked.
//!
//! Owns the names and the shape; computing a forecast from git is the library's
//! `worktree`, drawing it the ui's.

use serde::{Deserialize, Serialize};

use crate::named_enum;

named_enum!(
    /// What a merge of two works would do to the files both change.
    Clash, "forecast", {
        // Both change the same files, in different places: git merges them cleanly.
        Overlaps => "overlaps",
        // Git cannot merge them: the same lines (or a file one deletes) changed apart.
        Conflicts => "conflicts",
    }
);

/// One conflicted stretch of a file: its lines on the first side of the merge (the job's
/// own, against the base; the older job's, for a pair).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictHunk {
    pub file: String,
    /// First and last line of the stretch; `end` is `start - 1` when that side holds no
    /// line there (the other side added lines where this one removed them).
    pub start: u64,
    pub end: u64,
}

impl ConflictHunk {
    /// `src/a.rs:12-14`, `src/a.rs:12`, or `src/a.rs:after 11` for an empty side.
    pub fn place(&self) -> String {
        match self.end.cmp(&self.start) {
            std::cmp::Ordering::Less => format!("{}:after {}", self.file, self.end),
            std::cmp::Ordering::Equal => format!("{}:{}", self.file, self.start),
            std::cmp::Ordering::Greater => format!("{}:{}-{}", self.file, self.start, self.end),
        }
    }
}

/// `a.txt:2-3, b.txt` for conflicting files with their stretches where git marked them.
pub fn places(files: &[String], hunks: &[ConflictHunk]) -> String {
    files
        .iter()
        .map(|f| {
            let at: Vec<String> = hunks
                .iter()
                .filter(|h| &h.file == f)
                .map(ConflictHunk::place)
                .collect();
            if at.is_empty() {
                f.clone()
            } else {
                at.join(", ")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
