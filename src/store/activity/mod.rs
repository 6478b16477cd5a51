//! The `activity` log of running agents (one row per step: job, seq, at, kind, summary,
//! detail) and `job_activity`, one row per job with its record count and bytes against the
//! cap, its newest step, its running usage while it runs and its cache-token figures.
//!
//! Owns appending in batches under the per-job caps and the reads behind `job logs`,
//! `job show` and the control room. Holds no parsing: records arrive already summarized.
//! Kept apart from `jobs` so the job row's single write path stays untouched.

use super::row::row_columns;
use super::tx::{Param, Tx, params};
use serde::Serialize;

use super::Result;
use crate::clock::Millis;

/// Records kept per job; past it one `truncated` record is written and the rest dropped.
pub const MAX_RECORDS: u64 = 5_000;
/// Bytes (summaries plus details) kept per job, likewise.
pub(crate) const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// One step to append.
#[derive(Debug, Clone, Copy)]
pub struct NewActivity<'a> {
    pub kind: &'a str,
    pub summary: &'a str,
    pub detail: Option<&'a str>,
}

/// One stored step, in the shape `job logs --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    #[serde(rename = "job")]
    pub job_id: String,
    pub seq: u64,
    #[serde(rename = "at")]
    pub at_ms: Millis,
    pub kind: String,
    pub summary: String,
    pub detail: Option<String>,
}

/// A running job's usage as its stream has reported it, not yet settled.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveSpend {
    /// Input plus output tokens.
    pub tokens: u64,
    pub cost_usd: f64,
}

/// A job's activity figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobActivity {
    pub records: u64,
    pub truncated: bool,
    pub last_kind: Option<String>,
    pub last_summary: Option<String>,
    pub running: bool,
    pub live: LiveSpend,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
}

/// What an append did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Appended {
    pub stored: u64,
    pub dropped: u64,
}

/// What a batch leaves the job's live row saying.
#[derive(Debug, Clone, Copy)]
pub enum Then {
    /// The job runs on, having spent this so far.
    Running(LiveSpend),
    /// The batch was the job's last: its live spend now lives in the settled job and run
    /// rows, and its cache-token figures are final (what `finish` writes, in the same
    /// statement).
    Finished {
        cache_read_tokens: u64,
        cache_creation_tokens: u64,
    },
}

/// One job's batch for `append_all`.
#[derive(Debug, Clone, Copy)]
pub struct JobBatch<'b> {
    pub job_id: &'b str,
    pub root_id: &'b str,
    pub batch: &'b [NewActivity<'b>],
    pub then: Then,
}

/// Appends `batch` for `job_id` within its caps and updates its live row as `then` says.
/// One call is one batch; the caller holds the transaction.
pub fn append<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
    root_id: &str,
    now: Millis,
    batch: &[NewActivity<'_>],
    then: Then,
) -> Result<Appended> {
    let job = JobBatch {
        job_id,
        root_id,
        batch,
        then,
    };
    Ok(append_all(tx, now, &[job], None)?.remove(0))
}

/// `append` for many jobs' batches at once, in the caller's transaction: each job's caps and
/// live row as `append` keeps them, and every job's records in the fewest statements.
///
/// `stored`, when given, receives each record as stored (job by job, in seq order), as
/// `stalls::newest_records` would read it back: the daemon's stall watch keeps those
/// rather than reading every streamed record again.
pub fn append_all<'a>(
    tx: impl Into<Tx<'a>>,
    now: Millis,
    jobs: &[JobBatch<'_>],
    stored: Option<&mut Vec<Record>>,
) -> Result<Vec<Appended>> {
    let conn = tx.into();
    let mut rows = Vec::new();
    let mut out = Vec::with_capacity(jobs.len());
    for job in jobs {
        let (done, tally) = plan(&conn, job, &mut rows)?;
        upsert_live(&conn, job, now, &tally)?;
        out.push(done);
    }
    insert_rows(&conn, now, &rows)?;
    if let Some(stored) = stored {
        stored.extend(rows.iter().map(|(job_id, seq, a)| Record {
            job_id: job_id.to_string(),
            seq: *seq,
            at_ms: now,
            kind: a.kind.to_string(),
            summary: a.summary.to_string(),
            detail: None,
        }));
    }
    Ok(out)
}

/// One stored step waiting for its statement: (job, seq, step).
type Row<'b> = (&'b str, u64, NewActivity<'b>);

