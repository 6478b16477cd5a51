//! `ChatHooks`: chat's side of engine transitions, run inside the engine's transaction.
//!
//! - `job_finished` posts a tree's outcome as a `job_result` into the thread the tree is
//!   linked to (promotion, auto-respond, moot seat, or ask-gate). Rule: a job posts when it
//!   is the tree's own line of work (the root, or a continuation/finalize with no leg among
//!   its ancestors), reached a terminal state other than `cancelled`, and does not carry
//!   the tree forward (a succeeded result with delegations or human questions means a batch
//!   or an ask round follows, whose last continuation posts later). Each job id posts once,
//!   and once more per review round a write job was sent back for (`job review`).
//! - `ask_round_opened` links the round to its `job-<12 hex>` thread (`askgate::link`);
//!   `round_closed` retitles that thread for how the round closed (`askgate::retitle_closed`).
//! - `work_settled` posts a write job's land or discard as a `system` message into its
//!   tree's thread, replying to the message that asked for the work.
//!
//! A failure inside a hook is rolled back to a savepoint and recorded as an event: chat
//! never blocks a job from settling.

use crate::store::Tx;

use super::messages::{self, Post, job_ref};
use super::{ChatError, askgate};
use crate::clock::{Clock, SystemClock};
use crate::config::OrchestrateConfig;
use crate::contract::GitmootResult;
use crate::domain::{EventKind, JobKind, JobState};
use crate::engine::{EngineError, Env, Hooks};
use crate::store::chat::{self as rows, AuthorKind, MessageKind};
use crate::store::escalations::Round;
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};

pub struct ChatHooks;

/// The engine as every surface drives it (CLI verbs, the control room, the demo): the wall
/// clock and chat's hooks around the given knobs.
pub fn live_env(cfg: &OrchestrateConfig) -> Env<'_> {
    Env {
        clock: &SystemClock,
        cfg,
        hooks: &ChatHooks,
    }
}

const FIELD_CAP: usize = 2_000;
const BODY_CAP: usize = 60_000;

fn cap(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n).collect();
    out.push('…');
    out
}

