//! The `job_lands` table: the land journal, one row a job while its land is under way.
//! A land writes its intent here before the base branch moves and takes it back in the
//! transaction that records the land, so a row left behind names a land its process did
//! not finish: what it would have moved the base from and to, and what to clean up.
//!
//! Rows only: what git says became of such a land, and finishing or dropping it, live in
//! `crate::worktree`.

use super::Result;
use super::tx::{Row, Tx, params};
use crate::clock::Millis;
use crate::domain::LandStrategy;

/// One land under way: everything needed to finish it or to see it never happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub job_id: String,
    pub strategy: LandStrategy,
    /// `fast_forward`, `squash`, `merge` or `rebase`.
    pub how: String,
    /// The base branch (without `refs/heads/`).
    pub base: String,
    /// The base's tip the land was planned on: the compare-and-swap's old value.
    pub onto: String,
    /// The base's new commit: the compare-and-swap's new value.
    pub commit: String,
    pub branch: String,
    /// The job's branch tip as landed (a commit of its uncommitted work when `dirty`).
    pub tip: String,
    pub dirty: bool,
    pub checkout: String,
    pub path: String,
    /// The host and process of the land, which alone may finish it while it lives.
    pub host: String,
    pub pid: i64,
    /// When that process started (`crate::pid::started`), so a reused id is not taken
    /// for it.
    pub pid_started: i64,
    pub created_ms: Millis,
}

const COLUMNS: &str = "job_id, strategy, how, base, onto, new_commit, branch, tip, dirty, \
    checkout, path, host, pid, pid_started, created_ms";

fn read(r: &Row<'_>) -> Result<Intent> {
    Ok(Intent {
        job_id: r.get(0)?,
        strategy: r.get(1)?,
        how: r.get(2)?,
        base: r.get(3)?,
        onto: r.get(4)?,
        commit: r.get(5)?,
        branch: r.get(6)?,
        tip: r.get(7)?,
        dirty: r.get::<i64>(8)? != 0,
        checkout: r.get(9)?,
        path: r.get(10)?,
        host: r.get(11)?,
        pid: r.get(12)?,
        pid_started: r.get(13)?,
        created_ms: r.get(14)?,
    })
}

/// Records a land's intent; `false`, writing nothing, when the job already has one.
pub fn begin<'a>(tx: impl Into<Tx<'a>>, i: &Intent) -> Result<bool> {
    let n = tx.into().execute(
        &format!(
            "INSERT INTO job_lands({COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) \
             ON CONFLICT(job_id) DO NOTHING"
        ),
        params![
            &i.job_id,
            &i.strategy,
            &i.how,
            &i.base,
            &i.onto,
            &i.commit,
            &i.branch,
            &i.tip,
            &i.dirty,
            &i.checkout,
            &i.path,
            &i.host,
            &i.pid,
            &i.pid_started,
            &i.created_ms
        ],
    )?;
    Ok(n == 1)
}

/// Takes the job's intent back: `true` for the one caller that removed it, so a land is
/// recorded by whoever takes it, once.
pub fn take<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<bool> {
    let n = tx
        .into()
        .execute("DELETE FROM job_lands WHERE job_id = ?1", params![job_id])?;
    Ok(n == 1)
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Option<Intent>> {
    tx.into().query_opt(
        &format!("SELECT {COLUMNS} FROM job_lands WHERE job_id = ?1"),
        params![job_id],
        read,
    )
}

/// The lands under way begun on `host`, oldest first.
pub fn on_host<'a>(tx: impl Into<Tx<'a>>, host: &str) -> Result<Vec<Intent>> {
    tx.into().query_map(
        &format!("SELECT {COLUMNS} FROM job_lands WHERE host = ?1 ORDER BY created_ms, job_id"),
        params![host],
        read,
    )
}
