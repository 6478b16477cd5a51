//! What a write job's agent left in its run's private stash, kept where the operator sees
//! it. Inside the confinement `refs/stash` and its reflog live in the run's own git layer
//! (see `runtime/sandbox/git.rs`), which goes with the run; a stash the agent never popped
//! holds work no longer in the worktree. Each such entry becomes the tag
//! `<prefix><job>/stash/<commit>` of the job's own (`git stash apply` takes it).
//!
//! Reads the layer's files and writes only those tags; never the operator's stash.

use std::path::Path;

use super::WorktreeError;
use super::git;

/// Keeps the stash entries the run left in the layer's private half `upper` (beyond the
/// repository's own stash, which the agent saw through it) as tags beside the job's
/// branch `branch` in the worktree `dir`; the tags made, newest first.
pub fn keep_stash(dir: &Path, branch: &str, upper: &Path) -> Result<Vec<String>, WorktreeError> {
    let left = entries(&upper.join("logs/refs/stash"));
    if left.is_empty() {
        return Ok(Vec::new());
    }
    let common = git::line(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?;
    let own = entries(&Path::new(&common).join("logs/refs/stash"));
    let folder = branch.strip_suffix("/work").unwrap_or(branch);
    let mut kept = Vec::new();
    for commit in left.iter().rev().filter(|c| !own.contains(c)) {
        let tag = format!("refs/tags/{folder}/stash/{commit}");
        git::run(dir, &["update-ref", &tag, commit])?;
        kept.push(tag);
    }
    Ok(kept)
}

/// The commits a stash reflog names, oldest first; none when it is missing or unreadable
/// (a layer's whiteout of a stash the agent emptied reads as nothing).
fn entries(reflog: &Path) -> Vec<String> {
    std::fs::read_to_string(reflog)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .filter(|c| c.len() >= 40 && c.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_string)
        .collect()
}
