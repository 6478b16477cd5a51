//! Appending messages: the one write path (`append`) that assigns the gap-free per-thread
//! `seq`, stamps origins, builds the envelope and writes inbox rows; and `send`, the
//! human/agent chat message with mention delivery and the moot hard cap.
//!
//! Never submits a job: a message is a row. Messages are their own append-only log: a
//! send writes no `events` row (readers notice messages through `PRAGMA data_version` and
//! the thread's `seq`); thread, link and memory changes do append events.

use crate::store::Tx;

use super::threads::{self, require_open};
use super::{ChatError, Result, cap, envelope, mentions, write_retry_in};
use crate::clock::Clock;
use crate::store::chat::{self as rows, AuthorKind, Mention, Message, MessageKind, Ref, Thread};
use crate::store::{Store, agents};
use crate::{Invalid, ids};

/// A message to append. `mentions` go into the envelope; `deliver` lists the inbox rows
/// to write as (agent, resolved).
#[derive(Debug, Clone)]
pub struct Post<'a> {
    pub kind: MessageKind,
    pub author_kind: AuthorKind,
    pub author: &'a str,
    pub body: &'a str,
    pub mentions: Vec<String>,
    pub deliver: Vec<(String, bool)>,
    pub refs: Vec<Ref>,
    pub reply_to: Option<i64>,
    pub job_id: Option<String>,
}

impl<'a> Post<'a> {
    /// An engine/CLI notice with no mentions.
    pub fn system(body: &'a str) -> Self {
        Self {
            kind: MessageKind::System,
            author_kind: AuthorKind::System,
            author: "system",
            body,
            mentions: Vec::new(),
            deliver: Vec::new(),
            refs: Vec::new(),
            reply_to: None,
            job_id: None,
        }
    }
}

/// A `{kind:"job"}` ref stamped with this home's origin.
pub(crate) fn job_ref(conn: &Tx<'_>, repo: &str, job_id: &str) -> Result<Ref> {
    Ok(Ref {
        kind: "job".into(),
        origin: rows::origin(conn)?,
        repo: repo.to_string(),
        id: job_id.to_string(),
        url: String::new(),
    })
}

/// `msg-` + 24 hex: 12 of the timestamp, then 12 random, so ids grow with time and the
/// id index takes appends at its right edge instead of random page writes.
fn message_id(now: i64) -> String {
    format!(
        "msg-{:012x}{}",
        now.max(0) as u64 & 0xffff_ffff_ffff,
        ids::random_hex(6)
    )
}

/// Appends one message in the caller's transaction (which must hold the write lock, as
/// `Store::write` does) and returns it. Does not check the thread's state.
pub fn append(conn: &Tx<'_>, clock: &dyn Clock, thread: &Thread, p: Post<'_>) -> Result<Message> {
    let origin = rows::origin(conn)?;
    let now = clock.now_ms();
    let seq = rows::next_seq(conn, &thread.id)?;
    let refs: Vec<Ref> = p
        .refs
        .into_iter()
        .map(|mut r| {
            if r.origin.is_empty() {
                r.origin = origin.clone();
            }
            r
        })
        .collect();
    let m = Message {
        id: message_id(now),
        thread_id: thread.id.clone(),
        seq,
        ts_ms: now,
        author_kind: p.author_kind,
        author_name: p.author.to_string(),
        author_origin: origin.clone(),
        kind: p.kind,
        body: p.body.to_string(),
        envelope_json: envelope::encode(p.kind, p.body, &p.mentions, &refs, p.reply_to),
        mentions: p.mentions,
        refs,
        reply_to: p.reply_to,
        promoted_job_id: None,
        job_id: p.job_id,
        origin: origin.clone(),
    };
    rows::insert_message(conn, &m)?;
    if m.author_kind != AuthorKind::Human {
        rows::count_unseen(conn, &thread.id)?;
    }
    for (agent, resolved) in p.deliver {
        rows::insert_mention(
            conn,
            &Mention {
                id: 0,
                message_id: m.id.clone(),
                thread_id: thread.id.clone(),
                seq,
                kind: m.kind,
                agent,
                agent_origin: origin.clone(),
                resolved,
                unread: true,
                created_ms: now,
            },
        )?;
    }
    Ok(m)
}

/// Options of `chat send`.
#[derive(Debug, Clone, Default)]
pub struct SendOptions {
    /// Post as this registered agent instead of the human.
    pub as_agent: Option<String>,
    /// The seq this message answers.
    pub reply_to: Option<i64>,
    /// `(kind, id)` refs from `--ref kind:id`.
    pub refs: Vec<(String, String)>,
}

/// A sent message and the mentions that named no registered agent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub message: Message,
    pub unknown_mentions: Vec<String>,
}

/// What one send transaction did: either posted, or hit a moot cap (and possibly posted
/// the overrun notice, which must be committed even though the send is refused).
#[derive(Debug, Clone)]
pub enum SendOutcome {
    Sent(Box<Sent>),
    CapReached { slug: String, cap: i64 },
}

