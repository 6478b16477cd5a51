//! The thread verbs: `chat create`, `list`, `show`, `close`, `reopen` and `rename`; must
//! not touch inboxes or jobs.

use std::io::Write;

use serde_json::json;

use super::print::{message_json, print_message_line, print_thread, thread_json};
use super::{ThreadArg, non_empty};
use crate::chat::threads::{self, NewThread};
use crate::chat::{messages, write_retry};
use crate::cli::Ctx;
use crate::cli::output::{Out, table};
use crate::clock::SystemClock;
use crate::store::chat::{Thread, ThreadState};

/// `chat create`: a new thread, its name slugified.
pub(super) fn create(
    ctx: &Ctx,
    name: String,
    repo: String,
    topic: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let clock = SystemClock;
    // Validate before opening the store: bad input creates nothing, not even a home.
    threads::slug_for(&name, "chat")?;
    let mut store = ctx.store()?;
    let t = write_retry(&mut store, |tx| {
        threads::create(
            tx,
            &clock,
            NewThread {
                name: &name,
                repo: repo.trim(),
                // The name as typed is the title; only the slug is normalised.
                title: topic.as_deref().or(Some(name.as_str())),
                created_by: "human",
            },
        )
    })?;
    print_thread(
        &t,
        json,
        &[
            ("id", &t.id),
            ("name", &t.title),
            ("repo", &t.repo),
            ("state", &t.state),
        ],
    )
}

/// `chat list`: open threads (all with `--all`), most recent activity first.
pub(super) fn list(ctx: &Ctx, repo: Option<String>, all: bool, json: bool) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let list = threads::list(&store.conn(), repo.as_deref(), all)?;
    let unseen = threads::unseen(&store.conn())?;
    let unread = |t: &Thread| unseen.get(&t.id).copied().unwrap_or(0);
    let mut out = Out::lines();
    if json {
        let rows: Vec<_> = list
            .iter()
            .map(|t| {
                let mut v = thread_json(t);
                v["unread"] = unread(t).into();
                v
            })
            .collect();
        return out.json(&rows);
    }
    if list.is_empty() {
        writeln!(out, "no chat threads")?;
        return Ok(());
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|t| {
            let archived = if t.state == ThreadState::Archived {
                " [archived]"
            } else {
                ""
            };
            vec![
                t.slug.clone(),
                t.repo.clone(),
                unread(t).to_string(),
                format!("{}{archived}", t.title),
            ]
        })
        .collect();
    out.write_all(table(&["THREAD", "REPO", "UNREAD", "TITLE"], &rows).as_bytes())?;
    Ok(())
}

/// `chat seen`: the operator has read the thread (up to `--upto`).
pub(super) fn seen(
    ctx: &Ctx,
    thread: String,
    repo: Option<String>,
    upto: Option<i64>,
) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let (t, left) = threads::mark_seen(&mut store, &thread, repo.as_deref(), upto)?;
    let mut out = Out::lines();
    match left {
        0 => writeln!(out, "{}: all read", t.title)?,
        n => writeln!(
            out,
            "{}: {n} unread after #{}",
            t.title,
            upto.unwrap_or_default()
        )?,
    }
    Ok(())
}

/// `chat show`: a thread's header, participants and transcript.
pub(super) fn show(
    ctx: &Ctx,
    thread: String,
    repo: Option<String>,
    limit: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let t = threads::resolve(&store.conn(), &thread, repo.as_deref())?;
    let msgs = messages::transcript(&store.conn(), &t, limit.filter(|n| *n > 0))?;
    let mut out = Out::block();
    if json {
        let mut th = thread_json(&t);
        th["origin"] = json!(t.origin);
        th["created_by"] = json!(t.created_by);
        th["created"] = json!(t.created_ms);
        out.json(&json!({
            "thread": th,
            "messages": msgs.iter().map(message_json).collect::<Vec<_>>(),
        }))?;
        return Ok(out.finish()?);
    }
    writeln!(out, "thread: {} ({})", t.slug, t.state)?;
    writeln!(out, "title: {}", t.title)?;
    writeln!(out, "repo: {}", t.repo)?;
    let people = threads::participants(&store.conn(), &t.id)?;
    if !people.is_empty() {
        let list: Vec<String> = people
            .iter()
            .map(|p| match (&p.policy, p.registered) {
                (Some(policy), true) => format!(
                    "{} ({}; {policy})",
                    p.name,
                    p.capabilities
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                _ => p.name.clone(),
            })
            .collect();
        writeln!(out, "participants: {}", list.join(", "))?;
    }
    if msgs.is_empty() {
        writeln!(out, "(no messages)")?;
    }
    for m in &msgs {
        print_message_line(
            &mut out,
            m.seq,
            m.kind.as_str(),
            &m.author_name,
            &m.body,
            &m.mentions,
        )?;
        if let Some(r) = m.reply_to {
            writeln!(out, "    reply to: #{r}")?;
        }
        if let Some(j) = &m.promoted_job_id {
            writeln!(out, "    promoted job: {j}")?;
        }
        for r in &m.refs {
            writeln!(out, "    ref: {}:{}", r.kind, r.id)?;
        }
    }
    Ok(out.finish()?)
}

/// `chat rename`: a thread's new display title.
pub(super) fn rename(
    ctx: &Ctx,
    thread: String,
    title: String,
    repo: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    non_empty(&title, "rename", "new name")?;
    let mut store = ctx.store()?;
    let clock = SystemClock;
    let t = write_retry(&mut store, |tx| {
        let t = threads::resolve(tx, &thread, repo.as_deref())?;
        threads::rename(tx, &clock, &t, &title)
    })?;
    print_thread(&t, json, &[("name", &t.title)])
}

/// `chat close` and `chat reopen`: a thread archived or restored.
pub(super) fn set_state(ctx: &Ctx, a: ThreadArg, state: ThreadState) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let clock = SystemClock;
    let t = write_retry(&mut store, |tx| {
        let t = threads::resolve(tx, &a.thread, a.repo.as_deref())?;
        threads::set_state(tx, &clock, &t, state)
    })?;
    print_thread(&t, a.json, &[("state", &t.state)])
}
