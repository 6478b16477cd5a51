//! A write job's worktree whose folder is still there but that git no longer knows as a
//! worktree (its `.git` file was deleted): `worktree list` calls it `unlinked`, land
//! refuses it saying so, and discard says what the folder holds before removing it.
//!
//! Reads the folder only; removing it is `discard`'s, and no git call is made here.

use std::path::Path;

use serde::Serialize;

use super::WorktreeError;

/// The folder of an unlinked worktree, as a discard's loss names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnlinkedFolder {
    pub folder: String,
    /// Files under it (links counted as files, not followed): no longer readable as git work.
    pub files: u64,
}

/// The folder is there and its `.git` link is not, so git sees no worktree in it.
pub(super) fn is_unlinked(path: &Path) -> bool {
    path.is_dir() && std::fs::symlink_metadata(path.join(".git")).is_err()
}

/// What an unlinked folder holds.
pub(super) fn folder(path: &Path) -> UnlinkedFolder {
    fn count(dir: &Path) -> u64 {
        let mut n = 0;
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => n += count(&e.path()),
                Ok(_) => n += 1,
                Err(_) => {}
            }
        }
        n
    }
    UnlinkedFolder {
        folder: path.display().to_string(),
        files: count(path),
    }
}

/// Why a verb that needs git's view of the worktree (land, diff, rebase) cannot run on it.
pub(super) fn refusal(job: &str, path: &Path, branch: Option<&str>) -> WorktreeError {
    let f = folder(path);
    let branch = branch.map_or(String::new(), |b| {
        format!("; its branch {b} still holds what was committed")
    });
    WorktreeError::Refused {
        reason: format!(
            "{job}'s worktree {} is unlinked: its folder ({} file(s)) is there but its .git file is gone, so git no longer sees it as a worktree and its files cannot be landed{branch}; copy out what you need, then `gitmoot job discard {job}` says what it loses and removes the folder, git's record of it and the branch",
            f.folder, f.files
        ),
    }
}
