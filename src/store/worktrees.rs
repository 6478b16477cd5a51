//! The `job_worktrees` table: a write job's worktree and branch, the base it started from
//! and whether it was landed or discarded, one row a job.
//!
//! Rows only: the git work and what it means to land or discard live in `crate::worktree`.

use super::Result;
use super::tx::{Row, Tx, params};
use crate::clock::Millis;
use crate::domain::{JobState, WorktreeState};

/// One write job's worktree.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteTree {
    pub job_id: String,
    pub root_id: String,
    pub repo: String,
    pub state: WorktreeState,
    /// The base asked for (`--base`, `[repos.X].base`) or, once opened, the branch or
    /// commit the job's branch started from.
    pub base_ref: Option<String>,
    /// The commit the branch started from, recorded when the job was claimed.
    pub base_commit: Option<String>,
    pub branch: Option<String>,
    /// The registered checkout the worktree belongs to.
    pub checkout: Option<String>,
    pub path: Option<String>,
    /// The base branch's commit after a land.
    pub landed_commit: Option<String>,
    /// Review rounds the job's work was sent back for (`job review`).
    pub review_rounds: i64,
    /// The tree of the work when it was last sent back for review (`job diff
    /// --since-review` diffs against it).
    pub review_tree: Option<String>,
    pub created_ms: Millis,
    pub updated_ms: Millis,
}

impl WriteTree {
    /// A base asked for at submission (or none), before anything exists on disk.
    pub fn requested(
        job_id: &str,
        root_id: &str,
        repo: &str,
        base: Option<&str>,
        now: Millis,
    ) -> Self {
        WriteTree {
            job_id: job_id.into(),
            root_id: root_id.into(),
            repo: repo.into(),
            state: WorktreeState::Requested,
            base_ref: base.map(str::to_string),
            base_commit: None,
            branch: None,
            checkout: None,
            path: None,
            landed_commit: None,
            review_rounds: 0,
            review_tree: None,
            created_ms: now,
            updated_ms: now,
        }
    }
}

const COLUMNS: &str = "job_id, root_id, repo, state, base_ref, base_commit, branch, checkout, \
    path, landed_commit, review_rounds, review_tree, created_ms, updated_ms";

fn read(r: &Row<'_>) -> Result<WriteTree> {
    Ok(WriteTree {
        job_id: r.get(0)?,
        root_id: r.get(1)?,
        repo: r.get(2)?,
        state: r.get(3)?,
        base_ref: r.get(4)?,
        base_commit: r.get(5)?,
        branch: r.get(6)?,
        checkout: r.get(7)?,
        path: r.get(8)?,
        landed_commit: r.get(9)?,
        review_rounds: r.get(10)?,
        review_tree: r.get(11)?,
        created_ms: r.get(12)?,
        updated_ms: r.get(13)?,
    })
}

/// Writes the row, replacing the job's earlier one.
pub fn put<'a>(tx: impl Into<Tx<'a>>, w: &WriteTree) -> Result<()> {
    tx.into().execute(
        &format!(
            "INSERT INTO job_worktrees({COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
             ON CONFLICT(job_id) DO UPDATE SET root_id = ?2, repo = ?3, state = ?4, base_ref = ?5, \
             base_commit = ?6, branch = ?7, checkout = ?8, path = ?9, landed_commit = ?10, \
             review_rounds = ?11, review_tree = ?12, updated_ms = ?14"
        ),
        params![
            &w.job_id,
            &w.root_id,
            &w.repo,
            &w.state,
            &w.base_ref,
            &w.base_commit,
            &w.branch,
            &w.checkout,
            &w.path,
            &w.landed_commit,
            &w.review_rounds,
            &w.review_tree,
            &w.created_ms,
            &w.updated_ms
        ],
    )?;
    Ok(())
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Option<WriteTree>> {
    tx.into().query_opt(
        &format!("SELECT {COLUMNS} FROM job_worktrees WHERE job_id = ?1"),
        params![job_id],
        read,
    )
}

/// Every write job's worktree, oldest first.
pub fn list<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<WriteTree>> {
    tx.into().query_map(
        &format!("SELECT {COLUMNS} FROM job_worktrees ORDER BY created_ms, job_id"),
        params![],
        read,
    )
}

/// A worktree row with its job's state and attempt, as the control room keys its reads.
pub type WithJob = (WriteTree, Option<JobState>, u32);

/// Every write job's worktree, oldest first, with its job's state and attempt (one query,
/// none of the job's text).
pub fn list_with_jobs<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<WithJob>> {
    let cols: Vec<String> = COLUMNS
        .split(',')
        .map(|c| format!("w.{}", c.trim()))
        .collect();
    tx.into().query_map(
        &format!(
            "SELECT {}, j.state, j.attempt FROM job_worktrees w LEFT JOIN jobs j ON j.id = w.job_id \
             ORDER BY w.created_ms, w.job_id",
            cols.join(", ")
        ),
        params![],
        |r| {
            let attempt: Option<i64> = r.get(15)?;
            Ok((read(r)?, r.get(14)?, attempt.unwrap_or(0).max(0) as u32))
        },
    )
}

/// Keeps `diff` (the job's diff as JSON, already bounded) as the one other hosts read.
pub fn put_diff<'a>(tx: impl Into<Tx<'a>>, job_id: &str, diff: &str, now: Millis) -> Result<()> {
    tx.into().execute(
        "UPDATE job_worktrees SET diff = ?2, diff_ms = ?3 WHERE job_id = ?1",
        params![job_id, diff, &now],
    )?;
    Ok(())
}

/// The job's stored diff and when its daemon read it, if one was stored.
pub fn stored_diff<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Option<(String, Millis)>> {
    let row = tx.into().query_opt(
        "SELECT diff, diff_ms FROM job_worktrees WHERE job_id = ?1",
        params![job_id],
        |r| Ok((r.get::<Option<String>>(0)?, r.get::<Option<Millis>>(1)?)),
    )?;
    Ok(match row {
        Some((Some(diff), Some(at))) => Some((diff, at)),
        _ => None,
    })
}
