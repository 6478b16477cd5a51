//! The seat's verbs: `chat send` posts a message and `chat wait` waits for new ones, each
//! through the relay when the environment names one and through the store otherwise.

use std::io::Write;
use std::time::Duration;

use serde_json::json;

use super::print::{message_json, print_message_line, wire_json};
use super::{SendArgs, non_empty};
use crate::chat::messages::{self, SendOptions, unknown_mention_warning};
use crate::chat::relay::{self, WireMessage};
use crate::chat::{threads, wait};
use crate::cli::Ctx;
use crate::cli::output::Out;
use crate::clock::SystemClock;

/// `chat send`: one message posted, through the relay when the environment names one.
pub(super) fn send(ctx: &Ctx, mut a: SendArgs) -> anyhow::Result<()> {
    let message = crate::cli::input::text(a.message.take(), a.message_file.take(), "message")?;
    non_empty(&message, "send", "message")?;
    let (seq, author, mentions, warnings, json_doc) = match relay::from_env() {
        Some((socket, token)) => {
            let r = relay::call(
                &socket,
                &relay::Request {
                    op: "send".into(),
                    token,
                    thread: a.thread.clone(),
                    repo: a.repo.clone(),
                    as_agent: a.as_agent.clone(),
                    body: Some(message.clone()),
                    reply_to: a.reply_to,
                    refs: a.refs.clone(),
                    since_seq: 0,
                },
            )?;
            let m = r
                .message
                .ok_or_else(|| anyhow::anyhow!("chat relay returned no message"))?;
            let doc = wire_json(&m);
            (m.seq, m.author, m.mentions, r.warnings, doc)
        }
        None => {
            let mut store = ctx.store()?;
            let opts = SendOptions {
                as_agent: a.as_agent.clone(),
                reply_to: a.reply_to,
                refs: a.refs.clone(),
            };
            let s = messages::send_message(
                &mut store,
                &SystemClock,
                &a.thread,
                a.repo.as_deref(),
                &message,
                &opts,
            )?;
            let warnings = s
                .unknown_mentions
                .iter()
                .map(|n| unknown_mention_warning(n))
                .collect();
            let doc = message_json(&s.message);
            (
                s.message.seq,
                s.message.author_name,
                s.message.mentions,
                warnings,
                doc,
            )
        }
    };
    for w in &warnings {
        eprintln!("{w}");
    }
    let mut out = Out::lines();
    if a.json {
        return out.json(&json_doc);
    }
    writeln!(out, "sent #{seq} as {author}")?;
    if !mentions.is_empty() {
        writeln!(out, "mentions: {}", mentions.join(", "))?;
    }
    Ok(())
}

/// `chat wait`: messages after `--since-seq`, or a timeout (exit 3) when none comes.
pub(super) fn wait_for(
    ctx: &Ctx,
    thread: String,
    since_seq: i64,
    timeout: i64,
    repo: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let timeout = Duration::from_millis(timeout.max(0) as u64);
    let (msgs, last_seq, cap_reached) = match relay::from_env() {
        Some((socket, token)) => {
            let r = relay::wait_remote(
                &socket,
                &token,
                &thread,
                repo.as_deref(),
                since_seq,
                timeout,
            )?;
            (r.messages, r.last_seq, r.cap_reached)
        }
        None => {
            let store = ctx.store()?;
            let t = threads::resolve(&store.conn(), &thread, repo.as_deref())?;
            let s = wait::wait(&store, &t, since_seq, timeout)?;
            let msgs = s.messages.iter().map(WireMessage::from).collect();
            (msgs, s.last_seq, s.cap_reached)
        }
    };
    let timed_out = msgs.is_empty() && !cap_reached;
    let mut out = Out::lines();
    if json {
        out.json(&json!({
            "messages": msgs.iter().map(wire_json).collect::<Vec<_>>(),
            "last_seq": last_seq,
            "cap_reached": cap_reached,
            "timed_out": timed_out,
        }))?;
    } else {
        if timed_out {
            writeln!(out, "(timed out: no new messages)")?;
        } else if msgs.is_empty() {
            writeln!(out, "(no new messages)")?;
        }
        for m in &msgs {
            print_message_line(&mut out, m.seq, &m.kind, &m.author, &m.body, &m.mentions)?;
        }
        if cap_reached {
            writeln!(out, "MOOT CAP REACHED — wrap up now")?;
        }

        writeln!(out, "last-seq: {last_seq}")?;
    }
    if timed_out {
        return Err(crate::cli::TimedOut(format!(
            "chat wait timed out after {} with no message after seq {since_seq} (last-seq: {last_seq})",
            crate::duration::format_ms(timeout.as_millis() as i64)
        ))
        .into());
    }
    Ok(())
}
