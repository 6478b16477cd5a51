//! Git's patch read as it streams, file by file into hunks, each file's hunks kept up to
//! `HUNK_TEXT_LIMIT` bytes of line text: past it the rest of that file's hunks are read
//! and dropped, and the file marked `hunks_cut` (its counts come from `--numstat` and stay
//! whole). A 150 MB file's diff then costs a bounded amount of memory, not the patch held
//! whole and again as parsed lines.
//!
//! Owns reading one `git diff --patch`; which diff to ask for is `diff.rs`'s.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::Stdio;

use super::git::{self, GitError};
use crate::domain::{DiffLine, Hunk, LineOp};

/// A file's hunks keep at most this much line text: the bound of a stored diff.
pub(super) const HUNK_TEXT_LIMIT: usize = super::hosts::STORED_DIFF_LIMIT;

/// One file of the patch: its hunks, and whether some were left out.
#[derive(Debug, Default, PartialEq)]
pub(super) struct FileHunks {
    pub hunks: Vec<Hunk>,
    pub cut: bool,
    kept: usize,
}

/// Runs `git args…` in `dir` (with `env`: a staged index) and reads its patch as it comes.
pub(super) fn read(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> Result<Vec<FileHunks>, GitError> {
    let fail = |message: String| GitError {
        dir: dir.to_path_buf(),
        args: args.join(" "),
        message,
    };
    let mut child = git::command(dir)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run git: {e}")))?;
    let mut stderr = child.stderr.take().expect("piped");
    // Read beside stdout: git blocked on a full stderr pipe would never end its patch.
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    let stdout = child.stdout.take().expect("piped");
    let files = parse(BufReader::with_capacity(64 * 1024, stdout))
        .map_err(|e| fail(format!("reading git's patch: {e}")));
    let status = child
        .wait()
        .map_err(|e| fail(format!("waiting for git: {e}")))?;
    let errors = errors.join().unwrap_or_default();
    if !status.success() {
        return Err(fail(
            String::from_utf8_lossy(&errors).trim().replace('\n', "; "),
        ));
    }
    files
}

/// The hunks of each file of a patch, in the patch's order.
pub(super) fn parse(mut r: impl BufRead) -> std::io::Result<Vec<FileHunks>> {
    let mut files: Vec<FileHunks> = Vec::new();
    let (mut old, mut new) = (0u64, 0u64);
    let mut buf = Vec::new();
    // One line is never held longer than the bound: a longer one is cut past it anyway.
    while next_line(&mut r, &mut buf, HUNK_TEXT_LIMIT + 1)? {
        let line = buf.strip_suffix(b"\r").unwrap_or(&buf);
        if line.starts_with(b"diff --git ") {
            files.push(FileHunks::default());
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(rest) = line.strip_prefix(b"@@ ") {
            let rest = String::from_utf8_lossy(rest);
            let mut nums = rest.split_whitespace();
            let start = |s: Option<&str>| {
                s.and_then(|s| s[1..].split(',').next().and_then(|n| n.parse().ok()))
                    .unwrap_or(0)
            };
            old = start(nums.next());
            new = start(nums.next());
            if file.cut {
                continue;
            }
            file.hunks.push(Hunk {
                header: String::from_utf8_lossy(line).into_owned(),
                lines: Vec::new(),
            });
            continue;
        }
        let (op, o, n) = match line.first() {
            Some(b'+') => (LineOp::Add, None, Some(new)),
            Some(b'-') => (LineOp::Remove, Some(old), None),
            Some(b' ') => (LineOp::Context, Some(old), Some(new)),
            _ => continue,
        };
        old += u64::from(o.is_some());
        new += u64::from(n.is_some());
        if file.cut || file.hunks.is_empty() {
            continue;
        }
        let text = &line[1..];
        if file.kept + text.len() > HUNK_TEXT_LIMIT {
            file.cut = true;
            continue;
        }
        file.kept += text.len();
        if let Some(hunk) = file.hunks.last_mut() {
            hunk.lines.push(DiffLine {
                op,
                old: o,
                new: n,
                text: String::from_utf8_lossy(text).into_owned(),
            });
        }
    }
    Ok(files)
}

/// Reads the next line into `buf` without its newline, keeping at most `max` bytes of it;
/// false at the end of the stream.
fn next_line(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<bool> {
    buf.clear();
    let mut any = false;
    loop {
        let avail = r.fill_buf()?;
        if avail.is_empty() {
            return Ok(any);
        }
        any = true;
        let (take, used, done) = match avail.iter().position(|b| *b == b'\n') {
            Some(i) => (i, i + 1, true),
            None => (avail.len(), avail.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&avail[..take.min(room)]);
        r.consume(used);
        if done {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_number_their_lines_on_both_sides() {
        let patch = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -2,2 +2,2 @@ fn\n a\n-b\n+c\n";
        let files = parse(&patch[..]).unwrap();
        let lines = &files[0].hunks[0].lines;
        assert_eq!(files[0].hunks[0].header, "@@ -2,2 +2,2 @@ fn");
        assert_eq!((lines[0].old, lines[0].new), (Some(2), Some(2)));
        assert_eq!((lines[1].op, lines[1].old), (LineOp::Remove, Some(3)));
        assert_eq!((lines[2].op, lines[2].new), (LineOp::Add, Some(3)));
        assert!(!files[0].cut);
    }

    #[test]
    fn a_files_hunks_past_the_bound_are_cut_and_the_next_file_kept_whole() {
        let line = "x".repeat(999);
        let n = 3 * HUNK_TEXT_LIMIT / 1000;
        let mut patch = format!("diff --git a/big b/big\n@@ -0,0 +1,{n} @@\n");
        for _ in 0..n {
            patch.push_str(&format!("+{line}\n"));
        }
        patch.push_str("diff --git a/s b/s\n@@ -1 +1 @@\n-a\n+b\n");
        let files = parse(patch.as_bytes()).unwrap();
        let kept: usize = files[0].hunks[0].lines.iter().map(|l| l.text.len()).sum();
        assert!(files[0].cut);
        assert!(
            kept <= HUNK_TEXT_LIMIT && kept > HUNK_TEXT_LIMIT - 1000,
            "{kept}"
        );
        assert!(!files[1].cut);
        assert_eq!(files[1].hunks[0].lines.len(), 2);
    }

    #[test]
    fn a_line_longer_than_the_bound_is_never_held_whole() {
        let mut buf = Vec::new();
        let mut r = &b"abcdefgh\nij"[..];
        assert!(next_line(&mut r, &mut buf, 4).unwrap());
        assert_eq!(buf, b"abcd");
        assert!(next_line(&mut r, &mut buf, 4).unwrap());
        assert_eq!(buf, b"ij");
        assert!(!next_line(&mut r, &mut buf, 4).unwrap());
    }
}
