//! Claiming queued jobs: where each job runs (shared checkout, throwaway worktree or the
//! home's scratch folder), which lock key it holds, and the compare-and-swap from
//! `queued` to `running` in the caller's IMMEDIATE transaction.
//!
//! Owns the selection rules only; the pool decides when to claim and runs what it got.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Transaction;
use serde_json::json;

use crate::clock::Clock;
use crate::config::Config;
use crate::domain::{Action, JobKind, JobState};
use crate::engine::{self, EngineError};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};

/// Where a claimed job's runtime runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The repo's shared checkout (or the scratch folder when the repo has none).
    Shared { dir: PathBuf },
    /// A detached worktree of `checkout`, created before and removed after the run.
    Worktree { checkout: PathBuf, path: PathBuf },
}

impl Placement {
    pub fn dir(&self) -> &Path {
        match self {
            Placement::Shared { dir } => dir,
            Placement::Worktree { path, .. } => path,
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
}

/// What the daemon knows when it claims: its in-flight locks and per-repo counts.
pub struct ClaimContext<'a> {
    pub config: &'a Config,
    /// Repos whose configured path is a git checkout.
    pub git_checkouts: &'a HashSet<String>,
    pub held: &'a HashSet<String>,
    pub running_per_repo: &'a HashMap<String, usize>,
    pub worktrees_dir: &'a Path,
    pub scratch_dir: &'a Path,
    /// Claim only jobs of this tree.
    pub only_root: Option<&'a str>,
}

/// How many queued jobs one claim pass looks at to find ones whose locks are free.
const SCAN: usize = 256;

/// Read-only legs of a repo with a git checkout run in their own worktree; everything
/// else with a repo shares its checkout under `repo:<repo>`.
pub fn place(job: &Job, ctx: &ClaimContext<'_>) -> (Placement, Option<String>) {
    let Some(repo) = &job.repo else {
        return (
            Placement::Shared {
                dir: ctx.scratch_dir.to_path_buf(),
            },
            None,
        );
    };
    let checkout = ctx.config.repos.get(repo).and_then(|r| r.path.clone());
    let read_only = job.kind == JobKind::Leg && matches!(job.action, Action::Ask | Action::Review);
    match checkout {
        Some(path) if read_only && ctx.git_checkouts.contains(repo) => {
            let wt = super::worktree::path_for(ctx.worktrees_dir, &job.id);
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
        None => (
            Placement::Shared {
                dir: ctx.scratch_dir.to_path_buf(),
            },
            Some(format!("repo:{repo}")),
        ),
    }
}

/// Claims up to `limit` queued jobs, oldest first, skipping any whose lock is held or
/// whose repo is at its `max_parallel`. Each claim is a compare-and-swap `queued →
/// running` with its `running` event, all in `tx`.
pub fn claim(
    tx: &Transaction<'_>,
    clock: &dyn Clock,
    limit: usize,
    ctx: &ClaimContext<'_>,
) -> Result<Vec<Claimed>, EngineError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = tx
        .prepare_cached(
            "SELECT id FROM jobs WHERE state = 'queued' AND (?2 IS NULL OR root_id = ?2) \
             ORDER BY created_ms, rowid LIMIT ?1",
        )?
        .query_map(rusqlite::params![SCAN as i64, ctx.only_root], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut held = ctx.held.clone();
    let mut per_repo = ctx.running_per_repo.clone();
    let mut out = Vec::new();
    let now = clock.now_ms();
    for id in ids {
        if out.len() >= limit {
            break;
        }
        if !engine::may_start(tx, &id)? {
            continue;
        }
        let mut job = jobs::require(tx, &id)?;
        let (placement, key) = place(&job, ctx);
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
        job.state = JobState::Running;
        job.started_ms = Some(now);
        job.updated_ms = now;
        job.worktree = match &placement {
            Placement::Worktree { path, .. } => Some(path.display().to_string()),
            Placement::Shared { .. } => None,
        };
        jobs::put(tx, &job)?;
        events::append(
            tx,
            NewEvent {
                ts_ms: now,
                root_id: Some(&job.root_id),
                job_id: Some(&job.id),
                kind: "running",
                message: format!("running on {} (attempt {})", job.agent, job.attempt),
                data: Some(json!({
                    "daemon_pid": std::process::id(),
                    "dir": placement.dir().display().to_string(),
                    "lock": key,
                })),
            },
        )?;
        out.push(Claimed {
            job,
            placement,
            lock_key: key,
        });
    }
    Ok(out)
}