/// A job's live row after its batch: its totals and the newest record kept.
struct Tally<'b> {
    records: u64,
    bytes: u64,
    truncated: bool,
    last: Option<NewActivity<'b>>,
}

/// Which of `job`'s records fit its caps (and the one `truncated` note when they stop
/// fitting), pushed onto `rows` with their seqs; returns the counts and the live row.
fn plan<'b>(
    conn: &Tx<'_>,
    job: &JobBatch<'b>,
    rows: &mut Vec<Row<'b>>,
) -> Result<(Appended, Tally<'b>)> {
    let (mut records, mut bytes, mut truncated): (u64, u64, bool) = conn
        .query_opt(
            "SELECT records, bytes, truncated FROM job_activity WHERE job_id = ?1",
            params![job.job_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?
        .unwrap_or((0, 0, false));
    let mut done = Appended::default();
    let mut last = None;
    for a in job.batch {
        let size = (a.summary.len() + a.detail.map_or(0, str::len)) as u64;
        if truncated || records + 1 >= MAX_RECORDS || bytes + size > MAX_BYTES {
            if !truncated {
                truncated = true;
                let note = NewActivity {
                    kind: "truncated",
                    summary: "activity cap reached; later steps are not stored",
                    detail: None,
                };
                rows.push((job.job_id, records, note));
                records += 1;
                last = Some(note);
            }
            done.dropped += 1;
            continue;
        }
        rows.push((job.job_id, records, *a));
        records += 1;
        bytes += size;
        done.stored += 1;
        last = Some(*a);
    }
    let tally = Tally {
        records,
        bytes,
        truncated,
        last,
    };
    Ok((done, tally))
}

/// Writes `job`'s live row (`job_activity`) after its batch, as its `then` says.
fn upsert_live(conn: &Tx<'_>, job: &JobBatch<'_>, now: Millis, tally: &Tally<'_>) -> Result<()> {
    let (job_id, root_id, then) = (job.job_id, job.root_id, job.then);
    let Tally {
        records,
        bytes,
        truncated,
        last,
    } = *tally;
    // The existing row's columns are named by table: PostgreSQL reads a bare name in an
    // upsert's SET as ambiguous with `excluded`.
    let (sql, a, b): (&str, &dyn Param, &dyn Param) = match &then {
        Then::Running(live) => (
            "INSERT INTO job_activity(job_id, root_id, records, bytes, truncated, last_kind, last_summary, \
             last_at_ms, running, live_tokens, live_cost_usd, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?10, ?8)
             ON CONFLICT(job_id) DO UPDATE SET records = ?3, bytes = ?4, truncated = ?5,
                 last_kind = coalesce(?6, job_activity.last_kind),
                 last_summary = coalesce(?7, job_activity.last_summary),
                 last_at_ms = CASE WHEN ?6 IS NULL THEN job_activity.last_at_ms ELSE ?8 END, running = 1,
                 live_tokens = max(job_activity.live_tokens, ?9),
                 live_cost_usd = max(job_activity.live_cost_usd, ?10),
                 updated_ms = ?8",
            &live.tokens,
            &live.cost_usd,
        ),
        Then::Finished {
            cache_read_tokens,
            cache_creation_tokens,
        } => (
            "INSERT INTO job_activity(job_id, root_id, records, bytes, truncated, last_kind, last_summary, \
             last_at_ms, running, live_tokens, live_cost_usd, cache_read_tokens, cache_creation_tokens, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, 0, 0, ?9, ?10, ?8)
             ON CONFLICT(job_id) DO UPDATE SET records = ?3, bytes = ?4, truncated = ?5,
                 last_kind = coalesce(?6, job_activity.last_kind),
                 last_summary = coalesce(?7, job_activity.last_summary),
                 last_at_ms = CASE WHEN ?6 IS NULL THEN job_activity.last_at_ms ELSE ?8 END, running = 0,
                 live_tokens = 0, live_cost_usd = 0,
                 cache_read_tokens = ?9, cache_creation_tokens = ?10,
                 updated_ms = ?8",
            cache_read_tokens,
            cache_creation_tokens,
        ),
    };
    conn.execute(
        sql,
        params![
            job_id,
            root_id,
            records,
            bytes,
            truncated,
            last.map(|l| l.kind),
            last.map(|l| l.summary),
            now,
            a,
            b
        ],
    )?;
    Ok(())
}

/// Rows one statement inserts at most: a fleet of a hundred agents' lines of a second. A
/// prepared statement this long holds about half a megabyte, and the daemon keeps one per
/// power of two (at 200 agents its peak RSS is 73 MB against 59 with statements of 32
/// rows; 84 with 4096).
const ROWS_PER_INSERT: usize = 1024;
/// Text (summaries and details) one statement inserts at most, past its first row: SQLite
/// holds a copy of every bound text and FTS5 the terms of the whole statement until it
/// ends, so a batch of large records is split rather than held twice at once.
const BYTES_PER_INSERT: usize = 256 * 1024;

/// `rows` cut into the statements that insert them: up to `ROWS_PER_INSERT` rows and
/// `BYTES_PER_INSERT` bytes each.
fn statements<'r, 'b>(mut rows: &'r [Row<'b>]) -> impl Iterator<Item = &'r [Row<'b>]> {
    std::iter::from_fn(move || {
        let mut bytes = 0;
        let take = rows
            .iter()
            .take(ROWS_PER_INSERT)
            .position(|(_, _, a)| {
                bytes += a.summary.len() + a.detail.map_or(0, str::len);
                bytes > BYTES_PER_INSERT
            })
            .map_or(rows.len().min(ROWS_PER_INSERT), |i| i.max(1));
        let (chunk, rest) = rows.split_at(take);
        rows = rest;
        (!chunk.is_empty()).then_some(chunk)
    })
}

