//! `chat task`: promoting a message into one root job. Exactly one registered agent must be
//! mentioned in the task body; a new task's `promotion_request` is recorded before
//! dispatch (so the intent survives a refused dispatch); an identical (thread, body)
//! promotion that did dispatch within 60 s is refused; the message is back-linked to the
//! job. Promoting a message already in the thread tags that message instead of posting a
//! copy of it.

use crate::store::Tx;

use super::messages::{self, Post};
use super::threads::{self, require_open};
use super::{ChatError, Result, mentions, write_retry};
use crate::Invalid;
use crate::clock::Clock;
use crate::domain::{Action, JobState};
use crate::engine::{EngineError, submit_root};
use crate::store::chat::{
    self as rows, AuthorKind, JobLink, LinkPurpose, Message, MessageKind, Thread,
};
use crate::store::{Store, jobs};

/// The fingerprint window of a promotion.
pub(crate) const DEDUPE_WINDOW_MS: i64 = 60_000;

#[derive(Debug, Clone)]
pub struct Promoted {
    pub thread: Thread,
    /// The promoting message (a new promotion_request, or the promoted chat message),
    /// with `promoted_job_id` set.
    pub message: Message,
    pub job_id: String,
    pub agent: String,
    pub action: Action,
    pub state: JobState,
}

/// The one agent a task body names, or the error saying why not.
pub(crate) fn target_agent(conn: &Tx<'_>, body: &str) -> Result<String> {
    let mut registered = Vec::new();
    for name in mentions::parse(body) {
        if rows::agent_exists(conn, &name)? {
            registered.push(name);
        }
    }
    match registered.len() {
        1 => Ok(registered.remove(0)),
        0 => Err(Invalid(
            "chat task requires exactly one @agent mention that names a registered agent".into(),
        )
        .into()),
        n => Err(Invalid(format!(
            "chat task requires exactly one registered @agent, found {n}: {}",
            registered.join(", ")
        ))
        .into()),
    }
}

/// The thread's newest 20 messages as prompt context; promotion and auto-respond share it.
pub(crate) fn recent_context(conn: &Tx<'_>, thread: &Thread) -> Result<String> {
    let recent = rows::messages(conn, &thread.id, 0, Some(20))?;
    let mut out = format!(
        "Chat thread \"{}\" ({}) — recent messages:\n",
        thread.slug, thread.repo
    );
    for m in &recent {
        out.push_str(&format!(
            "[{}] {}: {}\n",
            m.kind,
            m.author_name,
            m.body.trim()
        ));
    }
    Ok(out)
}

/// The prompt of a promoted job: the task first (it also titles the run), then the
/// thread's recent messages as context.
pub fn prompt(conn: &Tx<'_>, thread: &Thread, body: &str) -> Result<String> {
    Ok(format!(
        "{}\n\nTask promoted from the chat thread below; do it and report in your gitmoot_result.\n\n{}",
        body.trim(),
        recent_context(conn, thread)?
    ))
}

/// One promotion transaction: either a dispatched job, or a recorded request whose
/// dispatch the gate refused (committed, then reported as the error).
pub enum TaskOutcome {
    Dispatched(Box<Promoted>),
    Refused(EngineError),
}

pub fn task(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    thread: &Thread,
    body: &str,
    action: Action,
) -> Result<TaskOutcome> {
    if body.trim().is_empty() {
        return Err(Invalid("chat task requires a non-empty message".into()).into());
    }
    require_open(thread, "promoting")?;
    let agent = target_agent(tx, body)?;
    let now = clock.now_ms();
    if rows::recent_promotion_exists(tx, &thread.id, body, now - DEDUPE_WINDOW_MS)? {
        return Err(ChatError::refused(
            "an identical promotion was already requested in this thread within the last 60s; not re-dispatching",
        ));
    }
    let message = messages::append(
        tx,
        clock,
        thread,
        Post {
            kind: MessageKind::PromotionRequest,
            author_kind: AuthorKind::Human,
            author: "human",
            body,
            mentions: vec![agent.clone()],
            deliver: Vec::new(),
            refs: Vec::new(),
            reply_to: None,
            job_id: None,
        },
    )?;
    dispatch(tx, clock, thread, message, agent, action)
}

