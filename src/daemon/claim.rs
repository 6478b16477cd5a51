//! Claiming queued jobs: where each job runs (shared checkout, throwaway worktree or the
//! home's scratch folder), which lock key it holds, and the compare-and-swap from
//! `queued` to `running` in the caller's write transaction.
//!
//! On PostgreSQL that transaction is scoped to trees (`store::Scope::Trees`), so daemons
//! claim side by side: a job is read only once its tree's lock is taken, and a tree whose
//! lock another transaction holds is passed over, as `SKIP LOCKED` passes over a locked
//! row. Its state, its run's and everything `engine::may_start` reads are then current and
//! cannot move before the commit, so no two daemons claim one job. The per-repo counts and
//! repo locks are the daemon's own (`ClaimContext`); the daily caps read spend that only
//! settlements add, so a claim that misses a settlement committing beside it is the same as
//! one that ran just before it.
//!
//! Owns the selection rules only; the pool decides when to claim and runs what it got.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::store::Tx;
use serde_json::json;

use crate::clock::Clock;
use crate::config::Config;
use crate::domain::{Action, EventKind, JobKind, JobState};
use crate::engine::{self, EngineError};
use crate::store::daemons::{self, Queued};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};

/// Where a claimed job's runtime runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The repo's shared checkout (or the scratch folder when the repo has none).
    Shared { dir: PathBuf },
    /// A detached worktree of `checkout`, created before and removed after the run.
    Worktree { checkout: PathBuf, path: PathBuf },
    /// A write job's own worktree on its own branch, opened before the run and kept after
    /// it: the job's work product until the operator lands or discards it.
    Write(crate::worktree::OpenSpec),
}

impl Placement {
    pub fn dir(&self) -> &Path {
        match self {
            Placement::Shared { dir } => dir,
            Placement::Worktree { path, .. } => path,
            Placement::Write(spec) => &spec.path,
        }
    }
}

/// A job this daemon now owns.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub job: Job,
    pub placement: Placement,
    /// The exclusive resource it holds while running (`repo:<r>`, `worktree:<path>`).
    pub lock_key: Option<String>,
    /// The moot seat it sits in, read once here for both its placement and its plan.
    pub seat: Option<crate::chat::moot::SeatBinding>,
}

/// What the daemon knows when it claims: its config, its in-flight locks and per-repo
/// counts, who it is. Owned, so the pool builds it on its loop and the pass reads it
/// wherever the store runs.
pub struct ClaimContext {
    pub config: Arc<Config>,
    /// Repos whose configured path is a git checkout.
    pub git_checkouts: Arc<HashSet<String>>,
    pub held: HashSet<String>,
    pub running_per_repo: HashMap<String, usize>,
    pub worktrees_dir: PathBuf,
    pub scratch_dir: PathBuf,
    /// Claim only jobs of this tree.
    pub only_root: Option<String>,
    /// This daemon's id in the `daemons` table, written on each job it claims (its lease
    /// covers them).
    pub daemon_id: Option<String>,
    /// The host labels this daemon carries: a job pinned to another label is left for a
    /// daemon that carries it.
    pub labels: Vec<String>,
    /// Trees whose jobs are left queued this pass: a finished job of theirs has not
    /// settled yet, and its settlement may stop or fail them.
    pub settling: HashSet<String>,
}

/// How many queued jobs one claim pass looks at, at most, to find ones whose locks are free.
const SCAN: usize = 256;

