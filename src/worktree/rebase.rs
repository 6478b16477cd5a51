//! A job's base following its branch: once the job's branch holds a newer tip of its base
//! branch (its agent merged or rebased onto it, or `job rebase` did), its diff, state and
//! forecasts are measured from the merge base of its work with the base branch, recorded
//! as its new base with a `base_followed` event. `job rebase` replays the job's commits
//! on the base branch's tip in its worktree for the operator.
//!
//! Owns reading where a job's work stands against its base branch, recording the followed
//! base, and the rebase verb (the CLI and the control room call the same function). Must
//! not touch the operator's checkout nor a worktree whose agent is at work.

use std::path::Path;

use serde::Serialize;
use serde_json::json;

use super::WorktreeError;
use super::git::{self, GitError, merge};
use super::snapshot::snapshot;
use crate::clock::Millis;
use crate::domain::{EventKind, JobState, WorktreeState};
use crate::engine::Env;
use crate::store::Store;
use crate::store::events::{self, NewEvent};
use crate::store::worktrees::{self, WriteTree};

/// Where a job's work stands against its base branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Based {
    /// What its work is measured from: the recorded base, or the merge base of its branch
    /// with the base branch once that is newer.
    pub base: String,
    /// The base branch's tip, when the base is a branch.
    pub tip: Option<String>,
    /// The merge base of the branch with that tip.
    pub merge_base: Option<String>,
}

impl Based {
    /// The branch holds the base branch's tip (a land fast-forwards).
    pub fn holds_tip(&self) -> bool {
        self.tip.is_none() || self.tip == self.merge_base
    }
}

/// Where the work in `dir` (recorded base `recorded`, base branch `base_ref`) stands.
pub(crate) fn based(dir: &Path, recorded: &str, base_ref: Option<&str>) -> Based {
    let tip = base_ref.and_then(|b| {
        let spec = format!("refs/heads/{b}^{{commit}}");
        git::line(dir, &["rev-parse", "--verify", "-q", &spec]).ok()
    });
    let tip = tip.filter(|t| !t.is_empty());
    // A base that has not moved is where the branch started: no merge base to look for.
    let merge_base = match tip.as_deref() {
        Some(t) if t == recorded => Some(t.to_string()),
        Some(t) => git::line(dir, &["merge-base", "HEAD", t])
            .ok()
            .filter(|m| !m.is_empty()),
        None => None,
    };
    let newer = merge_base.as_deref().filter(|mb| {
        *mb != recorded
            && git::yes(dir, &["merge-base", "--is-ancestor", recorded, mb]).unwrap_or(false)
    });
    Based {
        base: newer.unwrap_or(recorded).to_string(),
        tip,
        merge_base,
    }
}

/// The tree last sent for review carried from `old` onto the new base `new`, so
/// `--since-review` keeps showing only what changed since: what the base changed comes
/// along, and a file both changed keeps its reviewed version. `None` when git cannot.
pub(crate) fn carried_review(dir: &Path, old: &str, new: &str, review: &str) -> Option<String> {
    let m = merge(dir, new, review, Some(old)).ok()?;
    if m.conflicted.is_empty() {
        return Some(m.tree);
    }
    let index = PrivateIndex(std::env::temp_dir().join(format!(
        "gitmoot-review-{}-{}",
        std::process::id(),
        crate::ids::random_hex(6)
    )));
    let env = [("GIT_INDEX_FILE", index.0.as_path())];
    git::run_env(dir, &["read-tree", &m.tree], &env).ok()?;
    for f in &m.conflicted {
        let entry = git::run(dir, &["ls-tree", review, "--", f]).ok()?;
        let entry = String::from_utf8_lossy(&entry);
        let fields: Vec<&str> = entry.split(['\t', ' ']).collect();
        let update = match fields.as_slice() {
            [mode, _, oid, ..] => format!("{mode},{oid},{f}"),
            _ => {
                git::run_env(dir, &["update-index", "--force-remove", "--", f], &env).ok()?;
                continue;
            }
        };
        git::run_env(
            dir,
            &["update-index", "--add", "--cacheinfo", &update],
            &env,
        )
        .ok()?;
    }
    let tree = git::run_env(dir, &["write-tree"], &env).ok()?;
    Some(String::from_utf8_lossy(&tree).trim().to_string())
}

/// Removes the private index however the carrying ended.
struct PrivateIndex(std::path::PathBuf);

