//! What the fleet spent: `gitmoot usage` and the control room's Usage view add the jobs
//! created since a time up by root, agent, model, repo or UTC day: job counts, tokens
//! (input, output, cache read, cache write), dollars and wall time, with each root's own
//! totals (what its budget bounds read) beside its group.
//!
//! Settled figures: a running job counts its wall time so far but its tokens only once it
//! settles (its live spend is `activity::live_spend_by_root`'s). By day and by agent, and
//! for the daily caps and the hourly spend, whole hours are read from the maintained rollup
//! (`usage_hours`, kept by the schema's triggers): a row per hour and agent however long
//! the history. By root, model or repo the range is a walk of `jobs_created`, cache tokens
//! from each job's `job_activity` row by its key.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Result;
use super::row::counter;
use super::tx::{Row, Tx, params};
use crate::clock::{DAY_MS, HOUR_MS, Millis, utc_date};
use crate::domain::UsageBy;

/// Tokens by kind. Cache tokens are reported apart from input by the runtimes that name
/// them (Claude Code); a runtime that reports no usage adds zeros.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// The figures of one group, or of all of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    pub jobs: u64,
    pub tokens: Tokens,
    pub cost_usd: f64,
    /// Started to finished (to now for a running job), summed over the jobs.
    pub wall_ms: i64,
}

impl Figures {
    fn add(&mut self, o: &Figures) {
        self.jobs += o.jobs;
        self.tokens.input += o.tokens.input;
        self.tokens.output += o.tokens.output;
        self.tokens.cache_read += o.tokens.cache_read;
        self.tokens.cache_write += o.tokens.cache_write;
        self.cost_usd += o.cost_usd;
        self.wall_ms += o.wall_ms;
    }
}

/// A root's own totals as its run row keeps them: what its token and dollar bounds read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RootTotals {
    pub title: String,
    pub tokens: u64,
    pub cost_usd: f64,
}

/// One group: its key (a root id, agent, model, repo, or `YYYY-MM-DD`; `""` for jobs
/// without a model or repo) and its figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub key: String,
    #[serde(flatten)]
    pub figures: Figures,
    /// Grouped by root only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<RootTotals>,
}

/// Every group, most dollars first (days in order), and their total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    pub by: UsageBy,
    pub since_ms: Millis,
    pub groups: Vec<Group>,
    pub total: Figures,
}

/// The jobs created at or after `since_ms`, grouped `by`; `now` ends running jobs' wall time.
/// By day and by agent, whole hours are read from the rollup (`usage_hours`); by root,
/// model or repo, from the jobs.
pub fn usage<'a>(
    tx: impl Into<Tx<'a>>,
    by: UsageBy,
    since_ms: Millis,
    now: Millis,
) -> Result<Usage> {
    let tx = tx.into();
    let groups = match by {
        UsageBy::Day | UsageBy::Agent => rolled_up(tx, by, since_ms, now)?,
        UsageBy::Root | UsageBy::Model | UsageBy::Repo => direct(tx, by, since_ms, None, now)?,
    };
    let mut total = Figures::default();
    for g in &groups {
        total.add(&g.figures);
    }
    Ok(Usage {
        by,
        since_ms,
        groups,
        total,
    })
}

/// The groups of the jobs created in `[since_ms, until)` (to the end without `until`), read
/// from the jobs and their activity rows.
fn direct(
    tx: Tx<'_>,
    by: UsageBy,
    since_ms: Millis,
    until: Option<Millis>,
    now: Millis,
) -> Result<Vec<Group>> {
    let key = match by {
        UsageBy::Root => "j.root_id",
        UsageBy::Agent => "j.agent",
        UsageBy::Model => "coalesce(j.model, '')",
        UsageBy::Repo => "coalesce(j.repo, '')",
        UsageBy::Day => DAY_OF_JOB,
    };
    let (run_cols, run_join) = match by {
        UsageBy::Root => (
            "max(r.title), CAST(max(r.tokens) AS BIGINT), max(r.cost_usd)",
            "LEFT JOIN runs r ON r.root_id = j.root_id",
        ),
        _ => ("NULL, NULL, NULL", ""),
    };
    let order = match by {
        UsageBy::Day => "ORDER BY 1",
        _ => "ORDER BY 7 DESC, 1",
    };
    let bound = if until.is_some() {
        "AND j.created_ms < ?3"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {key}, COUNT(*), CAST(sum(j.tokens_in) AS BIGINT), CAST(sum(j.tokens_out) AS BIGINT),
             CAST(coalesce(sum(a.cache_read_tokens), 0) AS BIGINT),
             CAST(coalesce(sum(a.cache_creation_tokens), 0) AS BIGINT), sum(j.cost_usd),
             CAST(sum(CASE WHEN j.started_ms IS NULL THEN 0
                      ELSE coalesce(j.finished_ms, ?2) - j.started_ms END) AS BIGINT),
             {run_cols}
         FROM jobs j LEFT JOIN job_activity a ON a.job_id = j.id {run_join}
         WHERE j.created_ms >= ?1 {bound}
         GROUP BY 1 {order}"
    );
    match until {
        Some(until) => tx.query_map(&sql, params![since_ms, now, until], |r| group(r, by)),
        None => tx.query_map(&sql, params![since_ms, now], |r| group(r, by)),
    }
}

