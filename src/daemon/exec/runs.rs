//! The runs of one job: the first, then a repair run per malformed or (under `block`)
//! failed-check result until `[orchestrate].max_repair_attempts` are spent, each with the
//! moot seat's relay token when the job sits in one; the usage of every run added up.
//!
//! Judges a run's output against the contract only; what a result means for its tree is
//! the engine's, settled by the pool.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::watch;

use super::super::Shared;
use super::super::claim::{Claimed, Placement};
use super::super::live::{Leftover, Recorder};
use super::once::run_once;
use super::{Plan, Ran};
use crate::clock::Clock;
use crate::config::ResultChecks;
use crate::contract::{self, ContractErrors};
use crate::domain::EventKind;
use crate::engine::{self, Outcome};
use crate::runtime::sandbox::Grant;
use crate::runtime::{self, KillRequest, RuntimeOutput, TokenUsage, process};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::Job;
use crate::store::{Store, StoreError};

/// A moot seat's relay token, released when the seat's job ends on any path.
struct SeatToken {
    relay: Arc<crate::chat::relay::RelayHandle>,
    token: String,
}

impl SeatToken {
    fn env(&self) -> Vec<(String, String)> {
        self.relay.seat_env(&self.token)
    }
}

impl Drop for SeatToken {
    fn drop(&mut self) {
        self.relay.release(&self.token);
    }
}

/// Issues a relay token when the job is a moot seat, so its agent can post only as itself
/// and only in its moot's thread.
fn seat_token(shared: &Shared, plan: &Plan) -> Option<SeatToken> {
    let relay = shared.relay.clone()?;
    let seat = plan.seat.as_ref()?;
    let token = relay.issue_token(&seat.agent, &seat.thread_id);
    Some(SeatToken { relay, token })
}

impl Ran {
    /// A job that failed before (or instead of) any run.
    fn failed(reason: String) -> Self {
        Ran {
            outcome: Outcome::Failed(reason),
            raw: String::new(),
            truncated: false,
            usage: TokenUsage::default(),
            vendor_cost: None,
            model: None,
            activity: Leftover::default(),
        }
    }
}

/// What the runs of a job so far added up to.
#[derive(Default)]
struct Tally {
    usage: TokenUsage,
    cost: Option<f64>,
    truncated: bool,
    /// The job's running usage as its stream reported it at the end of the last run.
    streamed: runtime::activity::LiveUsage,
}

impl Tally {
    /// Adds one run's usage, cost and truncation.
    async fn add(&mut self, out: &mut RuntimeOutput, recorder: Option<&Recorder>) {
        if let Some(rec) = recorder {
            let now = rec.usage().await;
            // A run stopped before its final usage event (a kill, a budget stop, a cut
            // stream) still consumed what its stream reported so far.
            if out.error.is_some() && out.usage == TokenUsage::default() {
                out.usage = stream_delta(&self.streamed, &now);
                if out.vendor_cost_usd.is_none() && now.cost_usd != self.streamed.cost_usd {
                    out.vendor_cost_usd =
                        Some(now.cost_usd.unwrap_or(0.0) - self.streamed.cost_usd.unwrap_or(0.0));
                }
            }
            self.streamed = now;
        }
        self.usage += out.usage;
        if let Some(c) = out.vendor_cost_usd {
            self.cost = Some(self.cost.unwrap_or(0.0) + c);
        }
        self.truncated |= out.truncated;
    }

    /// The job's runs ended in `outcome`, the last one having printed `raw`.
    fn ran(&self, outcome: Outcome, raw: String, plan: &Plan) -> Ran {
        Ran {
            outcome,
            raw,
            truncated: self.truncated,
            usage: self.usage,
            vendor_cost: self.cost,
            model: plan.model.clone(),
            activity: Leftover::default(),
        }
    }
}

/// What one run's output calls for.
enum Verdict {
    /// The job's runs are over.
    Done(Outcome),
    /// Ask the agent again to repair these.
    Repair(ContractErrors),
}

