//! A write job's diff against its base, file by file: what `job diff --json` prints and the
//! control room's Diff tab draws, one shape for both.
//!
//! Owns the shape and the names of a file's status and a line's side; reading the diff
//! from git is the library's `worktree`, drawing it the ui's.

use serde::{Deserialize, Serialize};

use crate::named_enum;

named_enum!(
    /// What a diff did to a file.
    FileStatus, "file status", {
        Added => "added",
        Modified => "modified",
        Deleted => "deleted",
        Renamed => "renamed",
        Copied => "copied",
        TypeChanged => "type_changed",
    }
);

named_enum!(
    /// Which side of a diff a line belongs to.
    LineOp, "diff line op", {
        Context => "context",
        Add => "add",
        Remove => "remove",
    }
);

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFile {
    pub path: String,
    /// The path before a rename or copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: FileStatus,
    pub binary: bool,
    pub added: u64,
    pub removed: u64,
    pub hunks: Vec<Hunk>,
    /// Hunks past the bound on a file's diff text (1 MiB) were left out: its counts are
    /// whole, its hunks are not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hunks_cut: bool,
}

/// One `@@` hunk of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    /// The `@@ -a,b +c,d @@ …` line.
    pub header: String,
    pub lines: Vec<DiffLine>,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub op: LineOp,
    /// The line's number on the base side (none for an added line).
    pub old: Option<u64>,
    /// The line's number on the job's side (none for a removed line).
    pub new: Option<u64>,
    pub text: String,
}

named_enum!(
    /// How a write job's branch is integrated into its base (`job land`).
    LandStrategy, "land strategy", {
        // Fast-forward when the base has not moved, else a merge commit.
        Auto => "auto",
        Squash => "squash",
        Merge => "merge",
        Rebase => "rebase",
    }
);
