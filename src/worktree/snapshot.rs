//! A write job's work as git sees it: its branch tip plus whatever its worktree holds
//! uncommitted (tracked changes and untracked files not ignored), as one tree written to the
//! object store through a private index, so nothing of the worktree, its index or its branch
//! moves.
//!
//! Owns reading the work; diffing and landing it are `diff.rs`'s and `land.rs`'s.

use std::path::{Path, PathBuf};

use super::git::{self, GitError};

/// The job's work: its branch tip and the tree of tip plus worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub head: String,
    pub tree: String,
    /// The worktree holds work its branch does not (the tree is not the tip's).
    pub dirty: bool,
}

/// Removes the private index however the snapshot ended.
struct TempIndex(PathBuf);

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub(crate) fn snapshot(path: &Path) -> Result<Snapshot, GitError> {
    let head = git::line(path, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    let status = git::run(
        path,
        &["status", "--porcelain", "-z", "--untracked-files=all"],
    )?;
    if status.is_empty() {
        let tree = git::line(path, &["rev-parse", &format!("{head}^{{tree}}")])?;
        return Ok(Snapshot {
            head,
            tree,
            dirty: false,
        });
    }
    let index = TempIndex(std::env::temp_dir().join(format!(
        "gitmoot-index-{}-{}",
        std::process::id(),
        crate::ids::random_hex(6)
    )));
    let real = git::line(
        path,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?;
    if copy_index(Path::new(&real), &index.0).is_err() {
        git::run_env(
            path,
            &["read-tree", "HEAD"],
            &[("GIT_INDEX_FILE", &index.0)],
        )?;
    }
    let env = [("GIT_INDEX_FILE", index.0.as_path())];
    git::run_env(path, &["add", "-A", "."], &env)?;
    let tree = String::from_utf8_lossy(&git::run_env(path, &["write-tree"], &env)?)
        .trim()
        .to_string();
    Ok(Snapshot {
        head,
        tree,
        dirty: true,
    })
}

/// The worktree's index copied with its modification time. Git trusts an entry's cached
/// file stat only when the file is older than the index, and no one refreshes the real
/// index (every git call here skips optional locks): a copy dated now would make a file
/// rewritten in the index's own second, at the same size, look unchanged, and its change
/// would be left out of the work.
fn copy_index(real: &Path, copy: &Path) -> std::io::Result<()> {
    std::fs::copy(real, copy)?;
    let written = std::fs::metadata(real)?.modified()?;
    std::fs::File::options()
        .write(true)
        .open(copy)?
        .set_modified(written)
}

/// Every path the work in `path` changed against `base` (a commit), committed or not,
/// untracked files included, repo-relative: what `result_observation` grades against.
pub fn touched_since(path: &Path, base: &str) -> Result<Vec<String>, GitError> {
    let snap = snapshot(path)?;
    let mut files = git::split_z(&git::run(
        path,
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            base,
            &snap.tree,
        ],
    )?);
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// `git args…` in `repo` as a user named `t` would run it; its stdout.
    fn git(repo: &Path, args: &[&str]) -> Vec<u8> {
        let as_t = [&["-c", "user.name=t", "-c", "user.email=t@t"][..], args].concat();
        super::git::run(repo, &as_t).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A repository whose one commit holds `file` with `text`.
    fn committed(file: &str, text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        git(repo, &["init", "-q"]);
        std::fs::write(repo.join(file), text).unwrap();
        git(repo, &["add", "."]);
        git(repo, &["commit", "-qm", "one"]);
        dir
    }

    fn seconds(t: std::time::SystemTime) -> u64 {
        t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
    }

    fn modified_second(p: &Path) -> u64 {
        seconds(std::fs::metadata(p).unwrap().modified().unwrap())
    }

    /// A file rewritten at the same size within the second its index was written: only
    /// its content says it changed, and the work read a second later still holds it.
    #[test]
    fn a_same_size_rewrite_in_the_index_s_own_second_is_part_of_the_work() {
        let dir = committed("base.txt", "base");
        let repo = dir.path();
        let (file, index) = (repo.join("lib.txt"), repo.join(".git/index"));
        loop {
            let started = seconds(std::time::SystemTime::now());
            std::fs::write(&file, "aaaa").unwrap();
            git(repo, &["add", "lib.txt"]);
            std::fs::write(&file, "bbbb").unwrap();
            if modified_second(&file) == started && modified_second(&index) == started {
                break;
            }
        }
        while seconds(std::time::SystemTime::now()) <= modified_second(&index) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let snap = super::snapshot(repo).unwrap();
        let shown = git(repo, &["show", &format!("{}:lib.txt", snap.tree)]);
        assert_eq!(String::from_utf8_lossy(&shown), "bbbb");
    }

    /// Reading a worktree whose index is stale leaves the index alone: refreshing it would
    /// hold `index.lock`, and an agent committing there at that moment would fail.
    #[test]
    fn reading_the_work_leaves_the_worktree_index_unwritten() {
        let dir = committed("a.txt", "same");
        let repo = dir.path();
        // The same content with another modification time: the index's entry is stale,
        // so a refreshing reader would write the index anew.
        let year_2000 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(946_684_800);
        let file = std::fs::File::options()
            .write(true)
            .open(repo.join("a.txt"));
        file.unwrap().set_modified(year_2000).unwrap();
        std::fs::write(repo.join("b.txt"), "new").unwrap();
        let index = repo.join(".git/index");
        let before = std::fs::read(&index).unwrap();
        let snap = super::snapshot(repo).unwrap();
        assert!(snap.dirty, "the untracked file is work");
        assert_eq!(
            super::touched_since(repo, &snap.head).unwrap(),
            vec!["b.txt".to_string()]
        );
        assert!(
            std::fs::read(&index).unwrap() == before,
            "reading the work rewrote the worktree's index"
        );
    }
}
