//! Answering an ask round, from any surface (`job answer`, `chat answer`, the control
//! room): `answer_job` posts the human's text to the round's ask-gate thread, hands it to
//! the engine's answer path and retitles the thread answered, all in one transaction.
//! `chat answer` first resolves a thread to the job paused on it (through the escalation
//! row that records the thread).

use crate::store::Tx;

use super::messages::{self, Post, job_ref};
use super::{ChatError, Result, threads, write_retry};
use crate::Invalid;
use crate::clock::Clock;
use crate::engine::{self, Env};
use crate::store::Store;
use crate::store::chat::{self as rows, AuthorKind, Message, MessageKind, Thread};
use crate::store::escalations::{self, RoundKind};

/// The job whose open ask round is linked to `thread`.
pub fn resolve_target(conn: &Tx<'_>, thread: &Thread) -> Result<String> {
    if let Some((job_id, kind)) = escalations::open_on_thread(conn, &thread.id)? {
        if kind != "ask" {
            return Err(ChatError::refused(format!(
                "job {job_id} is paused on a {kind} escalation, not an ask; resume it with \
                 `gitmoot job resume {job_id} retry|continue|abort`, not answer"
            )));
        }
        return Ok(job_id);
    }
    Err(ChatError::refused(
        match escalations::last_job_on_thread(conn, &thread.id)? {
            Some(job) => format!(
                "job {job} has no pending question to answer (it was already answered or finalized)"
            ),
            None => format!("thread {:?} is not linked to a paused job", thread.slug),
        },
    ))
}

/// What `chat answer` did.
#[derive(Debug, Clone)]
pub struct Answered {
    pub thread: Thread,
    pub job_id: String,
    /// The human's answer as recorded in the thread.
    pub message: Message,
    /// The answer continuation, when the engine enqueued one now.
    pub continuation: Option<String>,
}

/// What answering a job did, whichever surface the answer came from.
#[derive(Debug, Clone)]
pub(crate) struct JobAnswered {
    /// The ask-gate thread and the human's message in it, when the round has a thread.
    pub posted: Option<(Thread, Message)>,
    pub continuation: Option<String>,
}

/// The thread the newest open ask round of `job_id` is linked to, if any (a coordinator
/// may hold an open failure round beside it).
fn ask_thread(conn: &Tx<'_>, job_id: &str) -> Result<Option<Thread>> {
    let open_ask = escalations::for_job(conn, job_id)?
        .into_iter()
        .rev()
        .find(|r| r.kind == RoundKind::Ask && r.resolved_ms.is_none());
    match open_ask.and_then(|r| r.thread_id) {
        Some(id) => Ok(rows::thread(conn, &id)?),
        None => Ok(None),
    }
}

/// The one answer path of `job answer`, `chat answer` and the control room: the human's
/// text is posted to the round's ask-gate thread (replying to the question), the engine's
/// answer path resumes the tree, and the thread is retitled answered. All in the caller's
/// transaction, so a refused answer records nothing.
pub(crate) fn answer_job(
    tx: &Tx<'_>,
    env: Env<'_>,
    job_id: &str,
    text: &str,
) -> Result<JobAnswered> {
    // The engine refuses an empty answer, rolling the posted message back with it.
    let posted = match ask_thread(tx, job_id)? {
        Some(thread) => {
            let message = post_answer(tx, env.clock, &thread, job_id, text)?;
            Some((thread, message))
        }
        None => None,
    };
    let continuation = engine::answer(tx, env, job_id, text)?;
    // The engine's round_closed hook retitled the thread; show it as it is now.
    let posted = match posted {
        Some((thread, message)) => Some((rows::thread(tx, &thread.id)?.unwrap_or(thread), message)),
        None => None,
    };
    Ok(JobAnswered {
        posted,
        continuation,
    })
}

