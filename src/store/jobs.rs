//! The `jobs` table: every root, leg, continuation and finalize job with its prompt,
//! outcome, output, usage and timing.

use serde::Serialize;
use serde_json::Value;

use super::tx::{Param, Row, Tx, params};
use super::{Result, StoreError};
use crate::clock::Millis;
use crate::domain::{Action, JobKind, JobState};

pub(super) const SCHEMA: &str = "
CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    root_id          TEXT NOT NULL REFERENCES runs(root_id),
    parent_id        TEXT REFERENCES jobs(id),
    delegation_id    TEXT,
    kind             TEXT NOT NULL,
    agent            TEXT NOT NULL,
    action           TEXT NOT NULL,
    prompt           TEXT NOT NULL,
    repo             TEXT,
    state            TEXT NOT NULL,
    attempt          INTEGER NOT NULL DEFAULT 1,
    depth            INTEGER NOT NULL DEFAULT 0,
    model            TEXT,
    effort           TEXT,
    phase            TEXT,
    timeout_ms       INTEGER,
    fingerprint      TEXT,
    retries_left     INTEGER NOT NULL DEFAULT 0,
    ephemeral        TEXT,
    result           TEXT,
    raw_output       TEXT,
    output_truncated INTEGER NOT NULL DEFAULT 0,
    error            TEXT,
    tokens_in        INTEGER NOT NULL DEFAULT 0,
    tokens_out       INTEGER NOT NULL DEFAULT 0,
    cost_usd         REAL NOT NULL DEFAULT 0,
    dispatched_by    TEXT NOT NULL DEFAULT '',
    runtime_pid      INTEGER,
    worktree         TEXT,
    followup         TEXT NOT NULL DEFAULT 'none',
    followup_reason  TEXT,
    continuation_id  TEXT,
    carry            TEXT,
    created_ms       INTEGER NOT NULL,
    started_ms       INTEGER,
    finished_ms      INTEGER,
    updated_ms       INTEGER NOT NULL
);
CREATE INDEX jobs_root ON jobs(root_id, created_ms);
CREATE INDEX jobs_parent ON jobs(parent_id);
CREATE INDEX jobs_state ON jobs(state, created_ms);
CREATE INDEX jobs_queued ON jobs(created_ms) WHERE state = 'queued';
CREATE INDEX jobs_running ON jobs(updated_ms) WHERE state = 'running';
CREATE INDEX jobs_agent ON jobs(agent, created_ms);
CREATE INDEX jobs_repo ON jobs(repo, created_ms);
CREATE INDEX jobs_updated ON jobs(updated_ms);
";

/// What the engine still owes a settled job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowUp {
    /// Nothing: the job's own outcome is its outcome.
    None,
    /// Its batch of legs is in flight.
    Batch,
    /// A continuation (or finalize) job speaks for it.
    Continued,
    /// Its batch blocked it (`followup_reason`).
    Blocked,
}