/// Read-only legs and moot seats (`seat`) of a repo with a git checkout run in their own
/// detached worktree at the committed tip, keyed off `worktree:<path>`, so they run at once
/// and never see the operator's uncommitted edits; an implement job gets a worktree on its
/// own branch; everything else in a repo with a registered checkout shares it under
/// `repo:<repo>`.
pub fn place(job: &Job, seat: bool, ctx: &ClaimContext) -> (Placement, Option<String>) {
    let Some(repo) = &job.repo else {
        return (
            Placement::Shared {
                dir: ctx.scratch_dir.to_path_buf(),
            },
            None,
        );
    };
    let checkout = ctx.config.repos.get(repo).and_then(|r| r.path.clone());
    let read_only =
        (job.kind == JobKind::Leg || seat) && matches!(job.action, Action::Ask | Action::Review);
    match checkout {
        Some(path) if job.action == Action::Implement && ctx.git_checkouts.contains(repo) => {
            let wt = super::worktree::path_for(&ctx.worktrees_dir, &job.id);
            let key = format!("worktree:{}", wt.display());
            let cfg = ctx.config.repos.get(repo);
            let prefix = cfg.map_or("gitmoot/", |r| r.branch_prefix.as_str());
            (
                Placement::Write(crate::worktree::OpenSpec {
                    checkout: path,
                    path: wt,
                    branch: crate::worktree::branch_for(prefix, &job.id),
                    base: cfg.and_then(|r| r.base.clone()),
                    base_commit: None,
                }),
                Some(key),
            )
        }
        Some(path) if read_only && ctx.git_checkouts.contains(repo) => {
            let wt = super::worktree::path_for(&ctx.worktrees_dir, &job.id);
            let key = format!("worktree:{}", wt.display());
            (
                Placement::Worktree {
                    checkout: path,
                    path: wt,
                },
                Some(key),
            )
        }
        Some(path) => (
            Placement::Shared { dir: path },
            Some(format!("repo:{repo}")),
        ),
        // No registered checkout: nothing on disk is shared, so nothing needs the lock.
        None => (
            Placement::Shared {
                dir: ctx.scratch_dir.to_path_buf(),
            },
            None,
        ),
    }
}

/// Claims up to `limit` queued jobs, oldest first, skipping any whose lock is held, whose
/// repo is at its `max_parallel` or whose daily cap is reached (`engine::caps`). Each claim
/// is a compare-and-swap `queued → running` with its `running` event, all in `tx`.
pub fn claim(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    limit: usize,
    ctx: &ClaimContext,
) -> Result<Vec<Claimed>, EngineError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut held = ctx.held.clone();
    let mut per_repo = ctx.running_per_repo.clone();
    let mut out = Vec::new();
    let now = clock.now_ms();
    let mut caps = caps_now(tx, ctx, now)?;
    // Page through the queue so a short claim reads a few rows, not the whole scan window.
    let page = (limit * 2).max(16);
    let mut ids: Vec<Queued> = Vec::new();
    let mut next = 0;
    let mut scanned = 0;
    loop {
        if out.len() >= limit {
            break;
        }
        if next == ids.len() {
            if scanned >= SCAN {
                break;
            }
            // Jobs claimed from the last page left the queue; skip only the ones passed over.
            ids = daemons::queued_page(tx, ctx.only_root.as_deref(), scanned - out.len(), page)?;
            scanned += ids.len();
            next = 0;
            if ids.is_empty() {
                break;
            }
        }
        let Queued {
            id,
            root_id,
            on_label,
        } = ids[next].clone();
        next += 1;
        if on_label.is_some_and(|l| !ctx.labels.contains(&l))
            || ctx.settling.contains(&root_id)
            || !tx.claim_tree(&root_id)?
        {
            continue;
        }
        let mut job = match jobs::require(tx, &id) {
            Ok(job) => job,
            Err(e) if jobs::unreadable(&e).is_some() => {
                let u = jobs::unreadable(&e).expect("guarded").clone();
                quarantine(tx, clock, ctx, &u)?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if !engine::may_start(tx, &job)? || caps.hold(tx, &job.agent)?.is_some() {
            continue;
        }
        let stored = job.clone();
        let seat = seat_of(tx, &job)?;
        let (mut placement, key) = place(&job, seat.is_some(), ctx);
        keep_worktree(tx, &job, &mut placement)?;
        if key.as_ref().is_some_and(|k| held.contains(k)) {
            continue;
        }
        if let Some(repo) = &job.repo {
            let cap = ctx
                .config
                .repos
                .get(repo)
                .map(|r| r.max_parallel as usize)
                .unwrap_or(0);
            if cap > 0 && per_repo.get(repo).copied().unwrap_or(0) >= cap {
                continue;
            }
            *per_repo.entry(repo.clone()).or_default() += 1;
        }
        if let Some(k) = &key {
            held.insert(k.clone());
        }
        if matches!(placement, Placement::Write(_)) && job.on_label.is_none() {
            // A write job's worktree is its work product and stays on this host: pinning
            // the job to this host's label sends its retries and review rounds here.
            job.on_label = ctx.labels.first().cloned();
        }
        job.state = JobState::Running;
        job.daemon_id = ctx.daemon_id.clone();
        job.started_ms = Some(now);
        job.updated_ms = now;
        job.worktree = match &placement {
            Placement::Worktree { path, .. } => Some(path.display().to_string()),
            // A write job's worktree is in `job_worktrees`: recovery must not remove it.
            Placement::Shared { .. } | Placement::Write(_) => None,
        };
        jobs::put_over(tx, &stored, &job)?;
        events::append(
            tx,
            NewEvent::job(now, &job.root_id, &job.id, EventKind::Running)
                .message(format!(
                    "running on {} (attempt {})",
                    job.agent, job.attempt
                ))
                .data(json!({
                    "daemon_pid": std::process::id(),
                    "dir": placement.dir().display().to_string(),
                    "lock": key,
                })),
        )?;
        out.push(Claimed {
            job,
            placement,
            lock_key: key,
            seat,
        });
    }
    Ok(out)
}

/// The daily caps as this pass sees them: they read the rollup, which on PostgreSQL the
/// pass's own settlements reach only at its commit unless brought up to them here.
fn caps_now<'c>(
    tx: &Tx<'_>,
    ctx: &'c ClaimContext,
    now: crate::clock::Millis,
) -> Result<engine::caps::Caps<'c>, EngineError> {
    let caps = engine::caps::Caps::new(&ctx.config, now);
    if caps.any() {
        crate::store::usage::rollup_now(tx)?;
    }
    Ok(caps)
}