fn post_answer(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    thread: &Thread,
    job_id: &str,
    text: &str,
) -> Result<Message> {
    let mut post = Post {
        kind: MessageKind::Chat,
        author_kind: AuthorKind::Human,
        author: "human",
        body: text,
        mentions: Vec::new(),
        deliver: Vec::new(),
        refs: vec![job_ref(tx, &thread.repo, job_id)?],
        reply_to: None,
        job_id: None,
    };
    post.reply_to = rows::messages(tx, &thread.id, 0, None)?
        .iter()
        .rev()
        .find(|m| {
            m.kind == MessageKind::System
                && m.refs.iter().any(|r| r.kind == "job" && r.id == job_id)
        })
        .map(|m| m.seq);
    messages::append(tx, clock, thread, post)
}

/// Answers the job paused on `thread` (see `answer_job`).
pub fn answer(tx: &Tx<'_>, env: Env<'_>, thread: &Thread, text: &str) -> Result<Answered> {
    if text.trim().is_empty() {
        return Err(Invalid("chat answer requires a non-empty answer".into()).into());
    }
    let job_id = resolve_target(tx, thread)?;
    let done = answer_job(tx, env, &job_id, text)?;
    let (thread, message) = match done.posted {
        Some(p) => p,
        // The round's own thread is the one resolved above; a round recorded without it
        // still gets the answer where the human gave it.
        None => {
            let message = post_answer(tx, env.clock, thread, &job_id, text)?;
            (thread.clone(), message)
        }
    };
    Ok(Answered {
        thread,
        job_id,
        message,
        continuation: done.continuation,
    })
}

/// `job answer` and the control room: answer by job id, commit.
pub(crate) fn answer_job_message(
    store: &mut Store,
    env: Env<'_>,
    job_id: &str,
    text: &str,
) -> Result<JobAnswered> {
    write_retry(store, |tx| answer_job(tx, env, job_id, text))
}

/// `chat answer`: resolve the thread, answer, commit.
pub fn answer_message(
    store: &mut Store,
    env: Env<'_>,
    thread_arg: &str,
    repo: Option<&str>,
    text: &str,
) -> Result<Answered> {
    write_retry(store, |tx| {
        let thread = threads::resolve(tx, thread_arg, repo)?;
        answer(tx, env, &thread, text)
    })
}

/// `job answer --where … --choice X` and the control room's marked rows: every job in `ids`
/// given the one choice `choice` through `answer_job`, each in its own savepoint
/// (`engine::bulk::each`), so a job not waiting on a question, or whose question does not
/// offer it, is refused with its reason and the rest are answered; a dry run rolls each
/// back.
pub fn answer_many(
    tx: &Tx<'_>,
    env: Env<'_>,
    ids: &[String],
    choice: &str,
    dry_run: bool,
) -> Result<Vec<engine::bulk::Item>> {
    if choice.trim().is_empty() {
        return Err(Invalid("--choice is empty; name one of the questions' choices".into()).into());
    }
    let verb = crate::domain::BulkVerb::Answer;
    engine::bulk::each(tx, verb, ids, dry_run, ChatError::is_invalid, |id| {
        let text = engine::choice_answer(tx, id, choice)?;
        let done = answer_job(tx, env, id, &text)?;
        Ok(answered_says(id, choice, &done))
    })
}

/// `job answer JOB TEXT --dry-run`: the answer given through `answer_job` in a savepoint
/// that is then rolled back, said as `answer_many` says it; nothing is posted or queued.
pub fn answer_preview(
    tx: &Tx<'_>,
    env: Env<'_>,
    id: &str,
    text: &str,
) -> Result<Vec<engine::bulk::Item>> {
    let verb = crate::domain::BulkVerb::Answer;
    let ids = [id.to_string()];
    engine::bulk::each(tx, verb, &ids, true, ChatError::is_invalid, |id| {
        let done = answer_job(tx, env, id, text)?;
        Ok(answered_says(id, text, &done))
    })
}

/// `answer JOB "TEXT" (what follows)`: one answered job, as a bulk item says it.
fn answered_says(id: &str, text: &str, done: &JobAnswered) -> String {
    let then = match done.continuation {
        Some(_) => "it resumes: its continuation is queued",
        None => "it resumes once its other legs finish",
    };
    format!("answer {id} {:?} ({then})", text.trim())
}
