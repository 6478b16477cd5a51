//! Reads of the `jobs` table: one job by id or unique prefix, a tree's jobs, the pages of
//! `job list`, and the counts the daemon and status bars ask for.
//!
//! Reads only; every write of a job row is `writes.rs`'s.

use super::super::tx::{Param, Tx, params};
use super::super::{Result, StoreError};
use super::{COLS, Job, Unreadable, from_row};
use crate::domain::JobState;

pub fn get<'a>(tx: impl Into<Tx<'a>>, id: &str) -> Result<Option<Job>> {
    tx.into().query_opt(
        &format!("SELECT {COLS} FROM jobs WHERE id = ?1"),
        params![id],
        from_row,
    )
}

/// The full job id for `input`: itself when a job has that id, else the one job whose id
/// starts with it (as git and kubectl accept unique prefixes). A prefix that names one
/// root means that root, not its legs (`ROOT/leg`), and a leg is named by its root's
/// prefix and its own name (`job-zfy/a`). None matching, or several, is a validation
/// error; an ambiguous prefix lists the candidates.
pub fn resolve_id<'a>(tx: impl Into<Tx<'a>>, input: &str) -> Result<String> {
    let conn = tx.into();
    if input.is_empty() {
        return Err(StoreError::Invalid(crate::Invalid(
            "a job id is required".into(),
        )));
    }
    if get(conn, input)?.is_some() {
        return Ok(input.to_string());
    }
    if let Some((root, leg)) = input.split_once('/')
        && !root.is_empty()
        && !leg.is_empty()
        && let [root] = prefixed(conn, root, true)?.as_slice()
    {
        let full = format!("{root}/{leg}");
        if get(conn, &full)?.is_some() {
            return Ok(full);
        }
    }
    let roots = prefixed(conn, input, true)?;
    let ids = if roots.is_empty() {
        prefixed(conn, input, false)?
    } else {
        roots
    };
    match ids.as_slice() {
        [] => Err(StoreError::Invalid(crate::Invalid(format!(
            "job {input:?} not found"
        )))),
        [one] => Ok(one.clone()),
        many => {
            let more = if many.len() > 10 { ", …" } else { "" };
            let shown: Vec<&str> = many.iter().take(10).map(String::as_str).collect();
            Err(StoreError::Invalid(crate::Invalid(format!(
                "job id prefix {input:?} is ambiguous: {}{more}",
                shown.join(", ")
            ))))
        }
    }
}

/// Up to 11 ids that start with `prefix`, only roots' (ids without a `/`) when `roots`.
fn prefixed(conn: Tx<'_>, prefix: &str, roots: bool) -> Result<Vec<String>> {
    // A range scan on the primary key: every id that starts with `prefix` sorts in
    // [prefix, prefix + U+10FFFF).
    let upper = format!("{prefix}{}", char::MAX);
    let only_roots = if roots { " AND id NOT LIKE '%/%'" } else { "" };
    conn.query_map(
        &format!("SELECT id FROM jobs WHERE id >= ?1 AND id < ?2{only_roots} ORDER BY id LIMIT 11"),
        params![prefix, upper],
        |r| r.get(0),
    )
}

/// The job, or a not-found error naming it.
pub fn require<'a>(tx: impl Into<Tx<'a>>, id: &str) -> Result<Job> {
    get(tx, id)?.ok_or_else(|| StoreError::Invalid(crate::Invalid(format!("job {id:?} not found"))))
}

/// Every job of one tree, oldest first.
pub fn by_root<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<Vec<Job>> {
    tx.into().query_map(
        &format!("SELECT {COLS} FROM jobs WHERE root_id = ?1 ORDER BY created_ms, rowid"),
        params![root_id],
        from_row,
    )
}