/// Inserts `rows` at `now`, a writer's whole batch in one statement where `statements`
/// allows.
///
/// Every statement writing `activity` also writes the search index, and SQLite's FTS5
/// flushes its pending terms at each statement's end into a segment of its own, which it
/// later merges with the others: one statement per batch writes the index once. So that
/// batches of every size share a few statement texts, each prepared once, a statement's
/// rows are padded with NULL rows to a power of two, which it skips. (200 jobs' lines a
/// second, against statements of 32 rows: 14 % fewer instructions per record stored,
/// 47.3k against 55.0k, counted with cachegrind; one unpadded statement per batch, its
/// text new at almost every flush: 50.9k.)
fn insert_rows(conn: &Tx<'_>, now: Millis, rows: &[Row<'_>]) -> Result<()> {
    const PAD: Option<&str> = None;
    for chunk in statements(rows) {
        let size = chunk.len().next_power_of_two();
        let mut params: Vec<&dyn Param> = Vec::with_capacity(1 + 5 * size);
        params.push(&now);
        for (job_id, seq, a) in chunk {
            params.extend([job_id as &dyn Param, seq, &a.kind, &a.summary, &a.detail]);
        }
        params.resize(1 + 5 * size, &PAD);
        conn.execute(insert_sql(size), &params)?;
    }
    Ok(())
}

/// The statement inserting `size` rows, a power of two up to `ROWS_PER_INSERT`; each text
/// is built once per process rather than at every flush.
fn insert_sql(size: usize) -> &'static str {
    static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let texts = TEXTS.get_or_init(|| {
        (0..=ROWS_PER_INSERT.ilog2())
            .map(|k| {
                // The casts give PostgreSQL the types it would otherwise take from the
                // columns.
                let values: Vec<String> = (0..1usize << k)
                    .map(|i| {
                        let p = 5 * i + 2;
                        format!(
                            "(?{p}, CAST(?{} AS BIGINT), ?{}, ?{}, ?{})",
                            p + 1,
                            p + 2,
                            p + 3,
                            p + 4
                        )
                    })
                    .collect();
                format!(
                    "INSERT INTO activity(job_id, seq, at_ms, kind, summary, detail)
                     SELECT column1, column2, CAST(?1 AS BIGINT), column3, column4, column5
                     FROM (VALUES {}) AS v WHERE column1 IS NOT NULL",
                    values.join(", ")
                )
            })
            .collect()
    });
    &texts[size.ilog2() as usize]
}

/// The job stopped running: its live spend now lives in the settled job and run rows, and
/// its cache-token figures are final.
pub fn finish<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
    root_id: &str,
    now: Millis,
    cache_read_tokens: u64,
    cache_creation_tokens: u64,
) -> Result<()> {
    tx.into().execute(
        "INSERT INTO job_activity(job_id, root_id, cache_read_tokens, cache_creation_tokens, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(job_id) DO UPDATE SET running = 0, live_tokens = 0, live_cost_usd = 0,
             cache_read_tokens = ?3, cache_creation_tokens = ?4, updated_ms = ?5",
        params![
            job_id,
            root_id,
            cache_read_tokens,
            cache_creation_tokens,
            now
        ],
    )?;
    Ok(())
}

