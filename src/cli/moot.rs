//! `gitmoot moot NAME TOPIC --agents A,B --repo R [--max-messages N]`: convene a bounded
//! multi-agent brainstorm through `chat::moot::convene`.

use std::io::Write;

use clap::Args;
use serde_json::json;

use super::Ctx;
use super::output::{Out, print_json};
use crate::chat::moot::{self, MootRequest};
use crate::chat::write_retry;
use crate::clock::SystemClock;

#[derive(Debug, Args)]
pub struct MootArgs {
    /// The moot thread's name.
    pub name: String,
    /// What the moot is to decide.
    pub topic: String,
    /// Comma-separated seats (registered, repo-scoped, with the ask capability).
    #[arg(long)]
    pub agents: String,
    /// The repo the moot is about (seats must be scoped to it).
    #[arg(long)]
    pub repo: String,
    /// Hard cap on agent turns for this moot (default [chat].moot_message_cap).
    #[arg(long)]
    pub max_messages: Option<u32>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Ctx, a: MootArgs) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let roster = moot::parse_roster(&a.agents);
    let mut store = ctx.store()?;
    let c = write_retry(&mut store, |tx| {
        moot::convene(
            tx,
            &SystemClock,
            &cfg,
            MootRequest {
                name: &a.name,
                topic: &a.topic,
                agents: roster.clone(),
                repo: a.repo.trim(),
                max_messages: a.max_messages,
            },
        )
    })?;
    if let Some(w) = &c.warning {
        eprintln!("{w}");
    }
    if a.json {
        return print_json(&json!({
            "thread_slug": c.thread.slug,
            "thread_id": c.thread.id,
            "repo": c.thread.repo,
            "message_cap": c.message_cap,
            "seats": c.seats.iter().map(|s| json!({"agent": s.agent, "job_id": s.job_id, "state": "queued"})).collect::<Vec<_>>(),
        }));
    }
    let mut out = Out::lines();
    writeln!(out, "moot: {}", c.thread.slug)?;
    writeln!(out, "thread: {}", c.thread.id)?;
    writeln!(out, "repo: {}", c.thread.repo)?;
    writeln!(out, "message cap: {}", c.message_cap)?;
    for s in &c.seats {
        writeln!(out, "seat {}: {} (queued)", s.agent, s.job_id)?;
    }
    Ok(())
}