/// The chat send transaction shared by the CLI, the control room and the relay.
pub fn send(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    thread: &Thread,
    body: &str,
    opts: &SendOptions,
) -> Result<SendOutcome> {
    if body.trim().is_empty() {
        return Err(Invalid("chat send requires a non-empty message".into()).into());
    }
    require_open(thread, "sending")?;
    let (author_kind, author) = match &opts.as_agent {
        Some(a) => {
            agents::require(tx, a)?;
            if let Some(cap) = cap::cap(tx, &thread.id)?
                && cap::agent_turns(tx, &thread.id)? >= cap
            {
                post_overrun(tx, clock, thread, cap)?;
                return Ok(SendOutcome::CapReached {
                    slug: thread.slug.clone(),
                    cap,
                });
            }
            (AuthorKind::Agent, a.as_str())
        }
        None => (AuthorKind::Human, "human"),
    };
    if let Some(r) = opts.reply_to
        && rows::message_by_seq(tx, &thread.id, r)?.is_none()
    {
        return Err(Invalid(format!(
            "no message #{r} in thread {:?} to reply to",
            thread.slug
        ))
        .into());
    }
    let names = mentions::parse(body);
    let mut deliver = Vec::with_capacity(names.len());
    let mut unknown = Vec::new();
    for n in &names {
        let known = rows::agent_exists(tx, n)?;
        if !known {
            unknown.push(n.clone());
        }
        deliver.push((n.clone(), known));
    }
    let refs = opts
        .refs
        .iter()
        .map(|(kind, id)| Ref {
            kind: kind.clone(),
            origin: String::new(),
            repo: thread.repo.clone(),
            id: id.clone(),
            url: String::new(),
        })
        .collect();
    let message = append(
        tx,
        clock,
        thread,
        Post {
            kind: MessageKind::Chat,
            author_kind,
            author,
            body,
            mentions: names,
            deliver,
            refs,
            reply_to: opts.reply_to,
            job_id: None,
        },
    )?;
    Ok(SendOutcome::Sent(Box::new(Sent {
        message,
        unknown_mentions: unknown,
    })))
}

/// The refusal text of a send past a moot's cap.
pub(crate) fn cap_refusal(slug: &str, cap: i64) -> ChatError {
    ChatError::refused(format!(
        "moot cap reached: thread {slug:?} hit its {cap}-message cap; agent messages are closed — \
         stop conversing and return your conclusions (know / unsure / would-ask-next) in your gitmoot_result"
    ))
}

/// Resolves the thread and sends, committing the overrun notice before refusing a capped
/// send. `guard` runs on the resolved thread first (the relay binds a seat to its thread).
pub(crate) fn send_message_with(
    store: &mut Store,
    clock: &dyn Clock,
    thread_arg: &str,
    repo: Option<&str>,
    body: &str,
    opts: &SendOptions,
    guard: &dyn Fn(&Tx<'_>, &Thread) -> Result<()>,
) -> Result<Sent> {
    // On PostgreSQL, scoped to the thread: sends to other threads commit beside this one,
    // while the thread's own sends queue for its lock, which keeps its `seq` gap-free. An
    // argument spelled like a thread id is taken as one (an exact id wins in `resolve`), a
    // slug is looked up first; a guess that was wrong runs again unscoped. SQLite's writers
    // run one at a time whatever the scope.
    let arg = thread_arg.trim();
    let id = match store.backend() {
        crate::store::Backend::Postgres if arg.starts_with("chat-") || arg.starts_with("job-") => {
            Ok(Some(arg.to_string()))
        }
        crate::store::Backend::Postgres => {
            threads::resolve(&store.conn(), thread_arg, repo).map(|t| Some(t.id))
        }
        crate::store::Backend::Sqlite => Ok(None),
    };
    let scope = id
        .as_ref()
        .ok()
        .and_then(Option::as_deref)
        .map(crate::store::Scope::Thread);
    let outcome = write_retry_in(store, scope, |tx| {
        let thread = threads::resolve(tx, thread_arg, repo)?;
        if scope.is_some_and(|s| !matches!(s, crate::store::Scope::Thread(id) if id == thread.id)) {
            tx.unscoped("a thread renamed meanwhile")?;
        }
        guard(tx, &thread)?;
        send(tx, clock, &thread, body, opts)
    })?;
    match outcome {
        SendOutcome::Sent(s) => Ok(*s),
        SendOutcome::CapReached { slug, cap } => Err(cap_refusal(&slug, cap)),
    }
}

/// `chat send`: resolve, send, commit.
pub fn send_message(
    store: &mut Store,
    clock: &dyn Clock,
    thread_arg: &str,
    repo: Option<&str>,
    body: &str,
    opts: &SendOptions,
) -> Result<Sent> {
    send_message_with(store, clock, thread_arg, repo, body, opts, &|_, _| Ok(()))
}

/// The warning printed for a mention that named no registered agent.
pub(crate) fn unknown_mention_warning(name: &str) -> String {
    format!("warning: @{name} is not a registered agent; mention recorded but not delivered")
}

/// The `chat show` read model: a thread and its messages (all, or the newest `limit`).
pub(crate) fn transcript(
    conn: &Tx<'_>,
    thread: &Thread,
    limit: Option<usize>,
) -> Result<Vec<Message>> {
    Ok(rows::messages(conn, &thread.id, 0, limit)?)
}

/// Posts the overrun notice once per thread.
fn post_overrun(conn: &Tx<'_>, clock: &dyn Clock, thread: &Thread, cap: i64) -> Result<()> {
    let body = cap::overrun_text(cap);
    if !rows::system_body_exists(conn, &thread.id, &body)? {
        append(conn, clock, thread, Post::system(&body))?;
    }
    Ok(())
}