/// Judges one run's output: its error, its contract, and under `block` its checks, with
/// `repairs` = (spent, allowed); `timeout_ms` is the deadline a timeout names.
fn judge(
    shared: &Shared,
    job: &Job,
    out: &RuntimeOutput,
    (repair, max_repairs): (u32, u32),
    timeout_ms: i64,
) -> Verdict {
    if let Some(reason) = &out.error {
        let reason = if reason.starts_with("timed out after") {
            format!("timed out after {}", crate::duration::format_ms(timeout_ms))
        } else {
            reason.clone()
        };
        return Verdict::Done(Outcome::Failed(reason));
    }
    match contract::parse(&out.text) {
        Ok(result) => {
            let failed = match shared.config().orchestrate.result_checks {
                ResultChecks::Block => {
                    engine::checks::failures(&shared.config().orchestrate, job.action, &result)
                }
                _ => Vec::new(),
            };
            // Under `block` a failed check is repaired like a contract error; once the
            // repairs are spent, settling fails the job with the checks' reason.
            if failed.is_empty() || repair >= max_repairs {
                return Verdict::Done(Outcome::Parsed(result));
            }
            Verdict::Repair(ContractErrors(engine::checks::repair_lines(&failed)))
        }
        // The result was in the dropped middle; asking again would redo the agent's
        // work (and its side effects) for the same cut.
        Err(_) if out.truncated => Verdict::Done(Outcome::Failed(format!(
            "output cut at {} MiB: no gitmoot_result in its first and last parts",
            process::CAPTURE_LIMIT / (1024 * 1024)
        ))),
        Err(errors) if repair < max_repairs => Verdict::Repair(errors),
        Err(errors) => {
            let reason = if repair > 0 {
                contract::repair_failed_reason(&errors)
            } else {
                format!("output malformed: {errors}")
            };
            Verdict::Done(Outcome::Failed(reason))
        }
    }
}

