//! Running git on a checkout or worktree: its stdout on success, its own stderr as the
//! error otherwise, so every git failure reaches the operator in git's words.
//!
//! Owns the process call only (and reading `merge-tree`'s answer); what to ask git is the
//! caller's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A git command that failed (or could not start), with git's own message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("git {args} in {}: {message}", dir.display())]
pub struct GitError {
    pub dir: PathBuf,
    pub args: String,
    pub message: String,
}

/// `git --no-optional-locks -C dir`, the start of every git call gitmoot makes. Without
/// the flag a `git status` or `git diff` of ours takes the index lock to refresh the
/// index, and an agent's `git commit` in that worktree at the same moment (or the
/// operator's own, in a registered checkout) fails on `index.lock: File exists`. The locks
/// a write needs are not optional and stay.
pub(crate) fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--no-optional-locks").arg("-C").arg(dir);
    cmd
}

/// `git -C dir args…` with `env` added; its stdout.
pub(crate) fn run_env(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> Result<Vec<u8>, GitError> {
    let mut cmd = command(dir);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let fail = |message: String| GitError {
        dir: dir.to_path_buf(),
        args: args.join(" "),
        message,
    };
    let out = cmd
        .output()
        .map_err(|e| fail(format!("cannot run git: {e}")))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        let err = String::from_utf8_lossy(&out.stderr)
            .trim()
            .replace('\n', "; ");
        let err = if err.is_empty() {
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .replace('\n', "; ")
        } else {
            err
        };
        Err(fail(err))
    }
}

/// `git -C dir args…`; its stdout.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    run_env(dir, args, &[])
}

/// `git -C dir args…`; its stdout as one trimmed line.
pub(crate) fn line(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    Ok(String::from_utf8_lossy(&run(dir, args)?).trim().to_string())
}

/// `git -C dir args…` answering yes (exit 0) or no (exit 1); anything else is an error.
pub(crate) fn yes(dir: &Path, args: &[&str]) -> Result<bool, GitError> {
    let out = command(dir).args(args).output().map_err(|e| GitError {
        dir: dir.to_path_buf(),
        args: args.join(" "),
        message: format!("cannot run git: {e}"),
    })?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(GitError {
            dir: dir.to_path_buf(),
            args: args.join(" "),
            message: String::from_utf8_lossy(&out.stderr)
                .trim()
                .replace('\n', "; "),
        }),
    }
}

/// What `git merge-tree --write-tree` made of two sides: the merged tree (conflict markers
/// in its files where they clash) and the files that conflict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Merge {
    pub tree: String,
    pub conflicted: Vec<String>,
}

/// `ours` and `theirs` (commits; trees too once `merge_base` is named) merged as objects.
pub(crate) fn merge(
    dir: &Path,
    ours: &str,
    theirs: &str,
    merge_base: Option<&str>,
) -> Result<Merge, GitError> {
    let mb = merge_base.map(|b| format!("--merge-base={b}"));
    let mut args = vec!["merge-tree", "--write-tree", "--no-messages", "-z"];
    args.extend(mb.as_deref());
    args.extend([ours, theirs]);
    let fail = |message: String| GitError {
        dir: dir.to_path_buf(),
        args: args.join(" "),
        message,
    };
    let out = command(dir)
        .args(&args)
        .output()
        .map_err(|e| fail(format!("cannot run git: {e}")))?;
    let fields = split_z(&out.stdout);
    let tree = fields.first().cloned().unwrap_or_default();
    match out.status.code() {
        Some(0) => Ok(Merge {
            tree,
            conflicted: Vec::new(),
        }),
        Some(1) => {
            // Each conflicted entry is `<mode> <object> <stage>\t<path>`, a path once per stage.
            let files: BTreeSet<String> = fields
                .iter()
                .skip(1)
                .filter_map(|f| f.split_once('\t').map(|(_, p)| p.to_string()))
                .collect();
            Ok(Merge {
                tree,
                conflicted: files.into_iter().collect(),
            })
        }
        _ => Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )),
    }
}

/// NUL-separated output as strings.
pub(crate) fn split_z(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// Runs `f` holding the repository's worktree lock (`flock` on `gitmoot-worktree.lock` in
/// its common git folder): git's own `worktree add` reads the other worktrees' admin
/// folders, and fails on one another run is half-way through making, so gitmoot's adds and
/// removes on one repository take turns, across processes. Without the lock file (an
/// unreadable repository) `f` runs anyway and git says what is wrong.
pub fn with_worktree_lock<T>(checkout: &Path, f: impl FnOnce() -> T) -> T {
    use std::os::fd::AsRawFd;
    let common = line(
        checkout,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .ok();
    let file = common.and_then(|c| {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(Path::new(&c).join("gitmoot-worktree.lock"))
            .ok()
    });
    if let Some(f) = &file {
        // SAFETY: a plain advisory lock on a descriptor we own; released when it closes.
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
    }
    let out = f();
    drop(file);
    out
}
