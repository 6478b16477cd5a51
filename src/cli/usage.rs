//! `gitmoot usage [--by root|agent|model|repo|day] [--since DURATION|DATE] [--json]`: what
//! the fleet spent, grouped, with the total and each root's budget headroom.
//!
//! Owns the flags and the printing; the figures are `store::usage`'s.

use std::io::Write;

use clap::Args;

use super::Ctx;
use super::agent::parse;
use super::output::{Out, table};
use crate::clock::{Millis, now_ms, parse_utc_date, utc_date};
use crate::config::Config;
use crate::domain::UsageBy;
use crate::store::usage::{Figures, Group, Usage, usage};

/// How far back `usage` looks unless told: a week shows a trend without listing every
/// root a long-lived home ever ran.
const DEFAULT_SINCE_MS: Millis = 7 * 86_400_000;

#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Group by root, agent, model, repo or (UTC) day.
    #[arg(long, value_parser = parse::<UsageBy>, default_value = "agent")]
    by: UsageBy,
    /// Jobs created within this duration (24h, 7d) or since this UTC date (2026-12-01).
    #[arg(long, value_parser = parse_since)]
    since: Option<Since>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy)]
enum Since {
    Ago(Millis),
    Date(Millis),
}

fn parse_since(s: &str) -> Result<Since, String> {
    if let Some(ms) = parse_utc_date(s) {
        return Ok(Since::Date(ms));
    }
    crate::duration::parse_ms(s).map(Since::Ago).map_err(|_| {
        format!("invalid --since {s:?} (use a duration like 24h or 7d, or a date like 2026-12-01)")
    })
}

pub fn run(ctx: &Ctx, a: UsageArgs) -> anyhow::Result<()> {
    let config = ctx.config()?;
    let store = ctx.store()?;
    let now = now_ms();
    let since = match a.since.unwrap_or(Since::Ago(DEFAULT_SINCE_MS)) {
        Since::Ago(ms) => now - ms,
        Since::Date(ms) => ms,
    };
    let u = usage(store.conn(), a.by, since, now)?;
    let caps = crate::engine::caps::today(&store.conn(), &config, now)?;
    let mut out = Out::block();
    if a.json {
        let mut doc = serde_json::to_value(&u)?;
        doc["daily_caps"] = serde_json::to_value(&caps)?;
        for (g, row) in u
            .groups
            .iter()
            .zip(doc["groups"].as_array_mut().into_iter().flatten())
        {
            if let Some(b) = budget(g, &config) {
                row["budget"] = serde_json::to_value(b)?;
            }
        }
        out.json(&doc)?;
        return Ok(out.finish()?);
    }
    print(&mut out, &u, &config)?;
    for c in &caps {
        writeln!(
            out,
            "daily cap of {}: ${:.2} of ${:.2} spent today (UTC){}",
            c.agent
                .as_deref()
                .map_or("the fleet".into(), |a| format!("agent {a}")),
            c.spent_usd,
            c.limit_usd,
            if c.reached {
                ", reached: its queued jobs wait"
            } else {
                ""
            }
        )?;
    }
    Ok(out.finish()?)
}

/// A root's spend against the per-root budgets that are set (`[orchestrate]`
/// `max_delegation_cost_usd`, `max_delegation_token_budget`; 0 is none).
#[derive(Debug, serde::Serialize)]
struct Budget {
    #[serde(skip_serializing_if = "Option::is_none")]
    usd: Option<Headroom<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens: Option<Headroom<u64>>,
}

#[derive(Debug, serde::Serialize)]
struct Headroom<T> {
    spent: T,
    limit: T,
}

fn budget(g: &Group, config: &Config) -> Option<Budget> {
    let root = g.root.as_ref()?;
    let o = &config.orchestrate;
    let b = Budget {
        usd: (o.max_delegation_cost_usd > 0.0).then_some(Headroom {
            spent: root.cost_usd,
            limit: o.max_delegation_cost_usd,
        }),
        tokens: (o.max_delegation_token_budget > 0).then_some(Headroom {
            spent: root.tokens,
            limit: o.max_delegation_token_budget,
        }),
    };
    (b.usd.is_some() || b.tokens.is_some()).then_some(b)
}

fn print(out: &mut Out, u: &Usage, config: &Config) -> anyhow::Result<()> {
    writeln!(
        out,
        "usage by {} since {} {} UTC",
        u.by,
        utc_date(u.since_ms),
        gitmoot_ui::view::utc_clock(u.since_ms)
    )?;
    if u.groups.is_empty() {
        writeln!(out, "no jobs in that time")?;
        return Ok(());
    }
    let mut headers = vec![
        u.by.as_str(),
        "jobs",
        "input",
        "output",
        "cache read",
        "cache write",
        "usd",
        "wall",
    ];
    if u.by == UsageBy::Root {
        headers.extend(["budget", "title"]);
    }
    let mut rows: Vec<Vec<String>> = u
        .groups
        .iter()
        .map(|g| {
            let key = if g.key.is_empty() { "-" } else { &g.key };
            let mut row = cells(key, &g.figures);
            if let Some(root) = &g.root {
                row.push(budget(g, config).map_or("-".into(), |b| headroom(&b)));
                row.push(root.title.clone());
            }
            row
        })
        .collect();
    rows.push(cells("total", &u.total));
    write!(out, "{}", table(&headers, &rows))?;
    Ok(())
}

fn cells(key: &str, f: &Figures) -> Vec<String> {
    vec![
        key.to_string(),
        f.jobs.to_string(),
        f.tokens.input.to_string(),
        f.tokens.output.to_string(),
        f.tokens.cache_read.to_string(),
        f.tokens.cache_write.to_string(),
        format!("${:.4}", f.cost_usd),
        crate::duration::format_ms(f.wall_ms),
    ]
}

/// "$0.42 of $5.00, 1200 of 100000 tokens".
fn headroom(b: &Budget) -> String {
    let usd = b
        .usd
        .as_ref()
        .map(|h| format!("${:.2} of ${:.2}", h.spent, h.limit));
    let tokens = b
        .tokens
        .as_ref()
        .map(|h| format!("{} of {} tokens", h.spent, h.limit));
    [usd, tokens]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
}