/// Direct children of a job, oldest first.
pub fn children<'a>(tx: impl Into<Tx<'a>>, parent_id: &str) -> Result<Vec<Job>> {
    tx.into().query_map(
        &format!("SELECT {COLS} FROM jobs WHERE parent_id = ?1 ORDER BY created_ms, rowid"),
        params![parent_id],
        from_row,
    )
}

/// Filters of `job list`; every field narrows.
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    pub state: Option<JobState>,
    pub root: Option<String>,
    pub agent: Option<String>,
    pub repo: Option<String>,
    pub limit: Option<usize>,
    /// Only jobs older than this one (the cursor a script passes to get the next page).
    pub before: Option<String>,
}

/// Which columns a listing reads: the text table needs no result and only the start of
/// the prompt; JSON needs what `job show --json` prints. Neither reads the raw output;
/// `All` (the library's own callers) reads every column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListColumns {
    Table,
    Json,
    All,
}

/// `COLS` with the columns a listing never prints read as NULL (or cut), so a page costs
/// the rows it shows and not their outputs.
fn list_cols(which: ListColumns) -> String {
    let (prompt, result) = match which {
        ListColumns::Table => ("substr(prompt, 1, 240)", "NULL"),
        ListColumns::Json => ("prompt", "result"),
        ListColumns::All => return COLS.to_string(),
    };
    format!(
        "id, root_id, parent_id, delegation_id, kind, agent, action, {prompt}, repo, state, \
         attempt, depth, model, effort, phase, timeout_ms, NULL, retries_left, NULL, {result}, NULL, \
         output_truncated, error, tokens_in, tokens_out, cost_usd, dispatched_by, NULL, NULL, followup, \
         followup_reason, continuation_id, NULL, created_ms, started_ms, finished_ms, updated_ms, \
         daemon_id, on_label"
    )
}

/// The SQL and arguments of one `job list` page; `EXPLAIN QUERY PLAN` checks read it too.
pub fn list_query(f: &JobFilter, which: ListColumns) -> (String, Vec<String>) {
    let mut sql = format!("SELECT {} FROM jobs WHERE 1=1", list_cols(which));
    let mut args: Vec<String> = Vec::new();
    let mut push = |clause: &str, v: String| {
        args.push(v);
        sql.push_str(&format!(" AND {clause} = ?{}", args.len()));
    };
    if let Some(s) = f.state {
        push("state", s.as_str().to_string());
    }
    if let Some(r) = &f.root {
        push("root_id", r.clone());
    }
    if let Some(a) = &f.agent {
        push("agent", a.clone());
    }
    if let Some(r) = &f.repo {
        push("repo", r.clone());
    }
    if let Some(b) = &f.before {
        args.push(b.clone());
        let n = args.len();
        sql.push_str(&format!(
            " AND (created_ms, rowid) < (SELECT created_ms, rowid FROM jobs WHERE id = ?{n})"
        ));
    }
    sql.push_str(" ORDER BY created_ms DESC, rowid DESC");
    if let Some(n) = f.limit {
        sql.push_str(&format!(" LIMIT {n}"));
    }
    (sql, args)
}

/// Jobs matching the filter, newest first; unreadable rows are skipped with a warning.
pub fn list<'a>(tx: impl Into<Tx<'a>>, f: &JobFilter) -> Result<Vec<Job>> {
    let (list, skipped) = list_readable(tx, f)?;
    for u in skipped {
        tracing::warn!(job = %u.id, "skipping an unreadable job row: {u}");
    }
    Ok(list)
}

/// Jobs matching the filter, newest first, every column, and the rows that could not be
/// decoded.
pub fn list_readable<'a>(
    tx: impl Into<Tx<'a>>,
    f: &JobFilter,
) -> Result<(Vec<Job>, Vec<Unreadable>)> {
    let mut out = Vec::new();
    let skipped = list_each(tx, f, ListColumns::All, |j| {
        out.push(j);
        Ok::<_, StoreError>(())
    })?;
    Ok((out, skipped))
}