/// The markdown body of a job_result message.
pub(crate) fn render_result(job: &Job) -> String {
    let result: Option<GitmootResult> = job
        .result
        .clone()
        .and_then(|v| serde_json::from_value(v).ok());
    let mut out = format!("> Agent: `{}`\n> Job: `{}`\n\n", job.agent, job.id);
    let decision = result
        .as_ref()
        .map(|r| r.decision.as_str().to_string())
        .unwrap_or_else(|| job.state.to_string());
    out.push_str(&format!("**Decision:** `{decision}`\n"));
    let summary = result
        .as_ref()
        .map(|r| r.summary.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or("No summary provided.");
    out.push_str(&format!("**Summary:** {}\n", cap(summary, FIELD_CAP)));
    if let Some(r) = &result {
        if !r.findings.is_empty() {
            out.push_str("\n**Findings**\n");
            for f in &r.findings {
                out.push_str(&cap(&crate::report::findings::render(f), FIELD_CAP));
                out.push('\n');
            }
        }
        for (title, items) in [
            ("Changes Made", &r.changes_made),
            ("Tests Run", &r.tests_run),
            ("Needs", &r.needs),
        ] {
            if items.is_empty() {
                continue;
            }
            out.push_str(&format!("\n**{title}**\n"));
            for i in items {
                out.push_str(&format!("- {}\n", cap(i, FIELD_CAP)));
            }
        }
    }
    if let Some(e) = &job.error {
        out.push_str(&format!("\n**Error:** {}\n", cap(e, FIELD_CAP)));
    }
    cap(&out, BODY_CAP)
}

/// Whether `job` is its tree's own line of work (no leg among itself and its ancestors).
fn on_main_line(conn: &Tx<'_>, job: &Job) -> Result<bool, ChatError> {
    let mut current = Some(job.clone());
    while let Some(j) = current {
        if j.kind == JobKind::Leg {
            return Ok(false);
        }
        current = match &j.parent_id {
            Some(p) => jobs::get(conn, p)?,
            None => None,
        };
    }
    Ok(true)
}

/// Whether the job hands the tree on (a batch or an ask round follows it).
fn carries_on(job: &Job) -> bool {
    if job.state != JobState::Succeeded {
        return false;
    }
    let result: Option<GitmootResult> = job
        .result
        .clone()
        .and_then(|v| serde_json::from_value(v).ok());
    result.is_some_and(|r| !r.delegations.is_empty() || !r.human_questions.is_empty())
}

/// How often a write job was sent back for review: each round's result posts too.
fn review_rounds(conn: &Tx<'_>, job: &Job) -> Result<i64, ChatError> {
    Ok(crate::store::worktrees::get(conn, &job.id)?.map_or(0, |w| w.review_rounds))
}

/// Posts the job's result into its tree's thread when the rule above says so; returns
/// the posted seq.
pub(crate) fn post_job_result(
    conn: &Tx<'_>,
    clock: &dyn Clock,
    job: &Job,
) -> Result<Option<i64>, ChatError> {
    let Some(link) = rows::link(conn, &job.root_id)? else {
        return Ok(None);
    };
    if !job.state.is_terminal()
        || job.state == JobState::Cancelled
        || carries_on(job)
        || !on_main_line(conn, job)?
        || rows::results_posted(conn, &job.id)? > review_rounds(conn, job)?
    {
        return Ok(None);
    }
    let Some(thread) = rows::thread(conn, &link.thread_id)? else {
        return Ok(None);
    };
    let body = render_result(job);
    let m = messages::append(
        conn,
        clock,
        &thread,
        Post {
            kind: MessageKind::JobResult,
            author_kind: AuthorKind::Agent,
            author: &job.agent,
            body: &body,
            mentions: Vec::new(),
            deliver: Vec::new(),
            refs: vec![job_ref(
                conn,
                job.repo.as_deref().unwrap_or(&thread.repo),
                &job.id,
            )?],
            reply_to: Some(link.reply_to),
            job_id: Some(job.id.clone()),
        },
    )?;
    events::append(
        conn,
        NewEvent::job(
            clock.now_ms(),
            &job.root_id,
            &job.id,
            EventKind::ChatResultPosted,
        )
        .message(format!(
            "posted job result into chat thread {}",
            thread.slug
        ))
        .data(serde_json::json!({"thread_id": thread.id, "seq": m.seq})),
    )?;
    Ok(Some(m.seq))
}

/// Runs `f` under a savepoint; a failure is rolled back and recorded, never propagated.
fn contained(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    job: &Job,
    failure_kind: EventKind,
    f: impl FnOnce() -> Result<(), ChatError>,
) -> Result<(), EngineError> {
    if let Err(e) = crate::store::savepoint(tx, f)? {
        events::append(
            tx,
            NewEvent::job(clock.now_ms(), &job.root_id, &job.id, failure_kind)
                .message(e.to_string()),
        )?;
    }
    Ok(())
}

impl Hooks for ChatHooks {
    fn ask_round_opened(
        &self,
        tx: &Tx<'_>,
        clock: &dyn Clock,
        job: &Job,
        escalation_id: i64,
    ) -> Result<(), EngineError> {
        contained(tx, clock, job, EventKind::ChatLinkFailed, || {
            askgate::link(tx, clock, job, escalation_id).map(|_| ())
        })
    }

    fn round_closed(
        &self,
        tx: &Tx<'_>,
        clock: &dyn Clock,
        round: &Round,
    ) -> Result<(), EngineError> {
        let job = jobs::require(tx, &round.job_id)?;
        contained(tx, clock, &job, EventKind::ChatLinkFailed, || {
            askgate::retitle_closed(tx, clock, round)
        })
    }

    fn job_finished(&self, tx: &Tx<'_>, clock: &dyn Clock, job: &Job) -> Result<(), EngineError> {
        contained(tx, clock, job, EventKind::ChatResultPostFailed, || {
            post_job_result(tx, clock, job).map(|_| ())
        })
    }

    fn work_settled(
        &self,
        tx: &Tx<'_>,
        clock: &dyn Clock,
        job: &Job,
        note: &str,
    ) -> Result<(), EngineError> {
        contained(tx, clock, job, EventKind::ChatResultPostFailed, || {
            post_work_note(tx, clock, job, note)
        })
    }
}

/// Posts `note` about the job's work into its tree's thread, if it has one.
fn post_work_note(
    conn: &Tx<'_>,
    clock: &dyn Clock,
    job: &Job,
    note: &str,
) -> Result<(), ChatError> {
    let Some(link) = rows::link(conn, &job.root_id)? else {
        return Ok(());
    };
    let Some(thread) = rows::thread(conn, &link.thread_id)? else {
        return Ok(());
    };
    messages::append(
        conn,
        clock,
        &thread,
        Post {
            kind: MessageKind::System,
            author_kind: AuthorKind::System,
            author: "gitmoot",
            body: note,
            mentions: Vec::new(),
            deliver: Vec::new(),
            refs: Vec::new(),
            reply_to: Some(link.reply_to),
            job_id: Some(job.id.clone()),
        },
    )?;
    Ok(())
}