/// Adds the job's worktree when it runs in one (a write job's is opened and recorded);
/// what its agent may write there; why not, when that failed.
async fn add_worktree(
    shared: &Arc<Shared>,
    job: &Job,
    placement: &Placement,
) -> Result<Grant, String> {
    match placement {
        Placement::Worktree { checkout, path } => {
            let (checkout, path) = (checkout.clone(), path.clone());
            let added =
                tokio::task::spawn_blocking(move || super::super::worktree::add(&checkout, &path))
                    .await;
            match added {
                Ok(Ok(())) => Ok(Grant::default()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(format!("creating the worktree: {e}")),
            }
        }
        Placement::Write(spec) => {
            let s = spec.clone();
            let opened = tokio::task::spawn_blocking(move || crate::worktree::open(&s)).await;
            let opened = match opened {
                Ok(Ok(o)) => o,
                Ok(Err(e)) => {
                    return Err(format!(
                        "opening the job's worktree: {}",
                        crate::error_line(&e)
                    ));
                }
                Err(e) => return Err(format!("opening the job's worktree: {e}")),
            };
            record_opened(shared, job, spec, &opened).await?;
            Ok(Grant {
                paths: opened.writable,
                git: opened.git,
            })
        }
        Placement::Shared { .. } => Ok(Grant::default()),
    }
}

/// Records a write job's opened worktree: its row (base commit included) and its event.
async fn record_opened(
    shared: &Arc<Shared>,
    job: &Job,
    spec: &crate::worktree::OpenSpec,
    opened: &crate::worktree::Opened,
) -> Result<(), String> {
    let (j, spec, opened) = (job.clone(), spec.clone(), opened.clone());
    shared
        .with_store(move |store, sh| {
            let now = sh.clock.now_ms();
            store.write(|tx| {
                let repo = j.repo.clone().unwrap_or_default();
                let mut row = crate::store::worktrees::get(tx, &j.id)?.unwrap_or_else(|| {
                    crate::store::worktrees::WriteTree::requested(
                        &j.id, &j.root_id, &repo, None, now,
                    )
                });
                row.state = crate::domain::WorktreeState::Open;
                row.base_ref = Some(opened.base_ref.clone());
                row.base_commit = Some(opened.base_commit.clone());
                row.branch = Some(opened.branch.clone());
                row.checkout = Some(spec.checkout.display().to_string());
                row.path = Some(spec.path.display().to_string());
                row.updated_ms = now;
                crate::store::worktrees::put(tx, &row)?;
                events::append(
                    tx,
                    NewEvent::job(now, &j.root_id, &j.id, EventKind::WorktreeOpened)
                        .message(format!(
                            "working on branch {} from {} ({})",
                            opened.branch,
                            opened.base_ref,
                            &opened.base_commit[..opened.base_commit.len().min(12)]
                        ))
                        .data(json!({
                            "branch": opened.branch,
                            "base": opened.base_ref,
                            "base_commit": opened.base_commit,
                        })),
                )
                .map(|_| ())
            })
        })
        .await
        .map_err(|e| format!("recording the job's worktree: {e}"))
}

/// Runs the job until a run's output settles it (see [`judge`]) or its deadline, under
/// `[daemon].job_timeout` unless the job has its own, passes.
pub(super) async fn run_runs(
    shared: &Arc<Shared>,
    claimed: &Claimed,
    plan: Result<Plan, String>,
    kill: watch::Receiver<Option<KillRequest>>,
    recorder: Option<&Recorder>,
) -> Ran {
    let job = &claimed.job;
    let plan = match plan {
        Ok(p) => p,
        Err(reason) => return Ran::failed(reason),
    };
    let writable = match add_worktree(shared, job, &claimed.placement).await {
        Ok(w) => w,
        Err(reason) => return Ran::failed(reason),
    };
    let timeout_ms = job
        .timeout_ms
        .filter(|t| *t > 0)
        .unwrap_or(shared.config().daemon.job_timeout.0);
    let deadline = Instant::now() + Duration::from_millis(timeout_ms as u64);
    let mut prompt = format!("{}\n\n{}", job.prompt, contract::instructions());
    let max_repairs = shared.config().orchestrate.max_repair_attempts;
    let mut tally = Tally::default();
    let mut repair = 0;
    let seat = seat_token(shared, &plan);
    let seat_env = seat.as_ref().map(SeatToken::env).unwrap_or_default();
    loop {
        let mut out = run_once(
            shared,
            &plan,
            job,
            &prompt,
            (claimed.placement.dir(), &writable),
            (repair, &seat_env),
            deadline,
            (kill.clone(), recorder.map(Recorder::lines)),
        )
        .await;
        tally.add(&mut out, recorder).await;
        let errors = match judge(shared, job, &out, (repair, max_repairs), timeout_ms) {
            Verdict::Done(outcome) => return tally.ran(outcome, out.text, &plan),
            Verdict::Repair(errors) => errors,
        };
        repair += 1;
        note_repair(shared, job, &errors, repair).await;
        prompt = format!(
            "{}\n\n{}",
            job.prompt,
            contract::repair_prompt(&errors, &out.text)
        );
    }
}

/// Tokens a run's stream reported between two readings of the job's running usage.
fn stream_delta(
    before: &runtime::activity::LiveUsage,
    after: &runtime::activity::LiveUsage,
) -> TokenUsage {
    TokenUsage {
        tokens_in: after.tokens_in.saturating_sub(before.tokens_in),
        tokens_out: after.tokens_out.saturating_sub(before.tokens_out),
        cache_read: after.cache_read.saturating_sub(before.cache_read),
        cache_creation: after.cache_creation.saturating_sub(before.cache_creation),
    }
}

async fn note_repair(shared: &Arc<Shared>, job: &Job, errors: &ContractErrors, repair: u32) {
    let (j, errs) = (job.clone(), errors.clone());
    let res = shared
        .with_store(move |store, sh| {
            append_event(
                store,
                sh.clock.as_ref(),
                &j,
                EventKind::MalformedOutput,
                errs.to_string(),
                json!({"errors": errs.lines()}),
            )?;
            append_event(
                store,
                sh.clock.as_ref(),
                &j,
                EventKind::RepairRetry,
                format!(
                    "re-asking {} to repair its result (repair {repair})",
                    j.agent
                ),
                json!({"repair": repair}),
            )
        })
        .await;
    if let Err(e) = res {
        tracing::warn!(job = %job.id, "recording the repair: {e}");
    }
}

fn append_event(
    store: &mut Store,
    clock: &dyn Clock,
    job: &Job,
    kind: EventKind,
    message: String,
    data: serde_json::Value,
) -> Result<(), StoreError> {
    store.write(|tx| {
        events::append(
            tx,
            NewEvent::job(clock.now_ms(), &job.root_id, &job.id, kind)
                .message(message)
                .data(data),
        )
        .map(|_| ())
    })
}