/// A job's UTC day as its group key (days since the epoch, as text).
const DAY_OF_JOB: &str = "CAST(j.created_ms / 86400000 AS TEXT)";

/// The groups by day or agent: the whole hours from `usage_hours`, a leading part hour
/// (`since_ms` not on the hour) from the jobs, and the wall time so far of the jobs still
/// running, which the rollup counts only once they finish. The same figures as `direct`.
fn rolled_up(tx: Tx<'_>, by: UsageBy, since_ms: Millis, now: Millis) -> Result<Vec<Group>> {
    let from = next_hour(since_ms);
    let mut groups = BTreeMap::<String, Group>::new();
    let mut merge = |g: Group| match groups.get_mut(&g.key) {
        Some(have) => have.figures.add(&g.figures),
        None => {
            groups.insert(g.key.clone(), g);
        }
    };
    if from > since_ms {
        direct(tx, by, since_ms, Some(from), now)?
            .into_iter()
            .for_each(&mut merge);
    }
    let (rolled_key, job_key) = match by {
        UsageBy::Day => ("CAST(hour_ms / 86400000 AS TEXT)", DAY_OF_JOB),
        _ => ("agent", "j.agent"),
    };
    let rolled = format!(
        "SELECT {rolled_key}, CAST(sum(jobs) AS BIGINT), CAST(sum(tokens_in) AS BIGINT),
             CAST(sum(tokens_out) AS BIGINT), CAST(sum(cache_read) AS BIGINT),
             CAST(sum(cache_write) AS BIGINT), sum(cost_usd), CAST(sum(wall_ms) AS BIGINT),
             NULL, NULL, NULL
         FROM usage_hours WHERE hour_ms >= ?1 GROUP BY 1 HAVING sum(jobs) <> 0"
    );
    tx.query_map(&rolled, params![from], |r| group(r, by))?
        .into_iter()
        .for_each(&mut merge);
    // Served by the partial index of the started, unfinished jobs: a few rows.
    let running = format!(
        "SELECT {job_key}, CAST(sum(?2 - j.started_ms) AS BIGINT)
         FROM jobs j INDEXED BY jobs_unfinished
         WHERE j.started_ms IS NOT NULL AND j.finished_ms IS NULL AND j.created_ms >= ?1
         GROUP BY 1"
    );
    let walls = tx.query_map(&running, params![from, now], |r| {
        Ok((key_of(r.get(0)?, by), r.get::<i64>(1)?))
    })?;
    for (key, wall_ms) in walls {
        merge(Group {
            key,
            figures: Figures {
                wall_ms,
                ..Figures::default()
            },
            root: None,
        });
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    // Days in order (the map's); agents most dollars first, ties by name.
    if by != UsageBy::Day {
        groups.sort_by(|a, b| {
            b.figures
                .cost_usd
                .total_cmp(&a.figures.cost_usd)
                .then_with(|| a.key.cmp(&b.key))
        });
    }
    Ok(groups)
}

/// Brings the rollup up to this transaction's own settlements, which on PostgreSQL reach it
/// only as the transaction commits (`schema::rollups::USAGE_JOBS_DEFERRED`), for a read of
/// it later in the same transaction: the claim's daily caps after the pass's settlements.
/// From here on the row stays locked until the commit. Nothing to do on SQLite.
pub fn rollup_now<'a>(tx: impl Into<Tx<'a>>) -> Result<()> {
    let tx = tx.into();
    if tx.backend() == super::Backend::Postgres {
        tx.batch("SET CONSTRAINTS usage_hours_jobs_delta IMMEDIATE")?;
    }
    Ok(())
}

/// The first hour boundary at or after `ms`.
fn next_hour(ms: Millis) -> Millis {
    (ms + HOUR_MS - 1).div_euclid(HOUR_MS) * HOUR_MS
}

