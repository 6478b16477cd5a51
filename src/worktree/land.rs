//! `job land`: a write job's work integrated into its base branch in the registered
//! checkout (fast-forward when possible, else a merge; `--squash`, `--merge`, `--rebase` on
//! request). A refusal changes nothing: the result is built as git objects first (`plan`,
//! which a dry run stops after), and the base branch moves only once it exists and the
//! checkout can take it: never while git has an operation in progress there (`midway`),
//! and only by compare-and-swap against the tip the plan read, once the land's intent is
//! journalled (`store::lands`; `journal` finishes or drops a land killed midway). The
//! job's worktree and branch are removed only once the base is seen to hold the landed
//! commit, and the land is recorded by the transaction that takes its intent back.
//!
//! Owns this verb; the CLI and the control room both call it.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use serde_json::json;

use super::WorktreeError;
use super::git::{self, split_z};
use super::land_step::{LandStep, at as step};
use super::overlap::merged_tree;
use super::snapshot::snapshot;
use crate::config::Config;
use crate::domain::{EventKind, JobState, WorktreeState};
use crate::engine::Env;
use crate::store::Store;
use crate::store::events::{self, NewEvent};
use crate::store::jobs::Job;
use crate::store::lands::{self, Intent};
use crate::store::worktrees::{self, WriteTree};

/// How a job's branch is integrated into its base: the vocabulary's `LandStrategy`.
pub use crate::domain::LandStrategy as Strategy;

/// What a land did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Landed {
    pub job: String,
    pub base: String,
    /// The base branch's new commit.
    pub commit: String,
    /// `fast_forward`, `squash`, `merge` or `rebase`.
    pub how: &'static str,
    pub branch: String,
    pub branch_kept: bool,
    /// Clean-up that failed after the land itself succeeded, in git's words.
    pub notes: Vec<String>,
    /// Files this job shares with jobs of its repo that landed since it started.
    pub landed_first: super::LandedFirst,
}

impl Landed {
    /// `landed JOB on BASE as COMMIT (how)`: the first line the CLI prints and the control
    /// room shows.
    pub fn line(&self) -> String {
        format!(
            "landed {} on {} as {} ({})",
            self.job,
            self.base,
            &self.commit[..self.commit.len().min(12)],
            self.how.replace('_', "-")
        )
    }
}

pub(super) fn refuse(reason: String) -> WorktreeError {
    WorktreeError::Refused { reason }
}

/// A job still at work cannot be landed or discarded under its agent.
pub(super) fn settled(job: &Job, verb: &str) -> Result<(), WorktreeError> {
    if matches!(job.state, JobState::Queued | JobState::Running) {
        return Err(refuse(format!(
            "{} is {}; {verb} it once it has ended",
            job.id, job.state
        )));
    }
    Ok(())
}

