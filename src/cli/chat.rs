//! `gitmoot chat …`: clap definitions and output for every chat verb. Each verb calls one
//! `crate::chat` function (the control room calls the same ones); nothing here decides.
//! `send` and `wait` go through the seat relay when `GITMOOT_RELAY_SOCKET` and
//! `GITMOOT_RELAY_TOKEN` are set, and then never open the store.

use std::io::Write;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::Ctx;
use super::agent::parse;
use super::output::print_json;
use super::page::{JsonStream, PageArgs};
use crate::Invalid;
use crate::chat::inbox::ReadSelection;
use crate::chat::messages::{SendOptions, unknown_mention_warning};
use crate::chat::relay::{self, WireMessage};
use crate::chat::remember::RememberStatus;
use crate::chat::threads::{self, NewThread};
use crate::chat::{ChatHooks, answer, inbox, messages, promote, remember, wait, write_retry};
use crate::clock::SystemClock;
use crate::domain::Action;
use crate::store::chat::{InboxRow, Message, Thread, ThreadState};
use crate::store::memory::Tier;

#[derive(Debug, Subcommand)]
pub enum ChatCmd {
    /// Create a thread; NAME is slugified to [a-z0-9-].
    Create {
        /// The thread's name; slugified to [a-z0-9-] (the title keeps it verbatim).
        name: String,
        /// The repo the thread belongs to.
        #[arg(long)]
        repo: String,
        /// The display title (default: NAME as typed).
        #[arg(long)]
        topic: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List open threads (with --all, archived too), most recent activity first.
    List {
        /// Only threads of this repo.
        #[arg(long)]
        repo: Option<String>,
        /// Include archived threads.
        #[arg(long)]
        all: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print a thread's transcript.
    Show {
        /// The thread: its slug, id or a unique id prefix.
        thread: String,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// Only the newest N messages.
        #[arg(long)]
        limit: Option<usize>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Post a message; @mentions land in inboxes and start nothing.
    Send(SendArgs),
    /// Archive a thread (kept for audit; sending is refused until reopened).
    Close(ThreadArg),
    /// Restore an archived thread.
    Reopen(ThreadArg),
    /// Change a thread's display title (the slug never changes).
    Rename {
        /// The thread: its slug, id or a unique id prefix.
        thread: String,
        /// The new display title, kept verbatim.
        title: String,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// An agent's mentions, newest first.
    Inbox {
        /// The agent whose mentions to list.
        agent: String,
        /// Only unread mentions.
        #[arg(long)]
        unread: bool,
        /// Only mentions older than this mention id (the `id` of a `--jsonl` row).
        #[arg(long, value_name = "ID")]
        before: Option<i64>,
        #[command(flatten)]
        page: PageArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Mark an agent's mentions read: SEQ… of --thread, or --all.
    Read {
        /// The agent whose mentions to mark read.
        agent: String,
        /// The message seqs to mark read.
        seqs: Vec<i64>,
        /// The thread the SEQs belong to.
        #[arg(long)]
        thread: Option<String>,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// Mark every mention of the agent read.
        #[arg(long, conflicts_with = "seqs")]
        all: bool,
    },
    /// Promote a message into one job for the one @agent it names.
    Task {
        /// The thread: its slug, id or a unique id prefix.
        thread: String,
        /// The message; `-` reads it from stdin.
        message: Option<String>,
        /// Read the message from this file (`-` for stdin).
        #[arg(long, value_name = "PATH", visible_alias = "prompt-file")]
        message_file: Option<std::path::PathBuf>,
        /// What the job does: ask | review | implement.
        #[arg(long, value_parser = parse::<Action>, default_value = "ask")]
        action: Action,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Answer the job paused on this thread: "<question-id>: text".
    Answer {
        /// The thread: its slug, id or a unique id prefix.
        thread: String,
        /// The answer, "<question-id>: text".
        text: String,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Capture one message as a memory observation.
    Remember {
        /// The thread: its slug, id or a unique id prefix.
        thread: String,
        /// The message seq to capture.
        seq: String,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// repo | general.
        #[arg(long, default_value = "repo")]
        tier: String,
        /// The agent whose memory the observation is for.
        #[arg(long, default_value = "lead")]
        agent: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Wait for messages after --since-seq, then print `last-seq: N` (the thread's newest
    /// seq). Exits 3 when the timeout passes with no new message.
    Wait {
        /// The thread: its slug, id or a unique id prefix.
        thread: String,
        /// Return messages after this seq.
        #[arg(long, default_value_t = 0)]
        since_seq: i64,
        /// Give up after this long (e.g. 90s).
        #[arg(long, default_value = "90s", value_parser = |s: &str| crate::duration::parse_ms(s).map_err(|e| e.0))]
        timeout: i64,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct SendArgs {
    /// The thread: its slug, id or a unique id prefix.
    pub thread: String,
    /// The message; `-` reads it from stdin.
    pub message: Option<String>,
    /// Read the message from this file (`-` for stdin).
    #[arg(long, value_name = "PATH", visible_alias = "prompt-file")]
    pub message_file: Option<std::path::PathBuf>,
    /// Post as this registered agent.
    #[arg(long = "as")]
    pub as_agent: Option<String>,
    /// The seq this message replies to.
    #[arg(long)]
    pub reply_to: Option<i64>,
    /// The repo of the thread (when its name is not unique).
    #[arg(long)]
    pub repo: Option<String>,
    /// kind:value (repeatable).
    #[arg(long = "ref", value_parser = parse_ref)]
    pub refs: Vec<(String, String)>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ThreadArg {
    /// The thread: its slug, id or a unique id prefix.
    pub thread: String,
    /// The repo of the thread (when its name is not unique).
    #[arg(long)]
    pub repo: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

fn parse_ref(s: &str) -> Result<(String, String), String> {
    match s.trim().split_once(':') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!("--ref must be kind:value, got {s:?}")),
    }
}

/// `chat list --json` entries: `{id, slug, title, repo, state, last_activity}`.
pub fn thread_json(t: &Thread) -> Value {
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
pub fn message_json(m: &Message) -> Value {
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

fn wire_json(m: &WireMessage) -> Value {
    json!({
        "seq": m.seq,
        "kind": m.kind,
        "author": m.author,
        "body": m.body,
        "mentions": m.mentions,
    })
}

/// `chat inbox --json` entries: `{thread, seq, author, body, read}`.
pub fn inbox_json(r: &InboxRow) -> Value {
    json!({
        "thread": r.thread_slug,
        "seq": r.seq,
        "author": r.author,
        "body": r.body,
        "read": !r.unread,
    })
}

fn print_thread_state(t: &Thread, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&thread_json(t));
    }
    println!("thread: {}", t.slug);
    println!("state: {}", t.state);
    Ok(())
}

fn print_message_line(seq: i64, kind: &str, author: &str, body: &str, mentions: &[String]) {
    // Posts are Markdown; printed as the transcript renders them, minus the styles.
    let body = gitmoot_ui::widgets::threads::plain_markdown(body);
    println!("#{seq} [{kind}] {author}: {body}");
    if !mentions.is_empty() {
        println!("    mentions: {}", mentions.join(", "));
    }
}

pub fn run(ctx: &Ctx, cmd: ChatCmd) -> anyhow::Result<()> {
    let clock = SystemClock;
    match cmd {
        ChatCmd::Create {
            name,
            repo,
            topic,
            json,
        } => {
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
            if json {
                return print_json(&thread_json(&t));
            }
            println!("thread: {}", t.slug);
            println!("id: {}", t.id);
            println!("name: {}", t.title);
            println!("repo: {}", t.repo);
            println!("state: {}", t.state);
            Ok(())
        }
        ChatCmd::List { repo, all, json } => {
            let store = ctx.store()?;
            let list = threads::list(store.conn(), repo.as_deref(), all)?;
            if json {
                return print_json(&list.iter().map(thread_json).collect::<Vec<_>>());
            }
            if list.is_empty() {
                println!("no chat threads");
            }
            for t in &list {
                let archived = if t.state == ThreadState::Archived {
                    " [archived]"
                } else {
                    ""
                };
                println!("{:<24} {:<20} {}{archived}", t.slug, t.repo, t.title);
            }
            Ok(())
        }
        ChatCmd::Show {
            thread,
            repo,
            limit,
            json,
        } => {
            let store = ctx.store()?;
            let t = threads::resolve(store.conn(), &thread, repo.as_deref())?;
            let msgs = messages::transcript(store.conn(), &t, limit.filter(|n| *n > 0))?;
            if json {
                let mut th = thread_json(&t);
                th["origin"] = json!(t.origin);
                th["created_by"] = json!(t.created_by);
                th["created"] = json!(t.created_ms);
                return print_json(&json!({
                    "thread": th,
                    "messages": msgs.iter().map(message_json).collect::<Vec<_>>(),
                }));
            }
            println!("thread: {} ({})", t.slug, t.state);
            println!("title: {}", t.title);
            println!("repo: {}", t.repo);
            let people = threads::participants(store.conn(), &t.id)?;
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
                println!("participants: {}", list.join(", "));
            }
            if msgs.is_empty() {
                println!("(no messages)");
            }
            for m in &msgs {
                print_message_line(m.seq, m.kind.as_str(), &m.author_name, &m.body, &m.mentions);
                if let Some(r) = m.reply_to {
                    println!("    reply to: #{r}");
                }
                if let Some(j) = &m.promoted_job_id {
                    println!("    promoted job: {j}");
                }
                for r in &m.refs {
                    println!("    ref: {}:{}", r.kind, r.id);
                }
            }
            Ok(())
        }
        ChatCmd::Send(a) => send(ctx, a),
        ChatCmd::Close(a) => set_state(ctx, a, ThreadState::Archived),
        ChatCmd::Reopen(a) => set_state(ctx, a, ThreadState::Open),
        ChatCmd::Rename {
            thread,
            title,
            repo,
            json,
        } => {
            if title.trim().is_empty() {
                return Err(Invalid("chat rename requires a non-empty new name".into()).into());
            }
            let mut store = ctx.store()?;
            let t = write_retry(&mut store, |tx| {
                let t = threads::resolve(tx, &thread, repo.as_deref())?;
                threads::rename(tx, &clock, &t, &title)
            })?;
            if json {
                return print_json(&thread_json(&t));
            }
            println!("thread: {}", t.slug);
            println!("name: {}", t.title);
            Ok(())
        }
        ChatCmd::Inbox {
            agent,
            unread,
            before,
            page,
            json,
        } => {
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
                inbox::inbox_each(store.conn(), &agent, unread, limit, before, |r| {
                    let mut v = inbox_json(&r);
                    if page.jsonl {
                        v["id"] = json!(r.mention_id);
                    }
                    out.row(&v)
                })?;
                out.finish()?;
                return Ok(());
            }
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let mut shown = 0;
            inbox::inbox_each(store.conn(), &agent, unread, limit, before, |r| {
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
            out.flush()?;
            Ok(())
        }
        ChatCmd::Read {
            agent,
            seqs,
            thread,
            repo,
            all,
        } => {
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
            println!("marked {n} mention(s) read for {agent}");
            Ok(())
        }
        ChatCmd::Task {
            thread,
            message,
            message_file,
            action,
            repo,
            json,
        } => {
            let message = super::input::text(message, message_file, "message")?;
            if message.trim().is_empty() {
                return Err(Invalid("chat task requires a non-empty message".into()).into());
            }
            let mut store = ctx.store()?;
            let p = promote::task_message(
                &mut store,
                &clock,
                &thread,
                repo.as_deref(),
                &message,
                action,
            )?;
            if json {
                return print_json(&json!({
                    "job_id": p.job_id,
                    "state": p.state,
                    "agent": p.agent,
                    "action": p.action,
                    "thread": p.thread.slug,
                    "seq": p.message.seq,
                }));
            }
            println!("promoted job: {}", p.job_id);
            println!("state: {}", p.state);
            println!("agent: {}", p.agent);
            println!("action: {}", p.action);
            Ok(())
        }
        ChatCmd::Answer {
            thread,
            text,
            repo,
            json,
        } => {
            if text.trim().is_empty() {
                return Err(Invalid("chat answer requires a non-empty answer".into()).into());
            }
            let cfg = ctx.config()?;
            let mut store = ctx.store()?;
            let a = answer::answer_message(
                &mut store,
                &clock,
                &cfg.orchestrate,
                &ChatHooks,
                &thread,
                repo.as_deref(),
                &text,
            )?;
            if json {
                return print_json(&json!({
                    "thread": a.thread.slug,
                    "job_id": a.job_id,
                    "continuation": a.continuation,
                }));
            }
            println!("answered job: {}", a.job_id);
            println!("thread: {}", a.thread.slug);
            if let Some(c) = &a.continuation {
                println!("continuation: {c}");
            }
            Ok(())
        }
        ChatCmd::Remember {
            thread,
            seq,
            repo,
            tier,
            agent,
            json,
        } => {
            let seq_n = seq
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    Invalid(format!("chat remember: invalid message sequence {seq:?}"))
                })?;
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
            let r = write_retry(&mut store, |tx| {
                let t = threads::resolve(tx, &thread, repo.as_deref())?;
                remember::remember(tx, &clock, &cfg, &t, seq_n, &agent, tier)
            })?;
            if json {
                return print_json(&r);
            }
            match (r.status, r.rejected_reason) {
                (RememberStatus::Rejected, Some(why)) => {
                    println!("message #{seq_n} rejected for memory: {}", why.as_str())
                }
                (RememberStatus::Deduped, _) => println!("message #{seq_n} already remembered"),
                (_, _) if r.confirmed => println!(
                    "remembered message #{seq_n} and confirmed it into {}'s private memory",
                    r.agent
                ),
                _ => println!("remembered message #{seq_n} as a pending observation"),
            }
            Ok(())
        }
        ChatCmd::Wait {
            thread,
            since_seq,
            timeout,
            repo,
            json,
        } => {
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
                    let t = threads::resolve(store.conn(), &thread, repo.as_deref())?;
                    let s = wait::wait(&store, &t, since_seq, timeout)?;
                    let msgs = s.messages.iter().map(WireMessage::from).collect();
                    (msgs, s.last_seq, s.cap_reached)
                }
            };
            let timed_out = msgs.is_empty() && !cap_reached;
            if json {
                print_json(&json!({
                    "messages": msgs.iter().map(wire_json).collect::<Vec<_>>(),
                    "last_seq": last_seq,
                    "cap_reached": cap_reached,
                    "timed_out": timed_out,
                }))?;
            } else {
                if timed_out {
                    println!("(timed out: no new messages)");
                } else if msgs.is_empty() {
                    println!("(no new messages)");
                }
                for m in &msgs {
                    print_message_line(m.seq, &m.kind, &m.author, &m.body, &m.mentions);
                }
                if cap_reached {
                    println!("MOOT CAP REACHED — wrap up now");
                }

                println!("last-seq: {last_seq}");
            }
            if timed_out {
                return Err(super::TimedOut(format!(
                    "chat wait timed out after {} with no message after seq {since_seq} (last-seq: {last_seq})",
                    crate::duration::format_ms(timeout.as_millis() as i64)
                ))
                .into());
            }
            Ok(())
        }
    }
}

fn set_state(ctx: &Ctx, a: ThreadArg, state: ThreadState) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let clock = SystemClock;
    let t = write_retry(&mut store, |tx| {
        let t = threads::resolve(tx, &a.thread, a.repo.as_deref())?;
        threads::set_state(tx, &clock, &t, state)
    })?;
    print_thread_state(&t, a.json)
}

fn send(ctx: &Ctx, mut a: SendArgs) -> anyhow::Result<()> {
    let message = super::input::text(a.message.take(), a.message_file.take(), "message")?;
    if message.trim().is_empty() {
        return Err(Invalid("chat send requires a non-empty message".into()).into());
    }
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
    if a.json {
        return print_json(&json_doc);
    }
    println!("sent #{seq} as {author}");
    if !mentions.is_empty() {
        println!("mentions: {}", mentions.join(", "));
    }
    Ok(())
}
