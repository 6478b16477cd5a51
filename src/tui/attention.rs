//! Store → the Attention pane's items: every open ask and failure round, the coordinators
//! whose delegations the preflight refused, the jobs a lost daemon left `interrupted`, and
//! the running jobs stalled now.
//!
//! Owns the mapping of those rows to `AttentionItem`s; never writes. The write jobs'
//! overlap items are `work.rs`'s.

use gitmoot_ui::view::{AttentionItem, AttentionKind, Question};

use crate::domain::JobState;
use crate::engine::{self, EngineError};
use crate::store::escalations::RoundKind;
use crate::store::{Tx, jobs, views};

/// Oldest open rounds the Attention pane holds (several screens); `job pending` lists all.
const ATTENTION_SHOWN: usize = 100;

type Result<T> = std::result::Result<T, EngineError>;

/// The open ask and failure rounds, oldest first: they change only with the rounds'
/// signature (`views::open_rounds_signature`).
pub(super) fn rounds(conn: &Tx<'_>) -> Result<Vec<AttentionItem>> {
    let mut out = Vec::new();
    for p in engine::escalation::pending_first(conn, Some(ATTENTION_SHOWN))? {
        // Only the agent and the summary: the full row would drag the raw output along.
        let job = views::agent_and_summary(conn, &p.job_id)?;
        let kind = match p.kind {
            RoundKind::Ask => AttentionKind::Ask {
                questions: p
                    .questions
                    .iter()
                    .map(|q| Question {
                        id: q.id.clone(),
                        prompt: gitmoot_ui::sanitize::clean(&q.prompt),
                        choices: q
                            .choices
                            .iter()
                            .map(|c| gitmoot_ui::sanitize::clean(c))
                            .collect(),
                    })
                    .collect(),
            },
            RoundKind::Failure => AttentionKind::Failure {
                failed_leg: failed_leg(conn, &p.job_id)?.unwrap_or_default(),
                reason: gitmoot_ui::sanitize::clean(&p.reason),
            },
        };
        out.push(AttentionItem {
            job_id: p.job_id.clone(),
            root_id: p.root_id.clone(),
            why: job
                .as_ref()
                .and_then(|(_, summary)| summary.as_deref())
                .map(gitmoot_ui::sanitize::clean),
            agent: job.map(|(agent, _)| agent).unwrap_or_default(),
            opened_ms: p.opened_at,
            thread: p.thread.clone(),
            kind,
        });
    }
    Ok(out)
}

/// What the event log and the job states raise: preflight refusals, interrupted jobs and
/// stalls; they change only with a touched tree.
pub(super) fn raised(conn: &Tx<'_>) -> Result<Vec<AttentionItem>> {
    let mut out = preflight_attention(conn)?;
    out.extend(interrupted_attention(conn)?);
    out.extend(stall_attention(conn)?);
    Ok(out)
}

/// Running jobs stalled now (`engine::stall`): the signal and its evidence, cancel or
/// leave it.
fn stall_attention(conn: &Tx<'_>) -> Result<Vec<AttentionItem>> {
    let mut out = Vec::new();
    for e in crate::store::stalls::current(conn)? {
        let (Some(job_id), Some(root_id)) = (e.job_id, e.root_id) else {
            continue;
        };
        let data = e.data.unwrap_or_default();
        let Ok(signal) = data["signal"].as_str().unwrap_or_default().parse() else {
            continue;
        };
        let agent = views::agent_and_summary(conn, &job_id)?.map(|(a, _)| a);
        out.push(AttentionItem {
            kind: AttentionKind::Stall {
                signal,
                evidence: gitmoot_ui::sanitize::clean(data["evidence"].as_str().unwrap_or("")),
            },
            job_id,
            root_id,
            agent: agent.unwrap_or_default(),
            opened_ms: e.ts_ms,
            why: None,
            thread: None,
        });
    }
    Ok(out)
}

/// Jobs left `interrupted` by a lost daemon: shown as a failure round of their own, whose
/// retry runs the job again and whose abort cancels it (`engine::lost::resume`).
fn interrupted_attention(conn: &Tx<'_>) -> Result<Vec<AttentionItem>> {
    let filter = jobs::JobFilter {
        state: Some(JobState::Interrupted),
        limit: Some(ATTENTION_SHOWN),
        ..jobs::JobFilter::default()
    };
    Ok(jobs::list(conn, &filter)?
        .into_iter()
        .map(|j| AttentionItem {
            kind: AttentionKind::Failure {
                failed_leg: j.id.clone(),
                reason: format!(
                    "interrupted: the daemon running this {} was lost and its writes may be half done; retry runs it again, abort cancels it",
                    j.action
                ),
            },
            job_id: j.id,
            root_id: j.root_id,
            opened_ms: j.updated_ms,
            agent: gitmoot_ui::sanitize::clean(&j.agent),
            why: None,
            thread: None,
        })
        .collect())
}

/// Coordinators whose newest delegation set was refused by the preflight, while their
/// tree is still live (a finished tree has nothing left to fix).
fn preflight_attention(conn: &Tx<'_>) -> Result<Vec<AttentionItem>> {
    Ok(views::preflight_refusals(conn)?
        .into_iter()
        .map(|r| AttentionItem {
            job_id: r.job_id,
            root_id: r.root_id,
            kind: AttentionKind::Preflight {
                reason: gitmoot_ui::sanitize::clean(&r.reason),
            },
            opened_ms: r.ts_ms,
            agent: r.agent,
            why: None,
            thread: None,
        })
        .collect())
}

/// The leg of the coordinator's open failure round. The oldest open round is not enough:
/// a coordinator can wait on an ask round (opened by another leg) and a failure at once.
fn failed_leg(conn: &Tx<'_>, job_id: &str) -> Result<Option<String>> {
    Ok(crate::store::escalations::for_job(conn, job_id)?
        .into_iter()
        .rev()
        .find(|r| r.kind == RoundKind::Failure && r.resolved_ms.is_none())
        .and_then(|r| r.failed_job_id.or(r.delegation_id)))
}