pub(super) fn branch_exists(checkout: &Path, branch: &str) -> bool {
    git::yes(
        checkout,
        &[
            "show-ref",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .unwrap_or(false)
}

/// The job's title and summary, for a squash or merge commit's message and for the commit
/// that holds the work a job left uncommitted.
fn default_message(job: &Job, strategy: Strategy, branch: &str) -> String {
    let title: String = job
        .prompt
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .chars()
        .take(72)
        .collect();
    let summary = job
        .result
        .as_ref()
        .and_then(|r| r["summary"].as_str())
        .unwrap_or("")
        .trim()
        .to_string();
    let head = match strategy {
        Strategy::Squash => title,
        _ => format!("Merge {branch}: {title}"),
    };
    format!("{head}\n\n{summary}\n\ngitmoot job: {}", job.id)
}

/// A land worked out as git objects: the base's new commit exists, the base has not moved.
pub(super) struct Plan {
    job: Job,
    w: WriteTree,
    path: std::path::PathBuf,
    checkout: std::path::PathBuf,
    branch: String,
    pub(super) base: String,
    onto: String,
    tip: String,
    dirty: bool,
    commit: String,
    pub(super) how: &'static str,
}

impl Plan {
    /// `merges branch B into base Y of repo R (how)`: a land's consequence, said before it.
    pub(super) fn says(&self) -> String {
        format!(
            "merges branch {} into {} of repo {} ({})",
            self.branch,
            self.base,
            self.w.repo,
            self.how.replace('_', "-")
        )
    }

    /// Refused, changing nothing, when the base cannot move where the plan would put it.
    pub(super) fn check(&self) -> Result<(), WorktreeError> {
        base_movable(&self.checkout, &self.base, &self.onto, &self.commit).map(|_| ())
    }
}

/// Everything a land refuses, checked, and its result built as objects; nothing moves.
pub(super) fn plan(
    store: &Store,
    config: &Config,
    id: &str,
    strategy: Strategy,
    message: Option<&str>,
) -> Result<(Plan, super::LandedFirst), WorktreeError> {
    let (job, w, path, base_commit) =
        super::open_here(&store.conn(), &config.daemon.labels, id, "land")?;
    settled(&job, "land")?;
    let checkout = Path::new(w.checkout.as_deref().unwrap_or_default()).to_path_buf();
    let branch = w.branch.clone().unwrap_or_default();
    let base = w.base_ref.clone().unwrap_or_default();
    let base_ref = format!("refs/heads/{base}");
    if !branch_exists(&checkout, &base) {
        return Err(refuse(format!(
            "{}'s base {base:?} is not a branch of {}; merge {branch} yourself",
            job.id,
            checkout.display()
        )));
    }
    let snap = snapshot(&path)?;
    let tip = if snap.dirty {
        // What lands by fast-forward carries this commit's message onto the base.
        let msg = default_message(&job, Strategy::Squash, &branch);
        git::line(
            &path,
            &["commit-tree", &snap.tree, "-p", &snap.head, "-m", &msg],
        )?
    } else {
        snap.head.clone()
    };
    let base_tree = git::line(
        &checkout,
        &["rev-parse", &format!("{base_commit}^{{tree}}")],
    )?;
    if snap.tree == base_tree {
        return Err(refuse(format!(
            "{} changed nothing against its base; `gitmoot job discard {}` removes it",
            job.id, job.id
        )));
    }
    let onto = git::line(&checkout, &["rev-parse", "--verify", &base_ref])?;
    let message = message
        .map(str::to_string)
        .unwrap_or_else(|| default_message(&job, strategy, &branch));
    let first =
        super::overlap::landed_first(store, &w, &checkout, (&base_commit, &onto, &snap.tree))?;
    let (commit, how) = integrate(&checkout, &onto, &tip, &base_commit, strategy, &message)
        .map_err(|e| match e {
            WorktreeError::Refused { reason } => {
                let first = if first.jobs.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} landed first and also changed {}",
                        first.jobs.join(", "),
                        first.files.join(", ")
                    )
                };
                refuse(format!(
                    "{reason}{first} (`gitmoot job rebase {}` replays its commits on the base's tip and names each conflict, or resolve it in its worktree)",
                    job.id
                ))
            }
            e => e,
        })?;
    let plan = Plan {
        job,
        w,
        path,
        checkout,
        branch,
        base,
        onto,
        tip,
        dirty: snap.dirty,
        commit,
        how,
    };
    Ok((plan, first))
}