impl Drop for PrivateIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A job whose recorded base moved on to its branch's merge base with the base branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Followed {
    pub job: String,
    pub from: String,
    pub to: String,
}

/// Records the new base of every open job on this host whose branch took in a newer tip
/// of its base branch (or only `only`'s), each with a `base_followed` event.
pub fn follow(
    store: &mut Store,
    now: Millis,
    only: Option<&str>,
) -> Result<Vec<Followed>, WorktreeError> {
    let rows = worktrees::list(store.conn())?;
    let moved: Vec<(WriteTree, String)> = rows
        .into_iter()
        .filter(|w| w.state == WorktreeState::Open && only.is_none_or(|j| j == w.job_id))
        .filter_map(|w| {
            let path = w.path.as_deref().filter(|p| Path::new(p).exists())?;
            let recorded = w.base_commit.as_deref()?;
            let b = based(Path::new(path), recorded, w.base_ref.as_deref());
            (b.base != recorded).then(|| (w.clone(), b.base))
        })
        .collect();
    let note = |w: &WriteTree| {
        format!(
            "its branch holds a newer tip of {}: its work is measured from there",
            w.base_ref.as_deref().unwrap_or("its base")
        )
    };
    record(store, now, moved, note)
}

/// Writes each job's new base (and its review tree carried onto it) with its event; a row
/// whose base moved meanwhile is left as it is.
fn record(
    store: &mut Store,
    now: Millis,
    moved: Vec<(WriteTree, String)>,
    note: impl Fn(&WriteTree) -> String,
) -> Result<Vec<Followed>, WorktreeError> {
    if moved.is_empty() {
        return Ok(Vec::new());
    }
    let carried: Vec<Option<String>> = moved
        .iter()
        .map(|(w, to)| {
            let (dir, old) = (Path::new(w.path.as_deref()?), w.base_commit.as_deref()?);
            w.review_tree
                .as_deref()
                .and_then(|r| carried_review(dir, old, to, r))
        })
        .collect();
    store.write(|tx| {
        let mut out = Vec::new();
        for ((w, to), review) in moved.iter().zip(carried) {
            let Some(now_row) = worktrees::get(tx, &w.job_id)? else {
                continue;
            };
            if now_row.base_commit != w.base_commit || now_row.state != WorktreeState::Open {
                continue;
            }
            let from = w.base_commit.clone().unwrap_or_default();
            worktrees::put(
                tx,
                &WriteTree {
                    base_commit: Some(to.clone()),
                    review_tree: review.or(now_row.review_tree.clone()),
                    updated_ms: now,
                    ..now_row
                },
            )?;
            events::append(
                tx,
                NewEvent::job(now, &w.root_id, &w.job_id, EventKind::BaseFollowed)
                    .message(format!(
                        "base {} → {}: {}",
                        short(&from),
                        short(to),
                        note(w)
                    ))
                    .data(json!({"from": from, "to": to, "base": w.base_ref})),
            )?;
            out.push(Followed {
                job: w.job_id.clone(),
                from,
                to: to.clone(),
            });
        }
        Ok::<_, WorktreeError>(out)
    })
}

fn short(c: &str) -> &str {
    &c[..c.len().min(12)]
}

/// What `job rebase` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rebased {
    pub job: String,
    pub branch: String,
    /// The base branch and the tip the branch now starts from.
    pub base: String,
    pub onto: String,
    /// The job's commits replayed (none when the branch already held the tip).
    pub replayed: usize,
    /// The branch's new tip.
    pub head: String,
}

impl Rebased {
    /// `rebased JOB (branch B) onto BASE at C: N commit(s) replayed`.
    pub fn line(&self) -> String {
        if self.replayed == 0 && self.head == self.onto {
            return format!(
                "{}'s branch {} already holds {} at {}; its base is recorded there",
                self.job,
                self.branch,
                self.base,
                short(&self.onto)
            );
        }
        format!(
            "rebased {} (branch {}) onto {} at {}: {} commit(s) replayed, now at {}",
            self.job,
            self.branch,
            self.base,
            short(&self.onto),
            self.replayed,
            short(&self.head)
        )
    }
}

