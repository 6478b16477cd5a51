//! The inbox verbs: `chat inbox` pages an agent's mentions and `chat read` marks them read;
//! must not touch threads or messages.

use std::io::Write;

use serde_json::json;

use super::print::inbox_json;
use crate::Invalid;
use crate::chat::inbox::{self, ReadSelection};
use crate::chat::{threads, write_retry};
use crate::cli::Ctx;
use crate::cli::output::Out;
use crate::cli::page::{JsonStream, PageArgs};

/// `chat inbox`: an agent's mentions, newest first, as text, JSON or JSONL pages.
pub(super) fn list(
    ctx: &Ctx,
    agent: String,
    unread: bool,
    before: Option<i64>,
    page: PageArgs,
    json: bool,
) -> anyhow::Result<()> {
    let store = ctx.store()?;
    // Mentions of unregistered names are recorded but never delivered, so an
    // empty inbox for them would mislead; the human's own inbox always exists.
    if agent != "human" && crate::store::agents::get(store.conn(), &agent)?.is_none() {
        return Err(Invalid(format!(
            "no agent named {agent:?} (see `gitmoot agent list`)"
        ))
        .into());
    }
    let limit = page.limit();
    if json || page.jsonl {
        let mut out = JsonStream::stdout(page.jsonl);
        inbox::inbox_each(&store.conn(), &agent, unread, limit, before, |r| {
            let mut v = inbox_json(&r);
            if page.jsonl {
                v["id"] = json!(r.mention_id);
            }
            out.row(&v)
        })?;
        out.finish()?;
        return Ok(());
    }
    let mut out = Out::block();
    let mut shown = 0;
    inbox::inbox_each(&store.conn(), &agent, unread, limit, before, |r| {
        let mark = if r.unread { '*' } else { ' ' };
        shown += 1;
        writeln!(
            out,
            "{mark} {:<24} #{} {}: {}",
            r.thread_slug, r.seq, r.author, r.body
        )?;
        Ok::<_, anyhow::Error>(())
    })?;
    if shown == 0 {
        writeln!(out, "inbox empty")?;
    }
    out.finish()?;
    Ok(())
}

/// `chat read`: an agent's mentions marked read, some seqs of a thread or all.
pub(super) fn mark_read(
    ctx: &Ctx,
    agent: String,
    seqs: Vec<i64>,
    thread: Option<String>,
    repo: Option<String>,
    all: bool,
) -> anyhow::Result<()> {
    if !all && seqs.is_empty() {
        return Err(Invalid("chat read needs SEQ… (with --thread) or --all".into()).into());
    }
    if !seqs.is_empty() && thread.is_none() {
        return Err(Invalid("chat read SEQ… needs --thread THREAD".into()).into());
    }
    let which = if all {
        ReadSelection::All
    } else {
        ReadSelection::Seqs(seqs)
    };
    let mut store = ctx.store()?;
    let n = write_retry(&mut store, |tx| {
        let t = thread
            .as_deref()
            .map(|t| threads::resolve(tx, t, repo.as_deref()))
            .transpose()?;
        inbox::mark_read(tx, &agent, t.as_ref(), &which)
    })?;
    writeln!(Out::lines(), "marked {n} mention(s) read for {agent}")?;
    Ok(())
}