/// Lands the job's work on its base branch; see the module's doc for what is refused.
/// Its intent is journalled (`store::lands`) before the base moves and taken back as the
/// land is recorded, so a land killed midway is finished or dropped by the next start
/// (`resume_lands`); until then its job is refused as being landed.
pub fn land(
    store: &mut Store,
    env: Env<'_>,
    config: &Config,
    id: &str,
    strategy: Strategy,
    message: Option<&str>,
) -> Result<Landed, WorktreeError> {
    let (p, first) = plan(store, config, id, strategy, message)?;
    let checkout = &p.checkout;
    step(LandStep::Planned, checkout);
    let intent = Intent {
        job_id: p.job.id.clone(),
        strategy,
        how: p.how.to_string(),
        base: p.base.clone(),
        onto: p.onto.clone(),
        commit: p.commit.clone(),
        branch: p.branch.clone(),
        tip: p.tip.clone(),
        dirty: p.dirty,
        checkout: checkout.display().to_string(),
        path: p.path.display().to_string(),
        host: crate::pid::hostname(),
        pid: i64::from(std::process::id()),
        pid_started: i32::try_from(std::process::id())
            .ok()
            .and_then(crate::pid::started)
            .unwrap_or_default(),
        created_ms: env.clock.now_ms(),
    };
    if !store.write(|tx| lands::begin(tx, &intent))? {
        let other = lands::get(store.conn(), &p.job.id)?;
        return Err(refuse(format!(
            "{} is being landed already{}; nothing was changed",
            p.job.id,
            other
                .map(|o| format!(" (by process {} on {})", o.pid, o.host))
                .unwrap_or_default()
        )));
    }
    step(LandStep::Journalled, checkout);
    // A land refused from here on never moved the base (or moved it back): its intent goes.
    let dropped = |store: &mut Store, e: WorktreeError| match store
        .write(|tx| lands::take(tx, &intent.job_id))
    {
        Ok(_) => e,
        Err(s) => s.into(),
    };
    if let Err(e) = move_base(checkout, &p.base, &p.onto, &p.commit) {
        return Err(dropped(store, e));
    }
    step(LandStep::Moved, checkout);
    // The job's worktree and branch go only once the base is seen to hold the work.
    let base_ref = format!("refs/heads/{}", p.base);
    if !git::yes(
        checkout,
        &["merge-base", "--is-ancestor", &p.commit, &base_ref],
    )? {
        let now = git::line(checkout, &["rev-parse", "--verify", "-q", &base_ref])?;
        let e = refuse(format!(
            "{} moved again right after the land (now at {}, which does not hold {}); {}'s worktree and branch {} are kept, land again",
            p.base,
            short(&now),
            short(&p.commit),
            p.job.id,
            p.branch
        ));
        return Err(dropped(store, e));
    }
    finish(store, env, config, (&p.job, &p.w, &intent), first)
}

/// The rest of a land whose base holds its commit: the job's worktree removed, its branch
/// deleted (or kept, holding what was landed) and the land recorded by whoever takes its
/// intent back, once; the land whose process died midway is finished here too.
pub(super) fn finish(
    store: &mut Store,
    env: Env<'_>,
    config: &Config,
    (job, w, i): (&Job, &WriteTree, &Intent),
    first: super::LandedFirst,
) -> Result<Landed, WorktreeError> {
    let checkout = Path::new(&i.checkout);
    let mut notes = Vec::new();
    let mut note = |r: Result<Vec<u8>, git::GitError>| {
        if let Err(e) = r {
            notes.push(e.to_string());
        }
    };
    // The kept branch holds what was landed, uncommitted work included.
    if i.dirty {
        note(git::run(
            checkout,
            &["update-ref", &format!("refs/heads/{}", i.branch), &i.tip],
        ));
    }
    note(git::with_worktree_lock(checkout, || {
        if Path::new(&i.path).exists() {
            git::run(checkout, &["worktree", "remove", "--force", &i.path])
        } else {
            git::run(checkout, &["worktree", "prune"])
        }
    }));
    step(LandStep::Removed, checkout);
    let keep = config.repos.get(&w.repo).is_some_and(|r| r.keep_branches);
    if !keep && branch_exists(checkout, &i.branch) {
        note(git::run(checkout, &["branch", "-D", &i.branch]));
    }
    step(LandStep::Cleaned, checkout);
    let landed = Landed {
        job: job.id.clone(),
        base: i.base.clone(),
        commit: i.commit.clone(),
        how: how_named(&i.how),
        branch: i.branch.clone(),
        branch_kept: keep,
        notes,
        landed_first: first,
    };
    record_land(store, env, job, w, &landed, i.strategy)?;
    Ok(landed)
}

