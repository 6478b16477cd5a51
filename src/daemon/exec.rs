//! Running one claimed job to its settlement: resolve the agent (or ephemeral spec) into a
//! runtime request, prepare its checkout, run the runtime, parse the contract, repair
//! once, then settle through the engine with usage and cost. The checkout is cleaned up
//! whatever happened.
//!
//! Owns the per-job pipeline; claiming, locks and the pool's bookkeeping are elsewhere.

use crate::store::Tx;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::watch;

use super::Shared;
use super::claim::{Claimed, Placement};
use super::live::{self, Leftover, Recorder};
use crate::clock::Clock;
use crate::config::{Config, ResultChecks};
use crate::contract::{self, ContractErrors, EphemeralSpec};
use crate::domain::{AutonomyPolicy, EventKind, JobState, RuntimeKind};
use crate::engine::{self, EngineError, Outcome};
use crate::runtime::{self, KillRequest, Request, RuntimeOutput, TokenUsage, process};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};
use crate::store::{Store, StoreError, agents};

/// A runtime that is still running this long after its start gets its pid recorded (for
/// crash recovery); trivial jobs that end sooner skip that write, which would otherwise be
/// a large share of their cost.
pub const PID_RECORD_DELAY: Duration = Duration::from_millis(25);

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

impl Shared {
    /// The config in force now; a job reads it once where it needs a knob.
    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The engine as this daemon drives it, under `config` (the one a pass read).
    pub fn env<'a>(&'a self, config: &'a Config) -> engine::Env<'a> {
        engine::Env {
            clock: self.clock.as_ref(),
            cfg: &config.orchestrate,
            hooks: &*self.hooks,
        }
    }

    /// Runs `f` on the daemon's connection on the calling thread: for the pool's own passes,
    /// whose loop has the thread it runs on to itself (`Daemon::run` under `block_on`, or
    /// `Daemon::spawn`'s thread) and waits for each pass anyway, so handing the pass to
    /// another thread would only add two thread switches to every pass.
    pub fn with_store_here<T>(&self, f: impl FnOnce(&mut Store, &Shared) -> T) -> T {
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut store, self)
    }

    /// Runs `f` on the daemon's connection on a blocking thread.
    pub async fn with_store<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut Store, &Shared) -> T + Send + 'static,
    ) -> T {
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut store = me.store.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut store, &me)
        })
        .await
        .expect("a store task panicked")
    }
}

/// The runtime side of a job once its agent (or ephemeral spec) is resolved.
#[derive(Debug, Clone)]
pub struct Plan {
    pub kind: RuntimeKind,
    pub binary: PathBuf,
    pub command: Option<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub policy: AutonomyPolicy,
    /// The moot seat this job sits in, read at claim time so running it costs no extra query.
    pub seat: Option<crate::chat::moot::SeatBinding>,
}

/// Resolves the runtime, binary, model and effort for `job`.
///
/// Model: job → agent (or spec) → `[runtimes.<n>].default_model` → none; effort likewise.
pub fn plan(conn: &Tx<'_>, job: &Job, cfg: &Config) -> Result<Plan, String> {
    let (kind, command, model, effort, policy) = match &job.ephemeral {
        Some(spec) => {
            let spec: EphemeralSpec = serde_json::from_value(spec.clone())
                .map_err(|e| format!("ephemeral spec of {} is unreadable: {e}", job.id))?;
            if spec.runtime == RuntimeKind::Shell {
                return Err(runtime::RuntimeError::EphemeralShell.to_string());
            }
            (
                spec.runtime,
                None,
                spec.model,
                spec.effort,
                spec.autonomy_policy,
            )
        }
        None => {
            let agent = agents::get(conn, &job.agent)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("agent {:?} is not registered", job.agent))?;
            (
                agent.runtime,
                agent.command,
                agent.model,
                agent.effort,
                agent.policy,
            )
        }
    };
    let rt = cfg.runtime(kind);
    let binary = runtime::resolve_binary(kind, &rt).map_err(|e| e.to_string())?;
    Ok(Plan {
        kind,
        binary,
        command,
        model: job.model.clone().or(model).or(rt.default_model),
        effort: job.effort.clone().or(effort).or(rt.default_effort),
        policy,
        seat: crate::chat::moot::seat_for_job(conn, job)
            .map_err(|e| format!("looking up the moot seat: {e}"))?,
    })
}