/// Streams one listing to `each`, newest first, holding one row at a time; the columns
/// `which` leaves out come back empty. Rows that cannot be decoded are skipped and
/// returned. A `before` cursor naming no job is bad input.
pub fn list_each<'a, E: From<StoreError>>(
    tx: impl Into<Tx<'a>>,
    f: &JobFilter,
    which: ListColumns,
    mut each: impl FnMut(Job) -> Result<(), E>,
) -> Result<Vec<Unreadable>, E> {
    let tx = tx.into();
    if let Some(b) = &f.before
        && !exists(tx, b)?
    {
        return Err(StoreError::Invalid(crate::Invalid(format!("job {b:?} not found"))).into());
    }
    let (sql, args) = list_query(f, which);
    let args: Vec<&dyn Param> = args.iter().map(|a| a as &dyn Param).collect();
    let mut skipped = Vec::new();
    tx.query_each(&sql, &args, |r| match from_row(r) {
        Ok(j) => each(j),
        Err(StoreError::Unreadable(u)) => {
            skipped.push(u);
            Ok(())
        }
        Err(e) => Err(e.into()),
    })?;
    Ok(skipped)
}

/// How many jobs are in each live state, for status bars and `daemon status`.
pub fn count_state<'a>(tx: impl Into<Tx<'a>>, state: JobState) -> Result<u64> {
    tx.into()
        .one("SELECT COUNT(*) FROM jobs WHERE state = ?1", params![state])
}

/// Running jobs the daemon owns: session jobs (`dispatched_by = 'session'`, run by an
/// operator by hand) are not the daemon's to wait for or recover.
pub fn count_daemon_running<'a>(tx: impl Into<Tx<'a>>) -> Result<u64> {
    tx.into().one(
        "SELECT COUNT(*) FROM jobs WHERE state = 'running' AND dispatched_by != 'session'",
        params![],
    )
}

/// Whether a job id is taken (ids are never reused).
pub fn exists<'a>(tx: impl Into<Tx<'a>>, id: &str) -> Result<bool> {
    Ok(tx
        .into()
        .query_opt("SELECT 1 FROM jobs WHERE id = ?1", params![id], |_| Ok(()))?
        .is_some())
}

/// Jobs of one tree in a given state.
///
/// `+state` keeps the planner on `jobs_root`: with no statistics it otherwise picks
/// `jobs_state` and walks every job in that state across all trees (each settlement
/// looks for its tree's queued stragglers, so the whole queue per job), and a bound
/// state compared against the partial indexes' `state = '…'` makes SQLite re-prepare
/// the statement on every call.
pub fn by_root_in_state<'a>(
    tx: impl Into<Tx<'a>>,
    root_id: &str,
    state: JobState,
) -> Result<Vec<Job>> {
    tx.into().query_map(
        &format!(
            "SELECT {COLS} FROM jobs WHERE root_id = ?1 AND +state = ?2 ORDER BY created_ms, rowid"
        ),
        params![root_id, state],
        from_row,
    )
}

/// How many jobs of one tree are queued or running.
pub fn live_in_root<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<u64> {
    tx.into().one(
        "SELECT COUNT(*) FROM jobs WHERE root_id = ?1 AND state IN ('queued', 'running')",
        params![root_id],
    )
}

/// Running jobs of a tree killed with `--force`, and running jobs cancelled by hand (they
/// keep their `runtime_pid` until settled), oldest first.
pub fn to_terminate<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<String>> {
    tx.into().query_map(
        "SELECT j.id FROM jobs j JOIN runs r ON r.root_id = j.root_id \
         WHERE (j.state = 'running' AND r.killed = 1 AND r.kill_force = 1) \
            OR (j.state = 'cancelled' AND j.started_ms IS NOT NULL AND j.runtime_pid IS NOT NULL) \
         ORDER BY j.created_ms",
        params![],
        |r| r.get(0),
    )
}