/// The stored spelling of a land's `how`, as `Landed` names it.
fn how_named(how: &str) -> &'static str {
    match how {
        "fast_forward" => "fast_forward",
        "squash" => "squash",
        "merge" => "merge",
        _ => "rebase",
    }
}

/// Records the land in the transaction that takes its intent back: a land another
/// process already recorded (it took the intent first) is not recorded again.
fn record_land(
    store: &mut Store,
    env: Env<'_>,
    job: &Job,
    w: &WriteTree,
    l: &Landed,
    strategy: Strategy,
) -> Result<(), WorktreeError> {
    let now = env.clock.now_ms();
    store.write(|tx| {
        if !lands::take(tx, &job.id)? {
            return Ok(());
        }
        worktrees::put(
            tx,
            &WriteTree {
                state: WorktreeState::Landed,
                landed_commit: Some(l.commit.clone()),
                updated_ms: now,
                ..w.clone()
            },
        )?;
        events::append(
            tx,
            NewEvent::job(now, &job.root_id, &job.id, EventKind::Landed)
                .message(format!(
                    "landed on {} as {} ({})",
                    l.base,
                    &l.commit[..l.commit.len().min(12)],
                    l.how
                ))
                .data(
                    json!({"strategy": strategy, "how": l.how, "commit": l.commit,
                    "base": l.base, "branch": l.branch, "branch_kept": l.branch_kept}),
                ),
        )?;
        let note = format!(
            "{}'s work was landed on {} as {} ({})",
            job.id,
            l.base,
            &l.commit[..l.commit.len().min(12)],
            l.how.replace('_', "-")
        );
        env.hooks.work_settled(tx, env.clock, job, &note)?;
        Ok::<_, WorktreeError>(())
    })?;
    Ok(())
}

/// The base's new commit for `strategy`, built as objects only (no ref moves).
fn integrate(
    co: &Path,
    onto: &str,
    tip: &str,
    base_commit: &str,
    strategy: Strategy,
    message: &str,
) -> Result<(String, &'static str), WorktreeError> {
    let ff = git::yes(co, &["merge-base", "--is-ancestor", onto, tip])?;
    match strategy {
        Strategy::Auto | Strategy::Rebase if ff => Ok((tip.to_string(), "fast_forward")),
        Strategy::Auto | Strategy::Merge => {
            let tree = merged_tree(co, onto, tip, None)?;
            let c = git::line(
                co,
                &["commit-tree", &tree, "-p", onto, "-p", tip, "-m", message],
            )?;
            Ok((c, "merge"))
        }
        Strategy::Squash => {
            let tree = merged_tree(co, onto, tip, None)?;
            let c = git::line(co, &["commit-tree", &tree, "-p", onto, "-m", message])?;
            Ok((c, "squash"))
        }
        Strategy::Rebase => Ok((rebase(co, onto, tip, base_commit)?, "rebase")),
    }
}

/// The job's commits since its base replayed one by one onto `onto`, authors kept.
fn rebase(co: &Path, onto: &str, tip: &str, base_commit: &str) -> Result<String, WorktreeError> {
    let list = git::line(
        co,
        &[
            "rev-list",
            "--reverse",
            "--no-merges",
            &format!("{base_commit}..{tip}"),
        ],
    )?;
    let mut cur = onto.to_string();
    for c in list.lines() {
        let tree = merged_tree(co, &cur, c, Some(&format!("{c}^")))?;
        let meta = git::run(co, &["log", "-1", "--format=%an%x00%ae%x00%ad%x00%B", c])?;
        let meta = split_z(&meta);
        let field = |i: usize| meta.get(i).cloned().unwrap_or_default();
        let mut cmd = git::command(co);
        cmd.args(["commit-tree", &tree, "-p", &cur, "-m", field(3).trim_end()]);
        cmd.env("GIT_AUTHOR_NAME", field(0))
            .env("GIT_AUTHOR_EMAIL", field(1))
            .env("GIT_AUTHOR_DATE", field(2));
        let out = cmd.output().map_err(|e| git::GitError {
            dir: co.to_path_buf(),
            args: "commit-tree".into(),
            message: format!("cannot run git: {e}"),
        })?;
        if !out.status.success() {
            return Err(git::GitError {
                dir: co.to_path_buf(),
                args: "commit-tree".into(),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            }
            .into());
        }
        cur = String::from_utf8_lossy(&out.stdout).trim().to_string();
    }
    Ok(cur)
}

