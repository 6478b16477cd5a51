//! The verbs that turn a message into work: `chat task` promotes it into a job, `chat
//! answer` resumes the job paused on the thread, `chat remember` captures it as memory.

use std::io::Write;

use serde_json::json;

use super::non_empty;
use crate::Invalid;
use crate::chat::remember::RememberStatus;
use crate::chat::{answer, promote, remember, threads, write_retry};
use crate::cli::Ctx;
use crate::cli::output::Out;
use crate::clock::SystemClock;
use crate::domain::Action;
use crate::store::memory::Tier;

/// `chat task`: a message promoted into one job for the agent it names.
pub(super) fn task(
    ctx: &Ctx,
    thread: String,
    message: Option<String>,
    message_file: Option<std::path::PathBuf>,
    (action, base): (Action, Option<String>),
    repo: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let message = crate::cli::input::text(message, message_file, "message")?;
    let config = ctx.config()?;
    non_empty(&message, "task", "message")?;
    let mut store = ctx.store()?;
    let clock = SystemClock;
    let p = promote::task_message_as(
        &mut store,
        &clock,
        &thread,
        repo.as_deref(),
        &message,
        promote::Task {
            action,
            base: base.as_deref(),
            config: &config,
        },
    )?;
    let mut out = Out::lines();
    if json {
        return out.json(&json!({
            "job_id": p.job_id,
            "state": p.state,
            "agent": p.agent,
            "action": p.action,
            "thread": p.thread.slug,
            "seq": p.message.seq,
        }));
    }
    writeln!(out, "promoted job: {}", p.job_id)?;
    writeln!(out, "state: {}", p.state)?;
    writeln!(out, "agent: {}", p.agent)?;
    writeln!(out, "action: {}", p.action)?;
    Ok(())
}

/// `chat answer`: the answer to the job paused on the thread.
pub(super) fn answer_job(
    ctx: &Ctx,
    thread: String,
    text: String,
    repo: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    non_empty(&text, "answer", "answer")?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let a = answer::answer_message(
        &mut store,
        crate::chat::live_env(&cfg.orchestrate),
        &thread,
        repo.as_deref(),
        &text,
    )?;
    let mut out = Out::lines();
    if json {
        return out.json(&json!({
            "thread": a.thread.slug,
            "job_id": a.job_id,
            "continuation": a.continuation,
        }));
    }
    writeln!(out, "answered job: {}", a.job_id)?;
    writeln!(out, "thread: {}", a.thread.slug)?;
    if let Some(c) = &a.continuation {
        writeln!(out, "continuation: {c}")?;
    }
    Ok(())
}

/// `chat remember`: one message captured as a memory observation.
pub(super) fn remember_message(
    ctx: &Ctx,
    thread: String,
    seq: String,
    repo: Option<String>,
    tier: String,
    agent: String,
    json: bool,
) -> anyhow::Result<()> {
    let seq_n = seq
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| Invalid(format!("chat remember: invalid message sequence {seq:?}")))?;
    let tier: Tier = tier.parse().map_err(|_| {
        Invalid(format!(
            "chat remember: invalid --tier {tier:?} (want repo|general)"
        ))
    })?;
    if agent.trim().is_empty() {
        return Err(Invalid("chat remember: --agent cannot be empty".into()).into());
    }
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let clock = SystemClock;
    let r = write_retry(&mut store, |tx| {
        let t = threads::resolve(tx, &thread, repo.as_deref())?;
        remember::remember(tx, &clock, &cfg, &t, seq_n, &agent, tier)
    })?;
    let mut out = Out::lines();
    if json {
        return out.json(&r);
    }
    match (r.status, r.rejected_reason) {
        (RememberStatus::Rejected, Some(why)) => writeln!(
            out,
            "message #{seq_n} rejected for memory: {}",
            why.as_str()
        )?,
        (RememberStatus::Deduped, _) => writeln!(out, "message #{seq_n} already remembered")?,
        (_, _) if r.confirmed => writeln!(
            out,
            "remembered message #{seq_n} and confirmed it into {}'s private memory",
            r.agent
        )?,
        _ => writeln!(out, "remembered message #{seq_n} as a pending observation")?,
    }
    Ok(())
}
