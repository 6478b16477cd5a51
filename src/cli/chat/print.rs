//! The shapes chat verbs print: the `--json` documents of threads, messages and inbox rows,
//! and the transcript's text line; must not open the store.

use std::io::Write;

use serde_json::{Value, json};

use crate::chat::relay::WireMessage;
use crate::cli::output::Out;
use crate::store::chat::{InboxRow, Message, Thread};

/// `chat list --json` entries: `{id, slug, title, repo, state, last_activity}`.
pub(super) fn thread_json(t: &Thread) -> Value {
    json!({
        "id": t.id,
        "slug": t.slug,
        "title": t.title,
        "repo": t.repo,
        "state": t.state,
        "last_activity": t.updated_ms,
    })
}

/// `chat show --json` messages: `{seq, kind, author, body, mentions, reply_to,
/// promoted_job_id, ts}`.
pub(super) fn message_json(m: &Message) -> Value {
    json!({
        "seq": m.seq,
        "kind": m.kind,
        "author": m.author_name,
        "body": m.body,
        "mentions": m.mentions,
        "reply_to": m.reply_to,
        "promoted_job_id": m.promoted_job_id,
        "ts": m.ts_ms,
    })
}

pub(super) fn wire_json(m: &WireMessage) -> Value {
    json!({
        "seq": m.seq,
        "kind": m.kind,
        "author": m.author,
        "body": m.body,
        "mentions": m.mentions,
    })
}

/// `chat inbox --json` entries: `{thread, seq, author, body, read}`.
pub(super) fn inbox_json(r: &InboxRow) -> Value {
    json!({
        "thread": r.thread_slug,
        "seq": r.seq,
        "author": r.author,
        "body": r.body,
        "read": !r.unread,
    })
}

/// A thread as the verb that changed it prints it: the whole row as JSON, or `thread: SLUG`
/// followed by the `label: value` lines the verb is about.
pub(super) fn print_thread(
    t: &Thread,
    json: bool,
    lines: &[(&str, &dyn std::fmt::Display)],
) -> anyhow::Result<()> {
    let mut out = Out::lines();
    if json {
        return out.json(&thread_json(t));
    }
    writeln!(out, "thread: {}", t.slug)?;
    for (label, value) in lines {
        writeln!(out, "{label}: {value}")?;
    }
    Ok(())
}

pub(super) fn print_message_line(
    out: &mut Out,
    seq: i64,
    kind: &str,
    author: &str,
    body: &str,
    mentions: &[String],
) -> std::io::Result<()> {
    // Posts are Markdown; printed as the transcript renders them, minus the styles.
    let body = gitmoot_ui::markdown::plain(body);
    writeln!(out, "#{seq} [{kind}] {author}: {body}")?;
    if !mentions.is_empty() {
        writeln!(out, "    mentions: {}", mentions.join(", "))?;
    }
    Ok(())
}