/// `job rebase`: the job's commits since its base replayed on its base branch's tip in its
/// worktree, and that tip recorded as its base. Refused, changing nothing, while its agent
/// works, when the worktree holds uncommitted work (it is not carried: commit it there
/// first), and when a commit conflicts (its files named).
pub fn rebase(
    store: &mut Store,
    env: Env<'_>,
    here: &[String],
    id: &str,
) -> Result<Rebased, WorktreeError> {
    let (job, w, path, base) = super::open_here(&store.conn(), here, id, "rebase")?;
    if matches!(job.state, JobState::Queued | JobState::Running) {
        return Err(crate::invalid!(
            "{} is {}: its agent works in that worktree; rebase it once it has ended (nothing was changed)",
            job.id,
            job.state
        )
        .into());
    }
    let base_ref = w.base_ref.clone().unwrap_or_default();
    let b = based(&path, &base, Some(&base_ref));
    let Some(tip) = b.tip.clone() else {
        return Err(crate::invalid!(
            "{}'s base {base_ref:?} is not a branch of its repo; there is no tip to rebase onto",
            job.id
        )
        .into());
    };
    let snap = snapshot(&path)?;
    if snap.dirty {
        let names = git::run(
            &path,
            &["diff", "--name-only", "-z", &snap.head, &snap.tree],
        )?;
        return Err(crate::invalid!(
            "{}'s worktree holds uncommitted work ({}); job rebase moves only commits: commit it in {} first (nothing was changed)",
            job.id,
            git::split_z(&names).join(", "),
            path.display()
        )
        .into());
    }
    let (head, replayed) = if b.holds_tip() {
        (snap.head.clone(), 0)
    } else {
        replay(&path, &tip, &snap.head, &b.base).map_err(|e| match e {
            Replay::Git(e) => WorktreeError::from(e),
            Replay::Conflict(commit, files) => crate::invalid!(
                "{} does not rebase onto {base_ref} at {}: its commit {} conflicts in {}; nothing was changed (merge {base_ref} in its worktree and resolve it there)",
                job.id,
                short(&tip),
                short(&commit),
                files.join(", ")
            )
            .into(),
        })?
    };
    if head != snap.head {
        git::run(&path, &["reset", "-q", "--keep", &head])?;
    }
    let recorded = w.base_commit.clone().unwrap_or_default();
    let moved = if recorded == tip {
        Vec::new()
    } else {
        vec![(w.clone(), tip.clone())]
    };
    let n = replayed;
    record(store, env.clock.now_ms(), moved, |_| {
        format!("rebased onto {base_ref}'s tip ({n} commit(s) replayed)")
    })?;
    Ok(Rebased {
        job: job.id,
        branch: w.branch.unwrap_or_default(),
        base: base_ref,
        onto: tip,
        replayed,
        head,
    })
}

enum Replay {
    Git(GitError),
    /// The commit that did not apply and its conflicting files.
    Conflict(String, Vec<String>),
}

impl From<GitError> for Replay {
    fn from(e: GitError) -> Self {
        Replay::Git(e)
    }
}

/// The commits `from..tip` (merges left out) replayed one by one onto `onto` as objects,
/// authors kept; the new tip and how many were replayed.
fn replay(dir: &Path, onto: &str, tip: &str, from: &str) -> Result<(String, usize), Replay> {
    let range = format!("{from}..{tip}");
    let list = git::line(dir, &["rev-list", "--reverse", "--no-merges", &range])?;
    let mut cur = onto.to_string();
    let mut n = 0;
    for c in list.lines() {
        let m = merge(dir, &cur, c, Some(&format!("{c}^")))?;
        if !m.conflicted.is_empty() {
            return Err(Replay::Conflict(c.to_string(), m.conflicted));
        }
        let meta = git::split_z(&git::run(
            dir,
            &["log", "-1", "--format=%an%x00%ae%x00%ad%x00%B", c],
        )?);
        let field = |i: usize| meta.get(i).cloned().unwrap_or_default();
        let (name, email, date) = (field(0), field(1), field(2));
        // `run_env` takes its values as paths (an OS string, which any text is).
        let author = [
            ("GIT_AUTHOR_NAME", Path::new(&name)),
            ("GIT_AUTHOR_EMAIL", Path::new(&email)),
            ("GIT_AUTHOR_DATE", Path::new(&date)),
        ];
        let msg = field(3);
        let args = ["commit-tree", &m.tree, "-p", &cur, "-m", msg.trim_end()];
        cur = String::from_utf8_lossy(&git::run_env(dir, &args, &author)?)
            .trim()
            .to_string();
        n += 1;
    }
    Ok((cur, n))
}