/// Each claimed job with the runtime plan it runs under (or why it has none).
pub fn planned(
    store: &Store,
    claimed: Vec<Claimed>,
    config: &Config,
) -> Vec<(Claimed, Result<Plan, String>)> {
    claimed
        .into_iter()
        .map(|c| {
            let plan = plan(&store.conn(), &c.job, config);
            (c, plan)
        })
        .collect()
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

/// Records the runtime pid while the job still runs (a settled job is left alone).
fn record_pid(
    store: &mut Store,
    clock: &dyn Clock,
    job_id: &str,
    pid: u32,
) -> Result<(), StoreError> {
    store.write(|tx| {
        if let Some(mut j) = jobs::get(tx, job_id)?
            && j.state == JobState::Running
        {
            j.runtime_pid = Some(i64::from(pid));
            j.updated_ms = clock.now_ms();
            jobs::put(tx, &j)?;
        }
        Ok(())
    })
}

/// Everything the runs of one job added up to.
struct Ran {
    outcome: Outcome,
    raw: String,
    truncated: bool,
    usage: TokenUsage,
    vendor_cost: Option<f64>,
    /// The model the runtime was asked for, which prices usage without a vendor cost.
    model: Option<String>,
    /// Activity not yet stored when the last run ended.
    activity: Leftover,
}

/// A job whose runs ended, waiting to be settled by the pool: with every other job that
/// ended meanwhile and the claim of the next ones, in one transaction.
///
/// Nothing is lost if the daemon dies before that commit: the job is still `running` in
/// the store and its stdout record is still on disk (it is removed only once the
/// settlement committed, by [`Finished::cleanup`]), so recovery settles it from the record
/// exactly as it settles a job that was cut off while running.
pub struct Finished {
    job: Job,
    /// Taken by `settle`.
    settlement: Option<engine::Settlement>,
    activity: Leftover,
    cache: (u64, u64),
    capture: Option<engine::observe::Capture>,
    record: Option<PathBuf>,
}

impl Finished {
    pub fn job_id(&self) -> &str {
        &self.job.id
    }

    pub fn root_id(&self) -> &str {
        &self.job.root_id
    }

    /// Writes the last activity, settles the job through the engine and records what its
    /// checkout touched, all in `tx`; returns the state it settled in.
    pub fn settle(&mut self, tx: &Tx<'_>, env: engine::Env<'_>) -> Result<JobState, EngineError> {
        let now = env.clock.now_ms();
        live::write_final(tx, &self.job, now, &self.activity, self.cache)?;
        let settlement = self
            .settlement
            .take()
            .expect("the pool settles a finished job once");
        let state = engine::settle(tx, env, &self.job.id, settlement)?;
        if let Some(c) = &self.capture {
            engine::observe::record(tx, env.clock.now_ms(), &self.job.id, c)?;
        }
        Ok(state)
    }

    /// Once the settlement committed (or failed: recovery then fails the job), the stdout
    /// record has served its purpose.
    pub fn cleanup(self) {
        if let Some(record) = self.record {
            runtime::spare::discard_record(&record);
        }
    }
}

/// Runs a claimed job (with its plan, resolved when it was claimed) until its runs ended;
/// the pool settles what it returns.
pub async fn execute(
    shared: Arc<Shared>,
    claimed: Claimed,
    plan: Result<Plan, String>,
    kill: watch::Receiver<Option<KillRequest>>,
) -> Finished {
    let record = plan
        .as_ref()
        .ok()
        .map(|p| super::record_path(shared.home.root(), &claimed.job.id, p.kind));
    let ran = run_job(&shared, &claimed, plan, kill).await;
    let capture = observe_capture(&shared, &claimed, &ran.outcome).await;
    if let Placement::Worktree { checkout, path } = &claimed.placement {
        let (checkout, path) = (checkout.clone(), path.clone());
        let _ =
            tokio::task::spawn_blocking(move || super::worktree::remove(&checkout, &path)).await;
    }
    let settlement = super::settlement(
        ran.outcome,
        &ran.raw,
        ran.truncated,
        &ran.usage,
        ran.vendor_cost,
        ran.model.as_deref(),
    );
    Finished {
        job: claimed.job,
        settlement: Some(settlement),
        activity: ran.activity,
        cache: (ran.usage.cache_read, ran.usage.cache_creation),
        capture,
        record,
    }
}

/// What the checkout of a settled implement job touched, read before a worktree is
/// removed; `None` for jobs that are not graded (not implement, no parsed result, or no
/// checkout of a repo).
async fn observe_capture(
    shared: &Arc<Shared>,
    claimed: &Claimed,
    outcome: &Outcome,
) -> Option<engine::observe::Capture> {
    use engine::observe::{Capture, Source};
    let job = &claimed.job;
    if job.action != crate::domain::Action::Implement || !matches!(outcome, Outcome::Parsed(_)) {
        return None;
    }
    let (source, dir) = match &claimed.placement {
        Placement::Worktree { path, .. } => (Source::Worktree, path.clone()),
        Placement::Shared { dir } => {
            let config = shared.config();
            let checkout = job
                .repo
                .as_ref()
                .and_then(|r| config.repos.get(r))
                .and_then(|r| r.path.clone());
            if checkout.as_ref() != Some(dir) {
                return None;
            }
            if job.kind == crate::domain::JobKind::Leg {
                return Some(Capture::ExcludedWorktreeLessChild);
            }
            (Source::Checkout, dir.clone())
        }
    };
    let read = tokio::task::spawn_blocking(move || super::worktree::touched_files(&dir)).await;
    Some(match read {
        Ok(Ok(files)) => Capture::Touched { source, files },
        Ok(Err(reason)) => Capture::Indeterminate { source, reason },
        Err(e) => Capture::Indeterminate {
            source,
            reason: e.to_string(),
        },
    })
}

/// Runs the job with its activity recorded live; a budget stop from the recorder and a
/// kill from the pool both reach the runtime through one kill channel.
async fn run_job(
    shared: &Arc<Shared>,
    claimed: &Claimed,
    plan: Result<Plan, String>,
    mut kill: watch::Receiver<Option<KillRequest>>,
) -> Ran {
    let (stop_tx, stop_rx) = watch::channel(kill.borrow_and_update().clone());
    let forward = {
        let stop_tx = stop_tx.clone();
        tokio::spawn(async move {
            while kill.changed().await.is_ok() {
                let req = kill.borrow_and_update().clone();
                if req.is_some() {
                    let _ = stop_tx.send(req);
                }
            }
        })
    };
    let recorder = plan
        .as_ref()
        .ok()
        .map(|p| Recorder::start(shared, &claimed.job, p.kind, p.model.clone(), stop_tx));
    let mut ran = run_runs(shared, claimed, plan, stop_rx, recorder.as_ref()).await;
    forward.abort();
    if let Some(r) = recorder {
        ran.activity = r.finish().await;
    }
    ran
}

async fn run_runs(
    shared: &Arc<Shared>,
    claimed: &Claimed,
    plan: Result<Plan, String>,
    kill: watch::Receiver<Option<KillRequest>>,
    recorder: Option<&Recorder>,
) -> Ran {
    let job = &claimed.job;
    let failed = |reason: String| Ran {
        outcome: Outcome::Failed(reason),
        raw: String::new(),
        truncated: false,
        usage: TokenUsage::default(),
        vendor_cost: None,
        model: None,
        activity: Leftover::default(),
    };
    let plan = match plan {
        Ok(p) => p,
        Err(reason) => return failed(reason),
    };
    if let Placement::Worktree { checkout, path } = &claimed.placement {
        let (checkout, path) = (checkout.clone(), path.clone());
        let added =
            tokio::task::spawn_blocking(move || super::worktree::add(&checkout, &path)).await;
        match added {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return failed(e.to_string()),
            Err(e) => return failed(format!("creating the worktree: {e}")),
        }
    }
    let timeout_ms = job
        .timeout_ms
        .filter(|t| *t > 0)
        .unwrap_or(shared.config().daemon.job_timeout.0);
    let deadline = Instant::now() + Duration::from_millis(timeout_ms as u64);
    let base = format!("{}\n\n{}", job.prompt, contract::instructions());
    let max_repairs = shared.config().orchestrate.max_repair_attempts;
    let mut prompt = base.clone();
    let mut total = TokenUsage::default();
    let mut cost: Option<f64> = None;
    let mut truncated = false;
    let mut repair = 0;
    let seat = seat_token(shared, &plan);
    let seat_env = seat.as_ref().map(SeatToken::env).unwrap_or_default();
    let mut streamed = runtime::activity::LiveUsage::default();
    loop {
        let mut out = run_once(
            shared,
            &plan,
            job,
            &prompt,
            claimed.placement.dir(),
            (repair, &seat_env),
            deadline,
            (kill.clone(), recorder.map(Recorder::lines)),
        )
        .await;
        if let Some(rec) = recorder {
            let now = rec.usage().await;
            // A run stopped before its final usage event (a kill, a budget stop, a cut
            // stream) still consumed what its stream reported so far.
            if out.error.is_some() && out.usage == TokenUsage::default() {
                out.usage = stream_delta(&streamed, &now);
                if out.vendor_cost_usd.is_none() && now.cost_usd != streamed.cost_usd {
                    out.vendor_cost_usd =
                        Some(now.cost_usd.unwrap_or(0.0) - streamed.cost_usd.unwrap_or(0.0));
                }
            }
            streamed = now;
        }
        total += out.usage;
        if let Some(c) = out.vendor_cost_usd {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
        truncated |= out.truncated;
        let done = |outcome: Outcome, raw: String| Ran {
            outcome,
            raw,
            truncated,
            usage: total,
            vendor_cost: cost,
            model: plan.model.clone(),
            activity: Leftover::default(),
        };
        if let Some(reason) = out.error {
            let reason = if reason.starts_with("timed out after") {
                format!("timed out after {}", crate::duration::format_ms(timeout_ms))
            } else {
                reason
            };
            return done(Outcome::Failed(reason), out.text);
        }
        let errors = match contract::parse(&out.text) {
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
                    return done(Outcome::Parsed(result), out.text);
                }
                ContractErrors(engine::checks::repair_lines(&failed))
            }
            // The result was in the dropped middle; asking again would redo the agent's
            // work (and its side effects) for the same cut.
            Err(_) if out.truncated => {
                return done(
                    Outcome::Failed(format!(
                        "output cut at {} MiB: no gitmoot_result in its first and last parts",
                        process::CAPTURE_LIMIT / (1024 * 1024)
                    )),
                    out.text,
                );
            }
            Err(errors) if repair < max_repairs => errors,
            Err(errors) => {
                let reason = if repair > 0 {
                    contract::repair_failed_reason(&errors)
                } else {
                    format!("output malformed: {errors}")
                };
                return done(Outcome::Failed(reason), out.text);
            }
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

#[allow(clippy::too_many_arguments)]
async fn run_once(
    shared: &Arc<Shared>,
    plan: &Plan,
    job: &Job,
    prompt: &str,
    dir: &Path,
    (repair, seat_env): (u32, &[(String, String)]),
    deadline: Instant,
    (kill, lines): (
        watch::Receiver<Option<KillRequest>>,
        Option<process::LineSender>,
    ),
) -> RuntimeOutput {
    let mut env = runtime::agent_env(plan.kind, &shared.config().runtime(plan.kind).env);
    let identity = runtime::JobIdentity {
        id: &job.id,
        root_id: &job.root_id,
        parent_id: job.parent_id.as_deref(),
        delegation_id: job.delegation_id.as_deref(),
        kind: job.kind,
        action: job.action,
        repo: job.repo.as_deref(),
        attempt: job.attempt,
    };
    env.extend(runtime::job_env(&identity, repair));
    env.extend(seat_env.iter().cloned());
    let req = Request {
        kind: plan.kind,
        binary: plan.binary.clone(),
        command: plan.command.as_deref(),
        model: plan.model.as_deref(),
        effort: plan.effort.as_deref(),
        policy: plan.policy,
        prompt,
        cwd: dir,
        scratch: &shared.prompt_dir,
        env,
    };
    let prepared = match runtime::prepare(&req) {
        Ok(p) => p,
        Err(e) => {
            return RuntimeOutput {
                error: Some(e.to_string()),
                ..RuntimeOutput::default()
            };
        }
    };
    let remaining = deadline.saturating_duration_since(Instant::now());
    let (pid_tx, pid_rx) = tokio::sync::oneshot::channel::<u32>();
    let result = {
        let record = super::record_path(shared.home.root(), &job.id, plan.kind);
        let run = process::run_recorded(
            &prepared.invocation,
            Some(&record),
            Some(remaining),
            kill,
            |pid| {
                let _ = pid_tx.send(pid);
            },
            lines,
        );
        tokio::pin!(run);
        let mut pid_rx = Some(pid_rx);
        let mut record_at: Option<(u32, tokio::time::Instant)> = None;
        let mut recording: Option<tokio::task::JoinHandle<()>> = None;
        let result = loop {
            tokio::select! {
                r = &mut run => break r,
                Ok(pid) = async { pid_rx.as_mut().expect("guarded").await }, if pid_rx.is_some() => {
                    pid_rx = None;
                    record_at = Some((pid, tokio::time::Instant::now() + PID_RECORD_DELAY));
                }
                _ = tokio::time::sleep_until(record_at.map_or_else(tokio::time::Instant::now, |r| r.1)),
                    if record_at.is_some() => {
                    let (pid, _) = record_at.take().expect("guarded");
                    let (shared, id) = (shared.clone(), job.id.clone());
                    recording = Some(tokio::spawn(async move {
                        let res = shared
                            .with_store(move |store, sh| record_pid(store, sh.clock.as_ref(), &id, pid))
                            .await;
                        if let Err(e) = res {
                            tracing::warn!("recording the runtime pid: {e}");
                        }
                    }));
                }
            }
        };
        // The pid write must land before the settlement that follows.
        if let Some(h) = recording {
            let _ = h.await;
        }
        result
    };
    drop(prepared);
    match result {
        Ok(out) => runtime::interpret(plan.kind, &out),
        Err(e) => RuntimeOutput {
            error: Some(format!("runtime {}: {e}", plan.kind)),
            ..RuntimeOutput::default()
        },
    }
}