impl FollowUp {
    pub fn as_str(self) -> &'static str {
        match self {
            FollowUp::None => "none",
            FollowUp::Batch => "batch",
            FollowUp::Continued => "continued",
            FollowUp::Blocked => "blocked",
        }
    }
    fn parse(s: &str) -> Self {
        match s {
            "batch" => FollowUp::Batch,
            "continued" => FollowUp::Continued,
            "blocked" => FollowUp::Blocked,
            _ => FollowUp::None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub id: String,
    pub root_id: String,
    pub parent_id: Option<String>,
    pub delegation_id: Option<String>,
    pub kind: JobKind,
    pub agent: String,
    pub action: Action,
    pub prompt: String,
    pub repo: Option<String>,
    pub state: JobState,
    pub attempt: u32,
    pub depth: u32,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub phase: Option<String>,
    pub timeout_ms: Option<i64>,
    pub fingerprint: Option<String>,
    pub retries_left: u32,
    /// The ephemeral worker spec of a leg that has no registered agent.
    pub ephemeral: Option<Value>,
    /// The parsed `gitmoot_result`, once the job settled with one.
    pub result: Option<Value>,
    pub raw_output: Option<String>,
    pub output_truncated: bool,
    pub error: Option<String>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    pub dispatched_by: String,
    pub runtime_pid: Option<i64>,
    pub worktree: Option<String>,
    /// What the engine still owes this job after it settled (its batch, its continuation).
    pub followup: FollowUp,
    /// Why the follow-up blocked (block_parent, a failed vote or quorum).
    pub followup_reason: Option<String>,
    /// The continuation or finalize job that speaks for this job's outcome.
    pub continuation_id: Option<String>,
    /// Engine state carried from one generation to the next (loop window, streaks).
    pub carry: Option<Value>,
    pub created_ms: Millis,
    pub started_ms: Option<Millis>,
    pub finished_ms: Option<Millis>,
    pub updated_ms: Millis,
    /// The daemon (`daemons.id`) whose lease covers it while it runs.
    pub daemon_id: Option<String>,
    /// The host label its daemon must carry (`job run --on`), inherited down the tree.
    pub on_label: Option<String>,
}

impl Job {
    /// A fresh queued job with everything optional left empty.
    pub fn queued(
        id: String,
        root_id: String,
        kind: JobKind,
        agent: String,
        action: Action,
        prompt: String,
        now: Millis,
    ) -> Self {
        Self {
            id,
            root_id,
            parent_id: None,
            delegation_id: None,
            kind,
            agent,
            action,
            prompt,
            repo: None,
            state: JobState::Queued,
            attempt: 1,
            depth: 0,
            model: None,
            effort: None,
            phase: None,
            timeout_ms: None,
            fingerprint: None,
            retries_left: 0,
            ephemeral: None,
            result: None,
            raw_output: None,
            output_truncated: false,
            error: None,
            tokens_in: 0,
            tokens_out: 0,
            cost_usd: 0.0,
            dispatched_by: String::new(),
            runtime_pid: None,
            worktree: None,
            followup: FollowUp::None,
            followup_reason: None,
            continuation_id: None,
            carry: None,
            created_ms: now,
            started_ms: None,
            finished_ms: None,
            updated_ms: now,
            daemon_id: None,
            on_label: None,
        }
    }

    pub fn tokens(&self) -> u64 {
        self.tokens_in + self.tokens_out
    }
}

pub(crate) const COLS: &str = "id, root_id, parent_id, delegation_id, kind, agent, action, prompt, repo, state, \
    attempt, depth, model, effort, phase, timeout_ms, fingerprint, retries_left, ephemeral, result, raw_output, \
    output_truncated, error, tokens_in, tokens_out, cost_usd, dispatched_by, runtime_pid, worktree, followup, \
    followup_reason, continuation_id, carry, created_ms, started_ms, finished_ms, updated_ms, daemon_id, on_label";

/// A job row that cannot be decoded (a corrupt column), named so one bad row fails or is
/// skipped alone instead of stopping every read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("job {id} is unreadable: column {column}: {reason}")]
pub struct Unreadable {
    pub id: String,
    pub column: String,
    pub reason: String,
}

/// The unreadable row behind `e`, when that is what it is.
pub fn unreadable(e: &StoreError) -> Option<&Unreadable> {
    match e {
        StoreError::Unreadable(u) => Some(u),
        _ => None,
    }
}

/// Decodes one row; a failure names the job and the column.
pub(crate) fn from_row(r: &Row<'_>) -> Result<Job> {
    decode_row(r).map_err(|e| match e {
        StoreError::Column { index, reason } => StoreError::Unreadable(Unreadable {
            id: r.get::<String>(0).unwrap_or_default(),
            column: COLS.split(", ").nth(index).unwrap_or("?").to_string(),
            reason,
        }),
        other => other,
    })
}

/// Marks an undecodable job failed with the decode error, keeping the corrupt value in
/// an event: the corrupt JSON column is cleared so the row reads again, and a root's run
/// fails with it. Returns whether the row now decodes (so the engine can settle it).
pub fn quarantine<'a>(tx: impl Into<Tx<'a>>, u: &Unreadable, now: Millis) -> Result<bool> {
    let conn = tx.into();
    let raw: Option<String> = conn
        .query_opt(
            &format!("SELECT CAST({} AS TEXT) FROM jobs WHERE id = ?1", u.column),
            params![u.id],
            |r| r.get(0),
        )?
        .flatten();
    let reason = format!("quarantined: {u}");
    conn.execute(
        "UPDATE jobs SET
            ephemeral = CASE WHEN json_valid(ephemeral) THEN ephemeral END,
            result = CASE WHEN json_valid(result) THEN result END,
            carry = CASE WHEN json_valid(carry) THEN carry END,
            state = CASE WHEN state IN ('queued', 'running', 'succeeded', 'failed', 'blocked', 'cancelled')
                THEN state ELSE 'failed' END,
            error = ?2, updated_ms = ?3
         WHERE id = ?1",
        params![u.id, reason, now],
    )?;
    let root: Option<String> = conn.query_opt(
        "SELECT root_id FROM jobs WHERE id = ?1",
        params![u.id],
        |r| r.get(0),
    )?;
    super::events::append(
        conn,
        super::events::NewEvent {
            ts_ms: now,
            root_id: root.as_deref(),
            job_id: Some(&u.id),
            kind: crate::domain::EventKind::JobQuarantined,
            message: reason.clone(),
            data: Some(serde_json::json!({"column": u.column, "raw": raw})),
        },
    )?;
    if get(conn, &u.id).is_ok() {
        return Ok(true);
    }
    // Still undecodable (a corrupt kind or action): fail it by hand, and its run if a root.
    conn.execute(
        "UPDATE jobs SET state = 'failed', finished_ms = ?2 WHERE id = ?1",
        params![u.id, now],
    )?;
    conn.execute(
        "UPDATE runs SET state = 'failed', finished_ms = ?2, updated_ms = ?2
         WHERE root_id = ?1 AND root_id IN (SELECT root_id FROM jobs WHERE id = ?1 AND root_id = id)",
        params![u.id, now],
    )?;
    Ok(false)
}

