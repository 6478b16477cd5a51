//! Settling a job: recording its outcome and moving its tree forward.
//!
//! The daemon calls `settle` once per finished job, inside one transaction, after it has
//! run the runtime and parsed the output with the contract module.

use crate::store::Tx;
use serde_json::json;

use super::ctx::Ctx;
use super::pricing::price_usd;
use super::{EngineError, Env};
use crate::config::ResultChecks;
use crate::contract::GitmootResult;
use crate::domain::{EventKind, JobState};
use crate::store::events::{self, NewEvent};
use crate::store::{jobs, runs};

/// Token usage and cost the runtime reported for one job.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The output held a valid result.
    Parsed(GitmootResult),
    /// The job failed before producing a valid result (runtime error, timeout, malformed).
    Failed(String),
}

/// Everything the daemon learned from running one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    pub outcome: Outcome,
    pub raw_output: Option<String>,
    pub output_truncated: bool,
    pub usage: Usage,
}

impl Settlement {
    /// An outcome reached without running anything (a recipe's own first round, a session
    /// review, a quarantined or recovered job): no output, no usage.
    pub fn of(outcome: Outcome) -> Self {
        Self {
            outcome,
            raw_output: None,
            output_truncated: false,
            usage: Usage::default(),
        }
    }
}

/// Records the outcome of a running job and advances its tree.
///
/// Idempotent on a job that already ended: a cancelled job that was still running only
/// gets its usage recorded and its runtime pid cleared.
pub fn settle(
    tx: &Tx<'_>,
    env: Env<'_>,
    job_id: &str,
    s: Settlement,
) -> Result<JobState, EngineError> {
    let now = env.clock.now_ms();
    let mut job = jobs::require(tx, job_id)?;
    let stored = job.clone();
    let cost = if s.usage.cost_usd > 0.0 {
        s.usage.cost_usd
    } else {
        price_usd(job.model.as_deref(), s.usage.tokens_in, s.usage.tokens_out)
    };
    let mut run = runs::require(tx, &job.root_id)?;
    let stored_run = run.clone();
    run.tokens += s.usage.tokens_in + s.usage.tokens_out;
    run.cost_usd += cost;
    run.updated_ms = now;
    runs::put_over(tx, &stored_run, &run)?;
    job.tokens_in += s.usage.tokens_in;
    job.tokens_out += s.usage.tokens_out;
    job.cost_usd += cost;
    if job.state.is_terminal() {
        job.runtime_pid = None;
        job.updated_ms = now;
        jobs::put_over(tx, &stored, &job)?;
        return Ok(job.state);
    }
    let mut failed_checks = Vec::new();
    let (state, message) = match &s.outcome {
        Outcome::Parsed(r) => {
            job.result = Some(serde_json::to_value(r).map_err(crate::store::StoreError::from)?);
            failed_checks = super::checks::failures(env.cfg, job.action, r);
            if env.cfg.result_checks == ResultChecks::Block && !failed_checks.is_empty() {
                // The daemon already spent the repair attempt on these; the job fails.
                let list: Vec<String> = failed_checks.iter().map(ToString::to_string).collect();
                let reason = format!("result checks failed: {}", list.join("; "));
                job.error = Some(reason.clone());
                (JobState::Failed, reason)
            } else {
                (
                    r.decision.job_state(),
                    format!("{}: {}", r.decision.as_str(), r.summary),
                )
            }
        }
        Outcome::Failed(reason) => {
            job.error = Some(reason.clone());
            (JobState::Failed, reason.clone())
        }
    };
    job.state = state;
    job.raw_output = s.raw_output;
    job.output_truncated = s.output_truncated;
    job.runtime_pid = None;
    job.finished_ms = Some(now);
    job.updated_ms = now;
    jobs::put_over(tx, &stored, &job)?;
    events::append(
        tx,
        NewEvent::job(now, &job.root_id, &job.id, EventKind::entered(state))
            .message(message)
            .data(json!({
                "tokens_in": s.usage.tokens_in,
                "tokens_out": s.usage.tokens_out,
                "cost_usd": cost,
            })),
    )?;
    let ctx = Ctx {
        tx,
        clock: env.clock,
        cfg: env.cfg,
        hooks: env.hooks,
        now,
    };
    if let Outcome::Parsed(r) = &s.outcome {
        ctx.record_result_marks(&job, r, &failed_checks)?;
    }
    env.hooks.job_finished(tx, env.clock, &job)?;
    ctx.after_settle(&job)?;
    Ok(state)
}
