//! Many hosts sharing one store: a write job's worktree lives on the host whose daemon opened
//! it (the claim pins the job to that daemon's first host label, so its retries and review
//! rounds run there too). Elsewhere its diff is read from the copy that daemon stored when
//! the job ended, and the verbs that need the worktree itself (land, discard, review) are
//! refused, naming the host to run them on.
//!
//! Owns telling here from elsewhere, bounding the stored copy and printing it as git would;
//! reading the diff from git is `diff.rs`'s, storing it the daemon's.

use serde::Serialize;

use super::WorktreeError;
use crate::clock::Millis;
use crate::domain::DiffFile;
use crate::store::jobs::Job;

/// The stored copy of a diff is bounded like other captured output.
pub(super) const STORED_DIFF_LIMIT: usize = 1024 * 1024;

/// Where a diff read from the store came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoredFrom {
    /// The host label of the daemon holding the worktree.
    pub host: String,
    /// When that daemon read the diff (the job's end, or its last review round's).
    pub at_ms: Millis,
    /// Hunks were left out to keep the copy bounded (every file and its counts are kept).
    pub cut: bool,
}

/// The stored copy as the store holds it.
#[derive(Debug, Serialize, serde::Deserialize)]
struct Stored {
    files: Vec<DiffFile>,
    cut: bool,
}

/// The host label the job's worktree lives under when that is not this host, whose labels
/// (its home's `[daemon] labels`) are `here`: the job is pinned to a label `here` lacks. A
/// home that names no labels is one host, where every worktree is.
pub(crate) fn elsewhere(here: &[String], job: &Job) -> Option<String> {
    job.on_label
        .clone()
        .filter(|l| !here.is_empty() && !here.contains(l))
}

/// Refuses a verb that needs the worktree itself when the worktree is on another host.
pub(crate) fn refuse_elsewhere(
    here: &[String],
    job: &Job,
    verb: &str,
) -> Result<(), WorktreeError> {
    match elsewhere(here, job) {
        Some(host) => Err(crate::invalid!(
            "{}'s worktree is on the host labelled {host:?}; run `gitmoot job {verb} {}` there",
            job.id,
            job.id
        )
        .into()),
        None => Ok(()),
    }
}

/// The copy of `files` kept in the store: as JSON, at most `STORED_DIFF_LIMIT` bytes, the
/// hunks of the last files dropped first when it would be larger.
pub fn bounded(mut files: Vec<DiffFile>) -> String {
    let encode = |files: &[DiffFile], cut: bool| {
        serde_json::to_string(&Stored {
            files: files.to_vec(),
            cut,
        })
        .unwrap_or_default()
    };
    let mut text = encode(&files, false);
    let mut i = files.len();
    while text.len() > STORED_DIFF_LIMIT && i > 0 {
        i -= 1;
        files[i].hunks.clear();
        text = encode(&files, true);
    }
    text
}

/// The stored copy read back, with where it came from.
pub(crate) fn read_stored(
    text: &str,
    host: String,
    at_ms: Millis,
) -> Result<(Vec<DiffFile>, StoredFrom), WorktreeError> {
    let s: Stored = serde_json::from_str(text).map_err(|e| WorktreeError::Refused {
        reason: format!("the stored diff cannot be read: {e}"),
    })?;
    Ok((
        s.files,
        StoredFrom {
            host,
            at_ms,
            cut: s.cut,
        },
    ))
}

/// The stored files as git prints a patch (without index lines, which name objects the
/// reading host may not have).
pub fn patch_text(files: &[DiffFile]) -> String {
    let mut out = String::new();
    for f in files {
        let old = f.old_path.as_deref().unwrap_or(&f.path);
        out.push_str(&format!("diff --git a/{old} b/{}\n", f.path));
        if f.old_path.is_some() {
            out.push_str(&format!("rename from {old}\nrename to {}\n", f.path));
        }
        if f.binary {
            out.push_str(&format!("Binary files a/{old} and b/{} differ\n", f.path));
            continue;
        }
        if f.hunks.is_empty() {
            continue;
        }
        let side = |status, name: &str, prefix| {
            if status {
                "/dev/null".to_string()
            } else {
                format!("{prefix}/{name}")
            }
        };
        use crate::domain::FileStatus::{Added, Deleted};
        out.push_str(&format!("--- {}\n", side(f.status == Added, old, "a")));
        out.push_str(&format!(
            "+++ {}\n",
            side(f.status == Deleted, &f.path, "b")
        ));
        for h in &f.hunks {
            out.push_str(&h.header);
            out.push('\n');
            for l in &h.lines {
                out.push(match l.op {
                    crate::domain::LineOp::Add => '+',
                    crate::domain::LineOp::Remove => '-',
                    crate::domain::LineOp::Context => ' ',
                });
                out.push_str(&l.text);
                out.push('\n');
            }
        }
    }
    out
}

/// The stored files as `git diff --stat` summarises them.
pub fn stat_text(files: &[DiffFile]) -> String {
    let width = files.iter().map(|f| f.path.len()).max().unwrap_or(0);
    let mut out = String::new();
    let (mut added, mut removed) = (0, 0);
    for f in files {
        added += f.added;
        removed += f.removed;
        let change = if f.binary {
            "Bin".to_string()
        } else {
            format!(
                "{} {}{}",
                f.added + f.removed,
                "+".repeat(f.added.min(40) as usize),
                "-".repeat(f.removed.min(40) as usize)
            )
        };
        out.push_str(&format!(" {:width$} | {change}\n", f.path));
    }
    out.push_str(&format!(
        " {} file{} changed, {added} insertions(+), {removed} deletions(-)\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{DiffLine, FileStatus, Hunk, LineOp};

    fn file(path: &str, lines: usize) -> DiffFile {
        DiffFile {
            path: path.into(),
            old_path: None,
            status: FileStatus::Modified,
            binary: false,
            hunks_cut: false,
            added: lines as u64,
            removed: 0,
            hunks: vec![Hunk {
                header: format!("@@ -0,0 +1,{lines} @@"),
                lines: (0..lines)
                    .map(|i| DiffLine {
                        op: LineOp::Add,
                        old: None,
                        new: Some(i as u64 + 1),
                        text: "x".repeat(100),
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn a_large_diff_is_stored_bounded_keeping_every_file_and_its_counts() {
        let files = vec![file("a", 3), file("big", 20_000), file("c", 2)];
        let text = bounded(files.clone());
        assert!(text.len() <= STORED_DIFF_LIMIT, "{}", text.len());
        let (back, from) = read_stored(&text, "a".into(), 1).unwrap();
        assert!(from.cut);
        assert_eq!(back.len(), 3);
        assert_eq!(back[1].added, 20_000);
        assert_eq!(back[0], files[0], "the first files keep their hunks");
        let small = bounded(vec![file("a", 3)]);
        assert!(!read_stored(&small, "a".into(), 1).unwrap().1.cut);
    }

    #[test]
    fn the_stored_patch_reads_like_gits() {
        let text = patch_text(&[file("src/a.rs", 1)]);
        assert!(
            text.starts_with("diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -0,0 +1,1 @@\n+x"),
            "{text}"
        );
        assert!(stat_text(&[file("a", 2)]).contains(" a | 2 ++\n 1 file changed, 2 insertions(+)"));
    }
}