fn decode_row(r: &Row<'_>) -> Result<Job> {
    let json = |i: usize| r.json::<Value>(i);
    Ok(Job {
        id: r.get(0)?,
        root_id: r.get(1)?,
        parent_id: r.get(2)?,
        delegation_id: r.get(3)?,
        kind: r.get(4)?,
        agent: r.get(5)?,
        action: r.get(6)?,
        prompt: r.get(7)?,
        repo: r.get(8)?,
        state: r.get(9)?,
        attempt: r.get(10)?,
        depth: r.get(11)?,
        model: r.get(12)?,
        effort: r.get(13)?,
        phase: r.get(14)?,
        timeout_ms: r.get(15)?,
        fingerprint: r.get(16)?,
        retries_left: r.get(17)?,
        ephemeral: json(18)?,
        result: json(19)?,
        raw_output: r.get(20)?,
        output_truncated: r.get(21)?,
        error: r.get(22)?,
        tokens_in: r.get::<i64>(23)? as u64,
        tokens_out: r.get::<i64>(24)? as u64,
        cost_usd: r.get(25)?,
        dispatched_by: r.get(26)?,
        runtime_pid: r.get(27)?,
        worktree: r.get(28)?,
        followup: FollowUp::parse(&r.get::<String>(29)?),
        followup_reason: r.get(30)?,
        continuation_id: r.get(31)?,
        carry: json(32)?,
        created_ms: r.get(33)?,
        started_ms: r.get(34)?,
        finished_ms: r.get(35)?,
        updated_ms: r.get(36)?,
        daemon_id: r.get(37)?,
        on_label: r.get(38)?,
    })
}