/// Moves the base branch from `from` to `to` once `base_movable` allows it, by
/// compare-and-swap against `from`, the tip `plan` read: a base another writer moved since
/// is refused with nothing changed. A checked-out base's files follow only once the swap
/// held (git's two-tree `read-tree -u -m from to`, what a fast-forward does to the index
/// and files, refusing to overwrite local changes); if they cannot, the branch is swapped
/// back.
fn move_base(co: &Path, base: &str, from: &str, to: &str) -> Result<(), WorktreeError> {
    let checked_out = base_movable(co, base, from, to)?;
    step(LandStep::Checked, co);
    let base_ref = format!("refs/heads/{base}");
    let swap = |new: &str, old: &str, why: &str| {
        git::run(co, &["update-ref", "-m", why, &base_ref, new, old])
    };
    if let Err(e) = swap(to, from, "gitmoot land") {
        let now = git::line(co, &["rev-parse", "--verify", "-q", &base_ref]).unwrap_or_default();
        return Err(refuse(if now != from {
            format!(
                "{base} moved while landing (now at {}, the land was planned on {}); nothing was changed, land again",
                short(&now),
                short(from)
            )
        } else {
            format!(
                "{base} could not be moved: {}; nothing was changed",
                e.message
            )
        }));
    }
    step(LandStep::Swapped, co);
    if checked_out && let Err(e) = git::run(co, &["read-tree", "-u", "-m", from, to]) {
        let back = match swap(from, to, "gitmoot land undone") {
            Ok(_) => format!("{base} was put back at {}", short(from)),
            Err(b) => format!(
                "{base} could not be put back at {}: {}",
                short(from),
                b.message
            ),
        };
        return Err(refuse(format!(
            "the checkout's files could not follow the land: {}; {back}",
            e.message
        )));
    }
    Ok(())
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Whether the base can move from `from` to `to`: refused when git has an operation in
/// progress in the checkout or on the base (`midway`), when the base is checked out in
/// another worktree, or in the checkout with uncommitted changes to files the land
/// changes. `true` when the checkout has it checked out (its files move with it).
fn base_movable(co: &Path, base: &str, from: &str, to: &str) -> Result<bool, WorktreeError> {
    let base_ref = format!("refs/heads/{base}");
    super::midway::refuse_midway(co, &base_ref)?;
    let head = git::line(co, &["symbolic-ref", "-q", "HEAD"]).unwrap_or_default();
    if head != base_ref {
        let list = git::run(co, &["worktree", "list", "--porcelain", "-z"])?;
        let elsewhere = split_z(&list)
            .iter()
            .any(|l| l.strip_prefix("branch ") == Some(base_ref.as_str()));
        if elsewhere {
            return Err(refuse(format!(
                "{base} is checked out in another worktree of {}; land from there",
                co.display()
            )));
        }
        return Ok(false);
    }
    let changed: BTreeSet<String> = split_z(&git::run(
        co,
        &["diff", "--name-only", "-z", "--no-renames", from, to],
    )?)
    .into_iter()
    .collect();
    let status = git::run(
        co,
        &[
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    )?;
    let dirty: Vec<String> = split_z(&status)
        .into_iter()
        .filter_map(|e| e.get(3..).map(str::to_string))
        .filter(|p| changed.contains(p))
        .collect();
    if !dirty.is_empty() {
        return Err(refuse(format!(
            "the checkout {} has uncommitted changes to files the land changes: {}; commit or stash them first (nothing was changed)",
            co.display(),
            dirty.join(", ")
        )));
    }
    Ok(true)
}
