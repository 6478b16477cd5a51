//! The ask-gate link: when a tree pauses for a human, the job's `job-<12 hex>` thread is
//! created or reused on the job's repo, the questions (or the failure reason) are posted
//! as a system message with a `{kind:job}` ref, the asking agent gets an inbox row, and
//! the escalation row records the thread. Called from `ChatHooks::ask_round_opened`.

use crate::store::Tx;

use super::messages::{self, Post, job_ref};
use super::slug::job_thread_slug;
use super::{Result, threads};
use crate::clock::Clock;
use crate::contract::HumanQuestion;
use crate::domain::EventKind;
use crate::store::chat::{self as rows, JobLink, LinkPurpose, Message, Thread};
use crate::store::escalations::{self, Round};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::Job;

/// `- <id>: <prompt>` per question, ` (choices: a, b)` when it has choices; the reason
/// for a failure round.
pub(crate) fn questions_body(e: &Round) -> String {
    let parsed = serde_json::from_value::<Vec<HumanQuestion>>(e.questions.clone())
        .ok()
        .filter(|q| !q.is_empty());
    match parsed {
        Some(qs) => qs
            .iter()
            .map(|q| {
                let choices = if q.choices.is_empty() {
                    String::new()
                } else {
                    format!(" (choices: {})", q.choices.join(", "))
                };
                format!("- {}: {}{choices}", q.id, q.prompt)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        None if !e.reason.trim().is_empty() => e.reason.clone(),
        None if !e.questions.is_null() => e.questions.to_string(),
        None => waiting(&e.job_id),
    }
}

fn waiting(job_id: &str) -> String {
    format!("job {job_id} is waiting for a human")
}

fn job_tail(job_id: &str) -> String {
    let n = job_id.chars().count();
    job_id.chars().skip(n.saturating_sub(12)).collect()
}

fn title(job_id: &str) -> String {
    format!("Job {} — awaiting answer", job_tail(job_id))
}

/// The title of an ask-gate thread whose question was answered.
pub(crate) fn answered_title(job_id: &str) -> String {
    format!("Job {} — answered", job_tail(job_id))
}

/// Retitles a closed round's thread for how it closed (answered, expired by its TTL,
/// closed by a kill or cancel), unless a human gave it a title of their own: a thread whose
/// round no longer waits never keeps "awaiting answer".
pub(crate) fn retitle_closed(conn: &Tx<'_>, clock: &dyn Clock, round: &Round) -> Result<()> {
    let Some(thread) = round.thread_id.as_deref() else {
        return Ok(());
    };
    let Some(thread) = rows::thread(conn, thread)? else {
        return Ok(());
    };
    if thread.title != title(&round.job_id) {
        return Ok(());
    }
    let tail = job_tail(&round.job_id);
    let new = match round.verb.as_deref().unwrap_or("") {
        "answer" => answered_title(&round.job_id),
        "ttl" => format!("Job {tail} — expired unanswered"),
        verb => format!("Job {tail} — closed ({verb})"),
    };
    threads::rename(conn, clock, &thread, &new)?;
    Ok(())
}

/// Links an opened round to its thread; returns the thread and the system message.
pub fn link(
    conn: &Tx<'_>,
    clock: &dyn Clock,
    job: &Job,
    escalation_id: i64,
) -> Result<(Thread, Message)> {
    let esc = escalations::get(conn, escalation_id)?;
    let target = esc
        .as_ref()
        .map(|e| e.job_id.clone())
        .filter(|id| !id.trim().is_empty())
        .unwrap_or_else(|| job.id.clone());
    let repo = job.repo.clone().unwrap_or_default();
    let mut thread = threads::get_or_create(
        conn,
        clock,
        &job_thread_slug(&target),
        &repo,
        &title(&target),
        "system",
    )?;
    // A later round on the same job waits again.
    if thread.title == answered_title(&target) {
        thread = threads::rename(conn, clock, &thread, &title(&target))?;
    }
    let body = esc
        .as_ref()
        .map_or_else(|| waiting(&target), questions_body);
    let mut post = Post::system(&body);
    post.refs = vec![job_ref(conn, &repo, &target)?];
    post.deliver = vec![(job.agent.clone(), true)];
    let message = messages::append(conn, clock, &thread, post)?;
    escalations::set_thread(conn, escalation_id, &thread.id)?;
    let now = clock.now_ms();
    rows::insert_link(
        conn,
        &JobLink {
            root_id: job.root_id.clone(),
            thread_id: thread.id.clone(),
            reply_to: message.seq,
            purpose: LinkPurpose::AskGate,
            agent: job.agent.clone(),
            created_ms: now,
        },
    )?;
    events::append(
        conn,
        NewEvent::job(now, &job.root_id, &target, EventKind::ChatThreadLinked)
            .message(format!("linked ask-gate chat thread {}", thread.slug))
            .data(serde_json::json!({
                "thread_id": thread.id,
                "seq": message.seq,
                "escalation_id": escalation_id,
            })),
    )?;
    Ok((thread, message))
}
