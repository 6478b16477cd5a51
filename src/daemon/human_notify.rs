//! The local @-tag: when a tree pauses for a human (an ask round or an `escalate_human`
//! failure round), the daemon runs `[notify] command` once for that round with the gate as
//! JSON on stdin, so it can post to Slack, send mail or page. Each round is notified at
//! most once: a `human_notify` event records the attempt before the command starts, and a
//! `human_notify_failed` event records a command that failed or timed out.
//!
//! Owns the payload and the command's process; which rounds are open is the engine's.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use crate::store::Tx;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::Shared;
use crate::clock::Clock;
use crate::domain::EventKind;
use crate::store::StoreError;
use crate::store::escalations::{self, Round, RoundKind};
use crate::store::events::{self, NewEvent};
use crate::store::{chat, jobs};

/// One gate to tell a human about.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The round it tells of; `None` for a stall.
    pub escalation_id: Option<i64>,
    pub job_id: String,
    pub root_id: String,
    pub payload: Value,
}

fn already_notified(tx: &Tx<'_>, r: &Round) -> Result<bool, StoreError> {
    Ok(events::for_job(tx, &r.job_id)?.iter().any(|e| {
        e.is(EventKind::HumanNotify) && e.data.as_ref().is_some_and(|d| d["escalation_id"] == r.id)
    }))
}

/// The gate as the command reads it on stdin.
fn payload(tx: &Tx<'_>, r: &Round) -> Result<Value, StoreError> {
    let job = jobs::get(tx, &r.job_id)?;
    let thread = match &r.thread_id {
        Some(id) => chat::thread(tx, id)?.map(|t| t.slug),
        None => None,
    };
    let answer_with = match r.kind {
        RoundKind::Ask => format!(
            "gitmoot job answer {} \"<question-id>: <answer>\"",
            r.job_id
        ),
        RoundKind::Failure => format!("gitmoot job resume {} retry|continue|abort", r.job_id),
    };
    Ok(json!({
        "event": "human_needed",
        "kind": r.kind.as_str(),
        "escalation_id": r.id,
        "job_id": r.job_id,
        "root_id": r.root_id,
        "agent": job.as_ref().map(|j| j.agent.clone()),
        "repo": job.and_then(|j| j.repo),
        "questions": r.questions,
        "reason": r.reason,
        "failed_job_id": r.failed_job_id,
        "thread": thread,
        "opened_ms": r.opened_ms,
        "answer_with": answer_with,
    }))
}

/// Open rounds nobody was told about yet, each marked notified in `tx`.
pub(crate) fn claim_pending(tx: &Tx<'_>, clock: &dyn Clock) -> Result<Vec<Pending>, StoreError> {
    let mut out = Vec::new();
    for r in escalations::open(tx)? {
        if already_notified(tx, &r)? {
            continue;
        }
        let payload = payload(tx, &r)?;
        events::append(
            tx,
            NewEvent::job(
                clock.now_ms(),
                &r.root_id,
                &r.job_id,
                EventKind::HumanNotify,
            )
            .message(format!(
                "running [notify] command for the {} round",
                r.kind.as_str()
            ))
            .data(json!({"escalation_id": r.id})),
        )?;
        out.push(Pending {
            escalation_id: Some(r.id),
            job_id: r.job_id,
            root_id: r.root_id,
            payload,
        });
    }
    Ok(out)
}

/// A stall the watch raised, told like a gate: `"event": "job_stalled"` with its evidence.
/// The `job_stalled` event already marks it, so it is told once.
pub(crate) fn stalled(r: &crate::engine::stall::Raised) -> Pending {
    Pending {
        escalation_id: None,
        job_id: r.job_id.clone(),
        root_id: r.root_id.clone(),
        payload: json!({
            "event": "job_stalled",
            "job_id": r.job_id,
            "root_id": r.root_id,
            "signal": r.verdict.signal,
            "evidence": r.verdict.evidence,
            "act_with": format!("gitmoot job cancel {} | gitmoot job leave {}", r.job_id, r.job_id),
        }),
    }
}

/// Runs the command for one gate; a failure is logged and recorded, never retried.
pub async fn run(
    shared: Arc<Shared>,
    command: String,
    timeout: Duration,
    cwd: PathBuf,
    p: Pending,
) {
    let failure = match run_command(&command, timeout, &cwd, &p.payload).await {
        Ok(()) => return,
        Err(why) => why,
    };
    tracing::warn!(job = %p.job_id, "[notify] command: {failure}");
    let recorded = shared
        .with_store(move |store, sh| {
            store.write(|tx| {
                events::append(
                    tx,
                    NewEvent::job(
                        sh.clock.now_ms(),
                        &p.root_id,
                        &p.job_id,
                        EventKind::HumanNotifyFailed,
                    )
                    .message(format!("[notify] command: {failure}"))
                    .data(json!({"escalation_id": p.escalation_id})),
                )
            })
        })
        .await;
    if let Err(e) = recorded {
        tracing::warn!("recording a [notify] failure: {e}");
    }
}

async fn run_command(
    command: &str,
    timeout: Duration,
    cwd: &PathBuf,
    payload: &Value,
) -> Result<(), String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("could not start: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let mut body = payload.to_string();
        body.push('\n');
        // A command that ignores stdin closes it early; that is not a failure.
        let _ = stdin.write_all(body.as_bytes()).await;
    }
    match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(format!("exited with {status}")),
        Ok(Err(e)) => Err(format!("waiting for it: {e}")),
        Err(_) => {
            let _ = child.kill().await;
            Err(format!(
                "killed after the {} command_timeout",
                crate::duration::format_ms(timeout.as_millis() as i64)
            ))
        }
    }
}