/// Submits the job a promoting message asks for and back-links that message to it; its
/// result will be posted as a reply to the message.
fn dispatch(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    thread: &Thread,
    mut message: Message,
    agent: String,
    action: Action,
) -> Result<TaskOutcome> {
    let prompt = prompt(tx, thread, &message.body)?;
    // A savepoint keeps the request durable even if the gate refuses after writing.
    let submitted = crate::store::savepoint(tx, || {
        submit_root(tx, clock, super::thread_job(thread, &agent, action, prompt))
    })?;
    let job_id = match submitted {
        Ok(id) => id,
        // Bad input (an agent lacking the capability, an unknown repo) exits 2 and must
        // change nothing: the whole transaction, request included, rolls back.
        Err(e @ EngineError::Invalid(_)) => return Err(e.into()),
        Err(e) => return Ok(TaskOutcome::Refused(e)),
    };
    rows::set_promoted_job(tx, &message.id, &job_id)?;
    message.promoted_job_id = Some(job_id.clone());
    rows::insert_link(
        tx,
        &JobLink {
            root_id: job_id.clone(),
            thread_id: thread.id.clone(),
            reply_to: message.seq,
            purpose: LinkPurpose::Promotion,
            agent: agent.clone(),
            created_ms: clock.now_ms(),
        },
    )?;
    let state = jobs::require(tx, &job_id)?.state;
    Ok(TaskOutcome::Dispatched(Box::new(Promoted {
        thread: thread.clone(),
        message,
        job_id,
        agent,
        action,
        state,
    })))
}

/// `chat task`: resolve, promote, commit; a refused dispatch is returned as its error
/// after the request was committed.
pub fn task_message(
    store: &mut Store,
    clock: &dyn Clock,
    thread_arg: &str,
    repo: Option<&str>,
    body: &str,
    action: Action,
) -> Result<Promoted> {
    let none = crate::config::Config::default();
    let t = Task {
        action,
        base: None,
        config: &none,
    };
    task_message_as(store, clock, thread_arg, repo, body, t)
}

/// What a `chat task` asks for: its action and, for an implement job, the base its branch
/// starts from (checked against the thread's repo in `config`).
pub struct Task<'a> {
    pub action: Action,
    pub base: Option<&'a str>,
    pub config: &'a crate::config::Config,
}

/// `chat task` with a base for the job's branch (`--base`).
pub fn task_message_as(
    store: &mut Store,
    clock: &dyn Clock,
    thread_arg: &str,
    repo: Option<&str>,
    body: &str,
    t: Task<'_>,
) -> Result<Promoted> {
    let outcome = write_retry(store, |tx| {
        let thread = threads::resolve(tx, thread_arg, repo)?;
        if let Some(base) = t.base {
            crate::worktree::check_base(t.config, Some(thread.repo.as_str()), t.action, base)
                .map_err(|e| Invalid(crate::error_line(&e)))?;
        }
        let outcome = task(tx, clock, &thread, body, t.action)?;
        if let (TaskOutcome::Dispatched(p), Some(base)) = (&outcome, t.base) {
            let job = jobs::require(tx, &p.job_id)?;
            crate::worktree::request_base(tx, &job, base, job.created_ms)?;
        }
        Ok(outcome)
    })?;
    match outcome {
        TaskOutcome::Dispatched(p) => Ok(*p),
        TaskOutcome::Refused(e) => Err(e.into()),
    }
}

/// The control room's `p` (and `chat task THREAD --seq N`): promotes an existing message
/// of the thread by its seq. The message itself is tagged with the job and the result
/// replies to it; nothing is copied, since the message already records the intent. Only
/// `chat` messages are promotable (a job_result, system notice or promotion request never
/// is), and each one once: promoting it again is refused, naming its job.
pub fn promote_message(
    store: &mut Store,
    clock: &dyn Clock,
    thread_arg: &str,
    repo: Option<&str>,
    seq: i64,
    action: Action,
) -> Result<Promoted> {
    let outcome = write_retry(store, |tx| {
        let thread = threads::resolve(tx, thread_arg, repo)?;
        require_open(&thread, "promoting")?;
        let m = rows::message_by_seq(tx, &thread.id, seq)?
            .ok_or_else(|| Invalid(format!("no message #{seq} in thread {:?}", thread.slug)))?;
        if m.kind != MessageKind::Chat {
            return Err(Invalid(format!(
                "message #{seq} is a {} message; only chat messages can be promoted",
                m.kind
            ))
            .into());
        }
        if let Some(job) = &m.promoted_job_id {
            return Err(ChatError::refused(format!(
                "message #{seq} was already promoted to {job}; not re-dispatching"
            )));
        }
        let agent = target_agent(tx, &m.body)?;
        dispatch(tx, clock, &thread, m, agent, action)
    })?;
    match outcome {
        TaskOutcome::Dispatched(p) => Ok(*p),
        TaskOutcome::Refused(e) => Err(e.into()),
    }
}
