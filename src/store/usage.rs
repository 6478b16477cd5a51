//! What the fleet spent: `gitmoot usage` and the control room's Usage view add the jobs
//! created since a time up by root, agent, model, repo or UTC day: job counts, tokens
//! (input, output, cache read, cache write), dollars and wall time, with each root's own
//! totals (what its budget bounds read) beside its group.
//!
//! Settled figures: a running job counts its wall time so far but its tokens only once it
//! settles (its live spend is `activity::live_spend_by_root`'s). The range is a walk of
//! `jobs_created`; cache tokens come from each job's `job_activity` row by its key.

use serde::Serialize;

use super::Result;
use super::row::counter;
use super::tx::{Row, Tx, params};
use crate::clock::{DAY_MS, Millis, utc_date};
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
pub fn usage<'a>(
    tx: impl Into<Tx<'a>>,
    by: UsageBy,
    since_ms: Millis,
    now: Millis,
) -> Result<Usage> {
    let tx = tx.into();
    let key = match by {
        UsageBy::Root => "j.root_id",
        UsageBy::Agent => "j.agent",
        UsageBy::Model => "coalesce(j.model, '')",
        UsageBy::Repo => "coalesce(j.repo, '')",
        UsageBy::Day => "CAST(j.created_ms / 86400000 AS TEXT)",
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
    let sql = format!(
        "SELECT {key}, COUNT(*), CAST(sum(j.tokens_in) AS BIGINT), CAST(sum(j.tokens_out) AS BIGINT),
             CAST(coalesce(sum(a.cache_read_tokens), 0) AS BIGINT),
             CAST(coalesce(sum(a.cache_creation_tokens), 0) AS BIGINT), sum(j.cost_usd),
             CAST(sum(CASE WHEN j.started_ms IS NULL THEN 0
                      ELSE coalesce(j.finished_ms, ?2) - j.started_ms END) AS BIGINT),
             {run_cols}
         FROM jobs j LEFT JOIN job_activity a ON a.job_id = j.id {run_join}
         WHERE j.created_ms >= ?1
         GROUP BY 1 {order}"
    );
    let groups = tx.query_map(&sql, params![since_ms, now], |r| group(r, by))?;
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

fn group(r: &Row<'_>, by: UsageBy) -> Result<Group> {
    let key: String = r.get(0)?;
    let key = match by {
        UsageBy::Day => utc_date(key.parse::<Millis>().unwrap_or_default() * DAY_MS),
        _ => key,
    };
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
/// named): what the daily caps weigh. A walk of `jobs_agent` or `jobs_created`.
pub fn spent_since<'a>(
    tx: impl Into<Tx<'a>>,
    agent: Option<&str>,
    since_ms: Millis,
) -> Result<f64> {
    let tx = tx.into();
    match agent {
        Some(agent) => tx.one(
            "SELECT coalesce(sum(cost_usd), 0) FROM jobs WHERE agent = ?1 AND created_ms >= ?2",
            params![agent, since_ms],
        ),
        None => tx.one(
            "SELECT coalesce(sum(cost_usd), 0) FROM jobs WHERE created_ms >= ?1",
            params![since_ms],
        ),
    }
}

/// How many jobs wait queued, per agent.
pub fn queued_by_agent<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<(String, u64)>> {
    tx.into().query_map(
        "SELECT agent, COUNT(*) FROM jobs WHERE state = 'queued' GROUP BY agent",
        params![],
        |r| Ok((r.get(0)?, counter(r, 1)?)),
    )
}

/// Dollars settled per UTC hour by the jobs created in `[since_ms, now]`, one entry per
/// hour from `since_ms`'s hour to `now`'s (zeros included), oldest first.
pub fn spend_by_hour<'a>(
    tx: impl Into<Tx<'a>>,
    since_ms: Millis,
    now: Millis,
) -> Result<Vec<(Millis, f64)>> {
    const HOUR_MS: Millis = 3_600_000;
    let first = since_ms - since_ms.rem_euclid(HOUR_MS);
    let rows: Vec<(Millis, f64)> = tx.into().query_map(
        "SELECT CAST(created_ms / 3600000 AS BIGINT), coalesce(sum(cost_usd), 0)
         FROM jobs WHERE created_ms >= ?1 AND created_ms <= ?2 GROUP BY 1",
        params![since_ms, now],
        |r| Ok((r.get::<i64>(0)? * HOUR_MS, r.get(1)?)),
    )?;
    let hours = ((now - first) / HOUR_MS + 1).max(0) as usize;
    let mut out: Vec<(Millis, f64)> = (0..hours)
        .map(|i| (first + i as Millis * HOUR_MS, 0.0))
        .collect();
    for (hour, usd) in rows {
        if let Some(slot) = out.iter_mut().find(|(h, _)| *h == hour) {
            slot.1 = usd;
        }
    }
    Ok(out)
}
