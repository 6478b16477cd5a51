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
use crate::report::usage::{budget, headroom};
use crate::store::usage::{Figures, Usage, usage};

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
        writeln!(out, "{c}")?;
    }
    Ok(out.finish()?)
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