/// Writes the whole row, new or existing; the single write path for job rows. Through
/// `write_changed`, a claim or a settlement touches only the indexes over `state` and
/// `updated_ms` (naming `root_id` or `parent_id` would rewrite all ten, for the
/// self-referencing foreign key).
pub fn put<'a>(tx: impl Into<Tx<'a>>, j: &Job) -> Result<()> {
    with_values(j, |values| super::write_changed(tx, "jobs", COLS, values))
}

/// `put` of `after` over the row the caller read as `before` in this transaction and has
/// not written since (see `write_changes_from`).
pub fn put_over<'a>(tx: impl Into<Tx<'a>>, before: &Job, after: &Job) -> Result<()> {
    with_values(before, |b| {
        with_values(after, |a| super::write_changes_from(tx, "jobs", COLS, b, a))
    })
}

/// The row's values in the order of `COLS`, handed to `f`.
fn with_values<R>(j: &Job, f: impl FnOnce(&[&dyn Param]) -> R) -> R {
    let json = |v: &Option<Value>| v.as_ref().map(Value::to_string);
    let (ephemeral, result, carry) = (json(&j.ephemeral), json(&j.result), json(&j.carry));
    let (tokens_in, tokens_out) = (j.tokens_in as i64, j.tokens_out as i64);
    let followup = j.followup.as_str();
    // In the order of `COLS`.
    let values: [&dyn Param; 39] = [
        &j.id,
        &j.root_id,
        &j.parent_id,
        &j.delegation_id,
        &j.kind,
        &j.agent,
        &j.action,
        &j.prompt,
        &j.repo,
        &j.state,
        &j.attempt,
        &j.depth,
        &j.model,
        &j.effort,
        &j.phase,
        &j.timeout_ms,
        &j.fingerprint,
        &j.retries_left,
        &ephemeral,
        &result,
        &j.raw_output,
        &j.output_truncated,
        &j.error,
        &tokens_in,
        &tokens_out,
        &j.cost_usd,
        &j.dispatched_by,
        &j.runtime_pid,
        &j.worktree,
        &followup,
        &j.followup_reason,
        &j.continuation_id,
        &carry,
        &j.created_ms,
        &j.started_ms,
        &j.finished_ms,
        &j.updated_ms,
        &j.daemon_id,
        &j.on_label,
    ];
    f(&values)
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, id: &str) -> Result<Option<Job>> {
    tx.into().query_opt(
        &format!("SELECT {COLS} FROM jobs WHERE id = ?1"),
        params![id],
        from_row,
    )
}

/// The full job id for `input`: itself when a job has that id, else the one job whose id
/// starts with it (as git and kubectl accept unique prefixes). None matching, or several,
/// is a validation error; an ambiguous prefix lists the candidates.
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
    // A range scan on the primary key: every id that starts with `input` sorts in
    // [input, input + U+10FFFF).
    let upper = format!("{input}{}", char::MAX);
    let ids: Vec<String> = conn.query_map(
        "SELECT id FROM jobs WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 11",
        params![input, upper],
        |r| r.get(0),
    )?;
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

/// The index `job list` pages on when no filter narrows it: newest first by
/// `(created_ms, rowid)`, so a page is an index walk of `limit` entries, never a sort.
/// Indexes no query reads, each rewritten on every claim and settlement (`updated_ms`
/// moves then, and a running job enters and leaves `jobs_running`): `jobs_state` serves
/// every lookup of running jobs, and nothing orders jobs or runs by `updated_ms`.
pub(super) const UNREAD_INDEXES: &str = "
DROP INDEX jobs_updated;
DROP INDEX jobs_running;
DROP INDEX runs_updated;
";

pub(super) const LIST_INDEX: &str = "CREATE INDEX jobs_created ON jobs(created_ms);";

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