/// A group's key as shown: a day's number as its date.
fn key_of(raw: String, by: UsageBy) -> String {
    match by {
        UsageBy::Day => utc_date(raw.parse::<Millis>().unwrap_or_default() * DAY_MS),
        _ => raw,
    }
}

fn group(r: &Row<'_>, by: UsageBy) -> Result<Group> {
    let key = key_of(r.get(0)?, by);
    let root = match r.get::<Option<String>>(8)? {
        Some(title) => Some(RootTotals {
            title,
            tokens: counter(r, 9)?,
            cost_usd: r.get(10)?,
        }),
        None => None,
    };
    Ok(Group {
        key,
        figures: Figures {
            jobs: counter(r, 1)?,
            tokens: Tokens {
                input: counter(r, 2)?,
                output: counter(r, 3)?,
                cache_read: counter(r, 4)?,
                cache_write: counter(r, 5)?,
            },
            cost_usd: r.get(6)?,
            wall_ms: r.get(7)?,
        },
        root,
    })
}

/// Dollars settled by the jobs created at or after `since_ms` (of `agent` alone, when
/// named): what the daily caps weigh. The rollup's hours since then, and the jobs of a
/// leading part hour.
pub fn spent_since<'a>(
    tx: impl Into<Tx<'a>>,
    agent: Option<&str>,
    since_ms: Millis,
) -> Result<f64> {
    let tx = tx.into();
    let from = next_hour(since_ms);
    let rolled: f64 = match agent {
        Some(agent) => tx.one(
            "SELECT coalesce(sum(cost_usd), 0) FROM usage_hours WHERE hour_ms >= ?1 AND agent = ?2",
            params![from, agent],
        )?,
        None => tx.one(
            "SELECT coalesce(sum(cost_usd), 0) FROM usage_hours WHERE hour_ms >= ?1",
            params![from],
        )?,
    };
    Ok(rolled + spent_between(tx, agent, since_ms, from)?)
}

/// Dollars settled by the jobs created in `[since_ms, until)` (of `agent` alone): a part
/// hour the rollup cannot split, read from the jobs.
fn spent_between(tx: Tx<'_>, agent: Option<&str>, since_ms: Millis, until: Millis) -> Result<f64> {
    if until <= since_ms {
        return Ok(0.0);
    }
    match agent {
        Some(agent) => tx.one(
            "SELECT coalesce(sum(cost_usd), 0) FROM jobs
             WHERE agent = ?1 AND created_ms >= ?2 AND created_ms < ?3",
            params![agent, since_ms, until],
        ),
        None => tx.one(
            "SELECT coalesce(sum(cost_usd), 0) FROM jobs WHERE created_ms >= ?1 AND created_ms < ?2",
            params![since_ms, until],
        ),
    }
}

/// Dollars settled per UTC hour from the hour holding `since_ms` to the one holding `now`,
/// oldest first, one entry (its hour's start) per hour, idle hours as zero: the Usage
/// view's sparkline. The first hour counts only the jobs created from `since_ms` on, so the
/// entries add up to `spent_since`; the caller bounds the span (one entry per hour).
pub fn spend_by_hour<'a>(
    tx: impl Into<Tx<'a>>,
    since_ms: Millis,
    now: Millis,
) -> Result<Vec<(Millis, f64)>> {
    let tx = tx.into();
    let first = since_ms.div_euclid(HOUR_MS) * HOUR_MS;
    if now < since_ms {
        return Ok(Vec::new());
    }
    let from = next_hour(since_ms);
    let rows: Vec<(Millis, f64)> = tx.query_map(
        "SELECT hour_ms, sum(cost_usd) FROM usage_hours WHERE hour_ms >= ?1 AND hour_ms <= ?2
         GROUP BY hour_ms",
        params![from, now],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut spend: BTreeMap<Millis, f64> = rows.into_iter().collect();
    if from > since_ms {
        spend.insert(first, spent_between(tx, None, since_ms, from)?);
    }
    let hours = (now.div_euclid(HOUR_MS) * HOUR_MS - first) / HOUR_MS + 1;
    Ok((0..hours)
        .map(|n| {
            let hour = first + n * HOUR_MS;
            (hour, spend.get(&hour).copied().unwrap_or(0.0))
        })
        .collect())
}

/// How many jobs wait queued, per agent.
pub fn queued_by_agent<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<(String, u64)>> {
    tx.into().query_map(
        "SELECT agent, COUNT(*) FROM jobs WHERE state = 'queued' GROUP BY agent",
        params![],
        |r| Ok((r.get(0)?, counter(r, 1)?)),
    )
}
