//! A write job's work as git sees it: its branch tip plus whatever its worktree holds
//! uncommitted (tracked changes and untracked files not ignored), as one tree written to the
//! object store through a private index, so nothing of the worktree, its index or its branch
//! moves.
//!
//! Reading is as cheap as git on a refreshed index: the worktree's real index is never
//! refreshed (an agent's commit would fail on the lock), and an index written in the same
//! second as its checkout makes git hash every file on every read. So each worktree has a
//! seed, `gitmoot-index.<fingerprint>` in its git admin folder: a copy of the real index
//! refreshed once, made again only when the real index changes. A read stages the work on a
//! throw-away copy of the seed, so the seed's entries are always exactly the real index's.
//!
//! Owns reading the work; diffing and landing it are `diff.rs`'s and `land.rs`'s. Must never
//! write the worktree's real index or anything the agent reads.

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

/// Removes a private index however the read ended.
struct TempIndex(PathBuf);

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The work of a worktree staged in a private index (tracked changes, deletions and
/// untracked files not ignored): what `git diff --cached` against a base reads as the work,
/// without writing a tree first. Removed when dropped.
pub(crate) struct Staged {
    index: TempIndex,
}

impl Staged {
    /// `GIT_INDEX_FILE` pointing at the staged work, for a git call on the worktree.
    pub(crate) fn env(&self) -> [(&'static str, &Path); 1] {
        [("GIT_INDEX_FILE", self.index.0.as_path())]
    }

    /// The staged work as a tree in the object store.
    pub(crate) fn tree(&self, path: &Path) -> Result<String, GitError> {
        Ok(
            String::from_utf8_lossy(&git::run_env(path, &["write-tree"], &self.env())?)
                .trim()
                .to_string(),
        )
    }
}

/// Stages the work of the worktree at `path` in a private index.
pub(crate) fn stage(path: &Path) -> Result<Staged, GitError> {
    #[cfg(test)]
    reads::count(path);
    let index = TempIndex(std::env::temp_dir().join(format!(
        "gitmoot-index-{}-{}",
        std::process::id(),
        crate::ids::random_hex(6)
    )));
    let real = real_index(path)?;
    let copied = seed(path, &real)
        .and_then(|s| copy_index(&s, &index.0).ok())
        .or_else(|| copy_index(&real, &index.0).ok());
    if copied.is_none() {
        git::run_env(
            path,
            &["read-tree", "HEAD"],
            &[("GIT_INDEX_FILE", &index.0)],
        )?;
    }
    let staged = Staged { index };
    git::run_env(path, &["add", "-A", "."], &staged.env())?;
    Ok(staged)
}

pub(crate) fn snapshot(path: &Path) -> Result<Snapshot, GitError> {
    let staged = stage(path)?;
    let tree = staged.tree(path)?;
    let tip = git::run(path, &["rev-parse", "HEAD^{commit}", "HEAD^{tree}"])?;
    let tip = String::from_utf8_lossy(&tip);
    let mut lines = tip.lines().map(str::trim);
    let (head, tip_tree) = (lines.next().unwrap_or_default(), lines.next());
    Ok(Snapshot {
        dirty: tip_tree != Some(tree.as_str()),
        head: head.to_string(),
        tree,
    })
}

/// The worktree's real index: `index` in its git folder, read off its `.git` (a folder, or
/// a worktree's `gitdir:` file) without starting git, else asked of git.
fn real_index(path: &Path) -> Result<PathBuf, GitError> {
    let dot = path.join(".git");
    let dir = if dot.is_dir() {
        Some(dot)
    } else {
        std::fs::read_to_string(&dot).ok().and_then(|text| {
            let to = text.strip_prefix("gitdir:")?.trim();
            Some(path.join(to)).filter(|d| d.is_dir())
        })
    };
    match dir {
        Some(d) => Ok(d.join("index")),
        None => Ok(PathBuf::from(git::line(
            path,
            &["rev-parse", "--path-format=absolute", "--git-path", "index"],
        )?)),
    }
}

/// What tells one state of the real index from another: its inode, size and times (git
/// replaces the file on every write).
fn fingerprint(real: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(real).ok()?;
    Some(format!(
        "{:x}-{:x}-{:x}.{:x}-{:x}.{:x}",
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    ))
}

const SEED: &str = "gitmoot-index.";

/// The worktree's seed for the real index as it is now, made (and older seeds removed)
/// when there is none; `None` when it cannot be made (the admin folder is not writable, or
/// the real index changed while it was copied), and the read copies the real index.
fn seed(path: &Path, real: &Path) -> Option<PathBuf> {
    let admin = real.parent()?;
    let before = fingerprint(real)?;
    let seed = admin.join(format!("{SEED}{before}"));
    // The admin folder is the agent's to write: only a plain file there is a seed, never a
    // link it planted to make a read take another file (or a device) for the index.
    match std::fs::symlink_metadata(&seed) {
        Ok(m) if m.file_type().is_file() => return Some(seed),
        Ok(_) => std::fs::remove_file(&seed).ok()?,
        Err(_) => {}
    }
    let fresh = TempIndex(admin.join(format!(
        "gitmoot-seed.{}.{}",
        std::process::id(),
        crate::ids::random_hex(6)
    )));
    copy_index(real, &fresh.0).ok()?;
    if fingerprint(real).as_deref() != Some(before.as_str()) {
        return None;
    }
    // Written now, after every file it lists, so git trusts the stat data it holds from
    // here on; an entry whose file changed keeps the real index's and is read as changed.
    git::run_env(
        path,
        &[
            "update-index",
            "-q",
            "--unmerged",
            "--refresh",
            "--force-write-index",
        ],
        &[("GIT_INDEX_FILE", &fresh.0)],
    )
    .ok()?;
    std::fs::rename(&fresh.0, &seed).ok()?;
    for old in std::fs::read_dir(admin).ok()?.flatten() {
        let name = old.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(SEED) && old.path() != seed {
            let _ = std::fs::remove_file(old.path());
        }
    }
    Some(seed)
}

/// An index copied with its modification time. Git trusts an entry's cached file stat
/// only when the file is older than the index: a copy dated now would make a file
/// rewritten in the original's own second, at the same size, look unchanged, and its
/// change would be left out of the work.
fn copy_index(from: &Path, copy: &Path) -> std::io::Result<()> {
    std::fs::copy(from, copy)?;
    let written = std::fs::metadata(from)?.modified()?;
    std::fs::File::options()
        .write(true)
        .open(copy)?
        .set_modified(written)
}

/// Every path the work in `path` changed against `base` (a commit), committed or not,
/// untracked files included, repo-relative: what `result_observation` grades against.
pub fn touched_since(path: &Path, base: &str) -> Result<Vec<String>, GitError> {
    let staged = stage(path)?;
    let mut files = git::split_z(&git::run_env(
        path,
        &[
            "diff",
            "--cached",
            "--name-only",
            "-z",
            "--no-renames",
            base,
        ],
        &staged.env(),
    )?);
    files.sort();
    Ok(files)
}

/// How often each worktree's work was read, for the tests of who reads what when.
#[cfg(test)]
pub(crate) mod reads {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static READS: Mutex<Option<HashMap<PathBuf, usize>>> = Mutex::new(None);

    pub(super) fn count(path: &Path) {
        let mut reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        *reads
            .get_or_insert_default()
            .entry(path.into())
            .or_default() += 1;
    }

    /// The reads of `path`'s work so far.
    pub(crate) fn of(path: &Path) -> usize {
        let reads = READS.lock().unwrap_or_else(|e| e.into_inner());
        reads
            .as_ref()
            .and_then(|r| r.get(path))
            .copied()
            .unwrap_or(0)
    }
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

    /// A repository of three committed files and a linked worktree of it, as `job run`
    /// opens one; (its folder, the worktree).
    fn linked() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = committed("a.txt", "one\n");
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        std::fs::rename(dir.path().join(".git"), repo.join(".git")).unwrap();
        git(&repo, &["checkout", "-q", "--", "."]);
        for (f, text) in [("b.txt", "two\n"), ("c.txt", "three\n")] {
            std::fs::write(repo.join(f), text).unwrap();
        }
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "two"]);
        let wt = dir.path().join("wt");
        git(
            &repo,
            &["worktree", "add", "-q", "-b", "job", wt.to_str().unwrap()],
        );
        (dir, wt)
    }

    /// The work as it should read, asked of git without a private index: every file the
    /// real index tracks that is still on disk, and every untracked file not ignored, with
    /// its bytes.
    fn expected(wt: &Path) -> Vec<(String, Vec<u8>)> {
        let listed = git(
            wt,
            &[
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
        );
        let mut files: Vec<(String, Vec<u8>)> = super::git::split_z(&listed)
            .into_iter()
            .filter_map(|f| Some((f.clone(), std::fs::read(wt.join(&f)).ok()?)))
            .collect();
        files.sort();
        files.dedup();
        files
    }

    /// The files of a tree with their bytes.
    fn tree_files(wt: &Path, tree: &str) -> Vec<(String, Vec<u8>)> {
        let names = git(wt, &["ls-tree", "-r", "-z", "--name-only", tree]);
        super::git::split_z(&names)
            .into_iter()
            .map(|f| {
                let blob = git(wt, &["cat-file", "blob", &format!("{tree}:{f}")]);
                (f, blob)
            })
            .collect()
    }

    /// The worktree's seeds (private indexes) in its admin folder.
    fn seeds(wt: &Path) -> Vec<std::path::PathBuf> {
        let admin = super::real_index(wt)
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
        let mut out: Vec<_> = std::fs::read_dir(admin)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(super::SEED)
            })
            .collect();
        out.sort();
        out
    }

    /// The read keeps one refreshed private index beside the worktree's real one, reuses it
    /// while the real index stays as it is, and replaces it once the agent's commit rewrote
    /// the real index; the real index is never written by a read.
    #[test]
    fn a_read_keeps_one_private_index_made_again_only_when_the_real_one_changed() {
        let (_dir, wt) = linked();
        std::fs::write(wt.join("a.txt"), "one, edited\n").unwrap();
        let index = super::real_index(&wt).unwrap();
        let before = std::fs::read(&index).unwrap();
        super::snapshot(&wt).unwrap();
        let first = seeds(&wt);
        assert_eq!(first.len(), 1, "one private index: {first:?}");
        let made = std::fs::metadata(&first[0]).unwrap().modified().unwrap();
        std::fs::write(wt.join("new.txt"), "new\n").unwrap();
        super::snapshot(&wt).unwrap();
        assert_eq!(seeds(&wt), first, "the real index did not change");
        let again = std::fs::metadata(&first[0]).unwrap().modified().unwrap();
        assert_eq!(made, again, "the private index was made again");
        assert!(
            std::fs::read(&index).unwrap() == before,
            "a read wrote the index"
        );
        git(&wt, &["add", "-A"]);
        git(&wt, &["commit", "-qm", "agent"]);
        super::snapshot(&wt).unwrap();
        let after = seeds(&wt);
        assert_eq!(
            after.len(),
            1,
            "the old private index is removed: {after:?}"
        );
        assert_ne!(after, first, "the real index changed, so its seed did");
    }

    /// A link the agent planted where the seed for its index goes is not read as the
    /// seed: the read stages the work from the real index and puts a seed of its own there.
    #[test]
    fn a_link_planted_as_the_seed_is_not_taken_for_the_index() {
        let (dir, wt) = linked();
        std::fs::write(wt.join("a.txt"), "one, edited\n").unwrap();
        let real = super::real_index(&wt).unwrap();
        let bait = dir.path().join("bait");
        std::fs::write(&bait, "not an index").unwrap();
        let at = real.parent().unwrap().join(format!(
            "{}{}",
            super::SEED,
            super::fingerprint(&real).unwrap()
        ));
        std::os::unix::fs::symlink(&bait, &at).unwrap();
        let snap = super::snapshot(&wt).expect("the read ignores the planted link");
        let blob = git(&wt, &["cat-file", "blob", &format!("{}:a.txt", snap.tree)]);
        assert_eq!(blob, b"one, edited\n");
        assert!(
            std::fs::symlink_metadata(&at)
                .unwrap()
                .file_type()
                .is_file(),
            "the link was replaced by a seed of gitmoot's own"
        );
        assert_eq!(std::fs::read(&bait).unwrap(), b"not an index");
    }

    /// Round after round of an agent's changes read through the kept private index: the
    /// work is exactly the real index's files still on disk plus the untracked ones not
    /// ignored, whatever came and went between reads.
    #[test]
    fn the_work_stays_exact_over_rounds_of_an_agent_s_changes() {
        let (_dir, wt) = linked();
        let write = |f: &str, text: &str| {
            if let Some(dir) = wt.join(f).parent() {
                std::fs::create_dir_all(dir).unwrap();
            }
            std::fs::write(wt.join(f), text).unwrap();
        };
        let check = |round: &str| {
            let index = super::real_index(&wt).unwrap();
            let before = std::fs::read(&index).unwrap();
            let snap = super::snapshot(&wt).unwrap();
            assert_eq!(tree_files(&wt, &snap.tree), expected(&wt), "{round}");
            let tip = git(&wt, &["rev-parse", "HEAD^{tree}"]);
            let tip = String::from_utf8_lossy(&tip).trim().to_string();
            assert_eq!(snap.dirty, tip != snap.tree, "{round}: dirty");
            assert!(
                std::fs::read(&index).unwrap() == before,
                "{round}: index written"
            );
        };
        check("as checked out");
        write("a.txt", "one, edited\n");
        write("new/n1.txt", "n1\n");
        std::fs::remove_file(wt.join("b.txt")).unwrap();
        check("edited, added, deleted");
        git(&wt, &["add", "-A"]);
        git(&wt, &["commit", "-qm", "agent"]);
        check("committed");
        write("build.log", "ignored once .gitignore says so\n");
        write("n2.txt", "n2\n");
        check("two untracked files");
        write(".gitignore", "*.log\nn2.txt\n");
        check("an untracked file became ignored");
        write(".gitignore", "*.log\nn2.txt\nc.txt\n");
        git(&wt, &["rm", "--cached", "-q", "c.txt"]);
        check("a tracked file left the index and is ignored");
        git(&wt, &["rm", "--cached", "-q", "a.txt"]);
        check("a tracked file left the index, not ignored");
        std::fs::remove_dir_all(wt.join("new")).unwrap();
        write("n2.txt", "n2, edited\n");
        write("deep/er/n3.txt", "n3\n");
        check("a folder went, an ignored file changed, another came");
        git(&wt, &["add", "-A"]);
        git(&wt, &["commit", "-qm", "agent again"]);
        check("committed again");
    }
}
