//! `gitmoot chat …`: clap definitions for every chat verb, and the dispatch of each to the
//! file that prints it (`threads`, `inbox`, `send`, `work`; the shared JSON and line
//! shapes in `print`). Each verb calls one `crate::chat` function (the control room calls
//! the same ones); nothing here decides. `send` and `wait` go through the seat relay when
//! `GITMOOT_RELAY_SOCKET` and `GITMOOT_RELAY_TOKEN` are set, and then never open the store.

use clap::{Args, Subcommand};

use super::Ctx;
use super::agent::parse;
use super::page::PageArgs;
use crate::domain::Action;
use crate::store::chat::ThreadState;

mod inbox;
mod print;
mod send;
mod threads;
mod work;

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
    /// Mark a thread read for you, the operator: clears its unread count in `chat list`
    /// and the control room (which does the same when it shows the thread).
    Seen {
        /// The thread: its slug, id or a unique id prefix.
        thread: String,
        /// The repo of the thread (when its name is not unique).
        #[arg(long)]
        repo: Option<String>,
        /// Only up to this message seq (default: the newest).
        #[arg(long, value_name = "SEQ")]
        upto: Option<i64>,
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
        /// With --action implement on a repo with a git checkout: the ref the job's branch
        /// starts from (default: `[repos.X].base`, else the checkout's current branch).
        #[arg(long, value_name = "REF")]
        base: Option<String>,
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

/// Refuses a blank `text` before anything is opened: "chat VERB requires a non-empty WHAT".
fn non_empty(text: &str, verb: &str, what: &str) -> Result<(), crate::Invalid> {
    if text.trim().is_empty() {
        return Err(crate::Invalid(format!(
            "chat {verb} requires a non-empty {what}"
        )));
    }
    Ok(())
}

fn parse_ref(s: &str) -> Result<(String, String), String> {
    match s.trim().split_once(':') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!("--ref must be kind:value, got {s:?}")),
    }
}

pub fn run(ctx: &Ctx, cmd: ChatCmd) -> anyhow::Result<()> {
    match cmd {
        ChatCmd::Create {
            name,
            repo,
            topic,
            json,
        } => threads::create(ctx, name, repo, topic, json),
        ChatCmd::List { repo, all, json } => threads::list(ctx, repo, all, json),
        ChatCmd::Show {
            thread,
            repo,
            limit,
            json,
        } => threads::show(ctx, thread, repo, limit, json),
        ChatCmd::Send(a) => send::send(ctx, a),
        ChatCmd::Close(a) => threads::set_state(ctx, a, ThreadState::Archived),
        ChatCmd::Reopen(a) => threads::set_state(ctx, a, ThreadState::Open),
        ChatCmd::Rename {
            thread,
            title,
            repo,
            json,
        } => threads::rename(ctx, thread, title, repo, json),
        ChatCmd::Inbox {
            agent,
            unread,
            before,
            page,
            json,
        } => inbox::list(ctx, agent, unread, before, page, json),
        ChatCmd::Read {
            agent,
            seqs,
            thread,
            repo,
            all,
        } => inbox::mark_read(ctx, agent, seqs, thread, repo, all),
        ChatCmd::Seen { thread, repo, upto } => threads::seen(ctx, thread, repo, upto),
        ChatCmd::Task {
            thread,
            message,
            message_file,
            action,
            repo,
            base,
            json,
        } => work::task(
            ctx,
            thread,
            message,
            message_file,
            (action, base),
            repo,
            json,
        ),
        ChatCmd::Answer {
            thread,
            text,
            repo,
            json,
        } => work::answer_job(ctx, thread, text, repo, json),
        ChatCmd::Remember {
            thread,
            seq,
            repo,
            tier,
            agent,
            json,
        } => work::remember_message(ctx, thread, seq, repo, tier, agent, json),
        ChatCmd::Wait {
            thread,
            since_seq,
            timeout,
            repo,
            json,
        } => send::wait_for(ctx, thread, since_seq, timeout, repo, json),
    }
}