/// A write job started again works on in the worktree and branch it had.
fn keep_worktree(tx: &Tx<'_>, job: &Job, placement: &mut Placement) -> Result<(), EngineError> {
    if let Placement::Write(spec) = placement
        && let Some(row) = crate::store::worktrees::get(tx, &job.id)?
    {
        spec.base = row.base_ref.or(spec.base.take());
        spec.base_commit = row.base_commit;
        if let (Some(b), Some(p)) = (row.branch, row.path) {
            spec.branch = b;
            spec.path = PathBuf::from(p);
        }
    }
    Ok(())
}

/// The moot seat `job` sits in: a seat is a root ask of a repo linked to its moot thread,
/// so only those cost the look.
fn seat_of(tx: &Tx<'_>, job: &Job) -> Result<Option<crate::chat::moot::SeatBinding>, EngineError> {
    if job.kind == JobKind::Root && job.action == Action::Ask && job.repo.is_some() {
        Ok(crate::chat::moot::seat_for_job(tx, job)?)
    } else {
        Ok(None)
    }
}

/// Fails one undecodable queued job with its decode error and lets the rest of the queue
/// run. Settlement hooks are not run for it: nothing of its row can be trusted.
pub fn quarantine(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    ctx: &ClaimContext,
    u: &jobs::Unreadable,
) -> Result<(), EngineError> {
    // Its tree is unknown until the row is read apart: nothing short of running alone covers it.
    tx.unscoped("an unreadable job")?;
    tracing::warn!(job = %u.id, "quarantining an unreadable job: {u}");
    if jobs::quarantine(tx, u, clock.now_ms())? {
        let env = engine::Env {
            clock,
            cfg: &ctx.config.orchestrate,
            hooks: &engine::NoHooks,
        };
        engine::settle(
            tx,
            env,
            &u.id,
            engine::Settlement::of(engine::Outcome::Failed(format!("quarantined: {u}"))),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::config::RepoConfig;
    use crate::engine::{SubmitRoot, submit_root};
    use crate::store::Store;
    use crate::store::agents::{self, Agent};

    fn store() -> (Store, PathBuf) {
        let dir = crate::ids::scratch_dir("claim");
        let store = Store::open(&dir.join("gitmoot.db")).unwrap();
        agents::insert(store.conn(), &Agent::shell("a", "true")).unwrap();
        (store, dir)
    }

    /// A pass under `config` holding `held` locks and leaving `settling` trees alone,
    /// nothing in flight.
    fn context(dir: &Path, config: Config, held: &[&str], settling: &[&str]) -> ClaimContext {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        ClaimContext {
            config: Arc::new(config),
            git_checkouts: Arc::new(HashSet::new()),
            held: set(held),
            running_per_repo: HashMap::new(),
            worktrees_dir: dir.to_path_buf(),
            scratch_dir: dir.to_path_buf(),
            only_root: None,
            daemon_id: None,
            labels: Vec::new(),
            settling: set(settling),
        }
    }

    fn submit(store: &mut Store, clock: &ManualClock, repo: Option<&str>) -> String {
        clock.advance(1);
        store
            .write(|tx| {
                submit_root(
                    tx,
                    clock,
                    SubmitRoot {
                        repo: repo.map(str::to_string),
                        ..SubmitRoot::new("a", Action::Ask, "p", "test")
                    },
                )
            })
            .unwrap()
    }

    #[test]
    fn a_repo_without_a_registered_checkout_takes_no_lock() {
        let (mut store, dir) = store();
        let clock = ManualClock::new(1_000);
        let ids: Vec<String> = (0..3)
            .map(|_| submit(&mut store, &clock, Some("acme/api")))
            .collect();
        let ctx = context(&dir, Config::default(), &[], &[]);
        let got = store.write(|tx| claim(tx, &clock, 3, &ctx)).unwrap();
        assert_eq!(got.len(), ids.len(), "siblings of one repo run at once");
        assert!(got.iter().all(|c| c.lock_key.is_none()));
    }

    /// A fleet cap reached by the day's spend holds the queue; the next UTC day's clock
    /// starts it again without anyone touching the cap.
    #[test]
    fn a_reached_daily_cap_holds_the_queue_until_the_day_turns() {
        let (mut store, dir) = store();
        let clock = ManualClock::new(10 * crate::clock::DAY_MS);
        let spent = submit(&mut store, &clock, None);
        let waiting = submit(&mut store, &clock, None);
        store
            .write(|tx| {
                let before = jobs::require(tx, &spent)?;
                let mut after = before.clone();
                (after.state, after.cost_usd) = (JobState::Succeeded, 1.5);
                jobs::put_over(tx, &before, &after)
            })
            .unwrap();
        let mut config = Config::default();
        config.budget.daily_usd = 1.0;
        let ctx = context(&dir, config, &[], &[]);
        let got = store.write(|tx| claim(tx, &clock, 1, &ctx)).unwrap();
        assert!(got.is_empty(), "held by the cap");
        clock.advance(crate::clock::DAY_MS);
        let got = store.write(|tx| claim(tx, &clock, 1, &ctx)).unwrap();
        assert_eq!(got[0].job.id, waiting);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_tree_whose_ended_job_has_not_settled_is_left_queued() {
        let (mut store, dir) = store();
        let clock = ManualClock::new(1_000);
        let waiting = submit(&mut store, &clock, None);
        let free = submit(&mut store, &clock, None);
        let ctx = context(&dir, Config::default(), &[], &[waiting.as_str()]);
        let got = store.write(|tx| claim(tx, &clock, 2, &ctx)).unwrap();
        let ids: Vec<&str> = got.iter().map(|c| c.job.id.as_str()).collect();
        assert_eq!(ids, [free.as_str()]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn held_locks_and_repo_caps_are_skipped_without_blocking_later_jobs() {
        let (mut store, dir) = store();
        let clock = ManualClock::new(1_000);
        let blocked = submit(&mut store, &clock, Some("acme/api"));
        let capped: Vec<String> = (0..3)
            .map(|_| submit(&mut store, &clock, Some("acme/web")))
            .collect();
        let free: Vec<String> = (0..40).map(|_| submit(&mut store, &clock, None)).collect();
        let mut config = Config::default();
        config.repos.insert(
            "acme/web".into(),
            RepoConfig {
                path: Some(dir.clone()),
                max_parallel: 2,
                ..RepoConfig::default()
            },
        );
        config.repos.insert(
            "acme/api".into(),
            RepoConfig {
                path: Some(dir.clone()),
                max_parallel: 0,
                ..RepoConfig::default()
            },
        );
        let ctx = context(&dir, config, &["repo:acme/api"], &[]);
        let got = store.write(|tx| claim(tx, &clock, 3, &ctx)).unwrap();
        let ids: Vec<&str> = got.iter().map(|c| c.job.id.as_str()).collect();
        // The api job waits for its lock; web's shared checkout takes one job at a time
        // (repo:acme/web), so the third slot goes to the first job with no repo.
        assert_eq!(
            ids,
            [capped[0].as_str(), free[0].as_str(), free[1].as_str()]
        );
        assert_eq!(got[0].lock_key.as_deref(), Some("repo:acme/web"));
        assert_eq!(got[0].placement, Placement::Shared { dir: dir.clone() });
        assert_eq!(
            jobs::require(store.conn(), &blocked).unwrap().state,
            JobState::Queued
        );
        // A wide claim (with web's lock free again) pages past the first page and never
        // claims a job twice: one more web job and the other 38 free ones.
        let more = store.write(|tx| claim(tx, &clock, 100, &ctx)).unwrap();
        assert_eq!(more.len(), 39);
        assert_eq!(more[0].job.id, capped[1]);
        assert!(more.iter().all(|c| !ids.contains(&c.job.id.as_str())));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