/// The unsettled spend of a root's running jobs, `except` one of them.
pub(crate) fn live_root_spend<'a>(
    tx: impl Into<Tx<'a>>,
    root_id: &str,
    except: &str,
) -> Result<LiveSpend> {
    tx.into().query_row(
        "SELECT coalesce(sum(live_tokens), 0), coalesce(sum(live_cost_usd), 0) FROM job_activity
         WHERE root_id = ?1 AND running = 1 AND job_id != ?2",
        params![root_id, except],
        |r| {
            Ok(LiveSpend {
                tokens: r.get(0)?,
                cost_usd: r.get(1)?,
            })
        },
    )
}

/// Unsettled spend of every running job, per root.
pub(crate) fn live_spend_by_root<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<(String, LiveSpend)>> {
    tx.into().query_map(
        "SELECT root_id, sum(live_tokens), sum(live_cost_usd) FROM job_activity
         WHERE running = 1 GROUP BY root_id",
        params![],
        |r| {
            Ok((
                r.get(0)?,
                LiveSpend {
                    tokens: r.get(1)?,
                    cost_usd: r.get(2)?,
                },
            ))
        },
    )
}

/// A job's figures; `None` when it never streamed anything and has not settled.
pub fn of_job<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Option<JobActivity>> {
    tx.into().query_opt(
        "SELECT records, truncated, last_kind, last_summary, running, live_tokens, live_cost_usd,
                cache_read_tokens, cache_creation_tokens
         FROM job_activity WHERE job_id = ?1",
        params![job_id],
        |r| {
            Ok(JobActivity {
                records: r.get(0)?,
                truncated: r.get(1)?,
                last_kind: r.get(2)?,
                last_summary: r.get(3)?,
                running: r.get(4)?,
                live: LiveSpend {
                    tokens: r.get(5)?,
                    cost_usd: r.get(6)?,
                },
                cache_read_tokens: r.get(7)?,
                cache_creation_tokens: r.get(8)?,
            })
        },
    )
}

/// One job's newest step as the control room's incremental read sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Latest {
    pub job_id: String,
    pub summary: Option<String>,
    pub running: bool,
    pub updated_ms: Millis,
}

/// The newest step of every job whose activity changed at or after `since_ms`.
pub(crate) fn latest_changed_since<'a>(
    tx: impl Into<Tx<'a>>,
    since_ms: Millis,
) -> Result<Vec<Latest>> {
    tx.into().query_map(
        "SELECT job_id, last_summary, running, updated_ms FROM job_activity WHERE updated_ms >= ?1",
        params![since_ms],
        latest_row,
    )
}

row_columns! {
    fn latest_row -> Latest {
        job_id,
        summary,
        running,
        updated_ms,
    }
}

/// The newest step of every running job, and the newest change time of any job (the
/// cursor for `latest_changed_since`).
pub(crate) fn latest_running<'a>(tx: impl Into<Tx<'a>>) -> Result<(Vec<(String, String)>, Millis)> {
    let tx = tx.into();
    let rows = tx.query_map(
        "SELECT job_id, last_summary FROM job_activity WHERE running = 1 AND last_summary IS NOT NULL",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let newest: Millis = tx.one(
        "SELECT coalesce(max(updated_ms), 0) FROM job_activity",
        params![],
    )?;
    Ok((rows, newest))
}

/// Up to `limit` steps of `job_id` with `seq >= from`, oldest first.
pub fn list<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
    from: u64,
    limit: usize,
) -> Result<Vec<Record>> {
    tx.into().query_map(
        &format!(
            "SELECT {RECORD_COLS} FROM activity WHERE job_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3"
        ),
        params![job_id, from, limit],
        record,
    )
}

/// The newest step of `job_id`.
pub fn last<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Option<Record>> {
    tx.into().query_opt(
        &format!("SELECT {RECORD_COLS} FROM activity WHERE job_id = ?1 ORDER BY seq DESC LIMIT 1"),
        params![job_id],
        record,
    )
}

row_columns! {
    const RECORD_COLS;
    /// One `activity` row, selected as `RECORD_COLS`.
    pub(crate) fn record -> Record {
        job_id,
        seq,
        at_ms,
        kind,
        summary,
        detail,
    }
}

#[cfg(test)]
mod tests;
