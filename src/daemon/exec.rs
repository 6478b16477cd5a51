//! Running one claimed job to its settlement: resolve the agent (or ephemeral spec) into a
//! runtime request, prepare its checkout, run the runtime, parse the contract, repair
//! once, then settle through the engine with usage and cost. The checkout is cleaned up
//! whatever happened.
//!
//! This file plans a job, runs it with its activity recorded and hands the pool what to
//! settle; `runs.rs` runs it until its output settles it, `once.rs` is one run. Owns the
//! per-job pipeline; claiming, locks and the pool's bookkeeping are elsewhere.

mod fence;
mod once;
mod runs;
mod written;

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use super::Shared;
use super::claim::{Claimed, Placement};
use super::live::{self, Leftover, Recorder};
use crate::config::Config;
use crate::contract::EphemeralSpec;
use crate::domain::{AutonomyPolicy, EventKind, JobState, RuntimeKind};
use crate::engine::{self, EngineError, Outcome};
use crate::runtime::{self, KillRequest, TokenUsage};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::Job;
use crate::store::{Store, Tx, agents};
use runs::run_runs;

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
    pub(crate) fn with_store_here<T>(&self, f: impl FnOnce(&mut Store, &Shared) -> T) -> T {
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

/// Resolves the runtime, binary, model and effort for `job`: `Err` when the store could
/// not be read (nothing is said of the job), `Ok(Err(why))` when the job cannot run.
///
/// Model: job → agent (or spec) → `[runtimes.<n>].default_model` → none; effort likewise.
pub fn plan(
    conn: &Tx<'_>,
    job: &Job,
    cfg: &Config,
) -> Result<Result<Plan, String>, crate::store::StoreError> {
    let seat = crate::chat::moot::seat_for_job(conn, job)?;
    plan_seated(conn, job, seat, cfg)
}

/// [`plan`] with the job's moot seat already read (the claim reads it).
fn plan_seated(
    conn: &Tx<'_>,
    job: &Job,
    seat: Option<crate::chat::moot::SeatBinding>,
    cfg: &Config,
) -> Result<Result<Plan, String>, crate::store::StoreError> {
    let agent = match &job.ephemeral {
        Some(_) => None,
        None => agents::get(conn, &job.agent)?,
    };
    Ok(resolve(job, agent, seat, cfg))
}

/// [`plan`] once what it reads of the store is at hand.
fn resolve(
    job: &Job,
    agent: Option<agents::Agent>,
    seat: Option<crate::chat::moot::SeatBinding>,
    cfg: &Config,
) -> Result<Plan, String> {
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
            let agent = agent.ok_or_else(|| format!("agent {:?} is not registered", job.agent))?;
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
        seat,
    })
}

/// Claimed jobs, each with the plan it runs under or why it cannot run.
pub(crate) type Planned = Vec<(Claimed, Result<Plan, String>)>;

/// Each claimed job with the runtime plan it runs under (or why it has none), read in
/// the claim's own transaction: a store connection lost on the way undoes the claim with
/// it, rather than failing jobs that were only claimed. A row that cannot be read fails
/// its job alone.
pub(crate) fn planned(
    tx: &Tx<'_>,
    claimed: Vec<Claimed>,
    config: &Config,
) -> Result<Planned, crate::store::StoreError> {
    claimed
        .into_iter()
        .map(|c| match plan_seated(tx, &c.job, c.seat.clone(), config) {
            Ok(plan) => Ok((c, plan)),
            Err(e) if e.is_connection_lost() => Err(e),
            Err(e) => Ok((c, Err(e.to_string()))),
        })
        .collect()
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
    /// The job as it was claimed: its daemon and attempt are the claim's fencing token.
    job: Job,
    /// Kept until the settlement commits: a transaction the store lost is written again.
    settlement: engine::Settlement,
    /// Set when this daemon stopped the agent because it was itself lost (`Loss`): a run
    /// cut off that way did not fail, so it is released, not settled as failed.
    released: Option<engine::lost::Loss>,
    /// Set when this daemon learned its lease was taken over before it settled the run:
    /// a takeover that found its agent ended left the job to it, and its events say so.
    lease_taken: bool,
    activity: Leftover,
    cache: (u64, u64),
    capture: Option<engine::observe::Capture>,
    record: Option<PathBuf>,
    /// The home's artifacts folder, where this job's brief is and its run's are removed.
    artifacts: PathBuf,
    /// Every job of this job's run, once settling it ended the run: their briefs go.
    ended_run: Vec<String>,
}

impl Finished {
    pub fn job_id(&self) -> &str {
        &self.job.id
    }

    pub fn root_id(&self) -> &str {
        &self.job.root_id
    }

    /// Marks a run this daemon cut off because it was lost itself (see `released`).
    pub(crate) fn release_for(&mut self, loss: engine::lost::Loss) {
        self.released = Some(loss);
    }

    /// Marks a run settled after this daemon's lease was taken over (see `lease_taken`).
    pub(crate) fn after_lease_taken(&mut self) {
        self.lease_taken = true;
    }

    /// Writes the last activity, settles the job through the engine and records what its
    /// checkout touched, all in `tx` — if the job is still this claim (`fence`); a finished
    /// run whose job a takeover released and nothing claimed since is settled late, and a
    /// run cut off because this daemon was lost releases its job instead.
    pub fn settle(&mut self, tx: &Tx<'_>, env: engine::Env<'_>) -> Result<(), EngineError> {
        let now = env.clock.now_ms();
        let stored = crate::store::jobs::require(tx, &self.job.id)?;
        let parsed = matches!(self.settlement.outcome, Outcome::Parsed(_));
        match (fence::claim_of(&stored, &self.job), self.released) {
            (fence::Claim::Ours, Some(loss)) if !parsed && stored.state == JobState::Running => {
                let detail = "its daemon stopped the agent while it could not reach the store";
                engine::lost::release(tx, env, &self.job.id, loss, detail)?;
                return Ok(());
            }
            // Settled already: the commit reached the store though its answer was lost.
            (fence::Claim::Ours, _)
                if stored.state.is_terminal() && stored.runtime_pid.is_none() =>
            {
                return Ok(());
            }
            (fence::Claim::Ours, _) if self.lease_taken && stored.state == JobState::Running => {
                self.left_to_us(tx, env)?
            }
            (fence::Claim::Ours, _) => {}
            (fence::Claim::Released, _) if parsed => self.reclaim(tx, env, &stored)?,
            (claim, _) => return self.discard(tx, now, &stored, claim),
        }
        live::write_final(tx, &self.job, now, &self.activity, self.cache)?;
        engine::settle(tx, env, &self.job.id, self.settlement.clone())?;
        if let Some(c) = &self.capture {
            engine::observe::record(tx, env.clock.now_ms(), &self.job.id, c)?;
        }
        self.ended_run = if crate::store::runs::require(tx, &self.job.root_id)?
            .state
            .is_terminal()
        {
            crate::store::jobs::by_root(tx, &self.job.root_id)?
                .into_iter()
                .map(|j| j.id)
                .collect()
        } else {
            Vec::new()
        };
        Ok(())
    }

    /// Takes a released job back under this run's claim, its finished work to be settled.
    fn reclaim(&self, tx: &Tx<'_>, env: engine::Env<'_>, stored: &Job) -> Result<(), EngineError> {
        let mut back = stored.clone();
        back.state = JobState::Running;
        back.attempt = self.job.attempt;
        back.started_ms = self.job.started_ms;
        back.updated_ms = env.clock.now_ms();
        crate::store::jobs::put_over(tx, stored, &back)?;
        if stored.state == JobState::Interrupted {
            engine::lost::resume_clock(tx, env, &self.job.root_id)?;
        }
        self.recovered(
            tx,
            env,
            "lost its lease, yet its agent had finished and nothing claimed the job since",
        )
    }

    /// Says why a job is settled by the daemon whose lease was taken: the takeover found
    /// its agent ended and left the job to it rather than run it again.
    fn left_to_us(&self, tx: &Tx<'_>, env: engine::Env<'_>) -> Result<(), EngineError> {
        self.recovered(
            tx,
            env,
            "was paused past its lease after its agent ended, so the takeover left the job to it",
        )
    }

    /// The `job_recovered` event of a run settled after its daemon lost its lease: `how`
    /// says why that daemon still settles it.
    fn recovered(&self, tx: &Tx<'_>, env: engine::Env<'_>, how: &str) -> Result<(), EngineError> {
        let event = NewEvent::job(
            env.clock.now_ms(),
            &self.job.root_id,
            &self.job.id,
            EventKind::JobRecovered,
        )
        .message(format!(
            "lease lost: the daemon that ran attempt {} {how}; settled from that run",
            self.job.attempt
        ));
        events::append(tx, event)?;
        Ok(())
    }

    /// Leaves a job this run no longer speaks for as the store has it, saying why.
    fn discard(
        &self,
        tx: &Tx<'_>,
        now: crate::clock::Millis,
        stored: &Job,
        claim: fence::Claim,
    ) -> Result<(), EngineError> {
        let why = match claim {
            fence::Claim::Stale => format!(
                "the job was claimed again (attempt {} on {})",
                stored.attempt,
                stored.daemon_id.as_deref().unwrap_or("-")
            ),
            _ => "its agent ended without a result".to_string(),
        };
        let event = NewEvent::job(
            now,
            &self.job.root_id,
            &self.job.id,
            EventKind::JobSettlementDiscarded,
        )
        .message(format!(
            "lease lost: attempt {} ended on {} after its lease was taken over, and {why}; its outcome is discarded, the job stays {}",
            self.job.attempt,
            self.job.daemon_id.as_deref().unwrap_or("-"),
            stored.state
        ));
        events::append(tx, event)?;
        Ok(())
    }

    /// Once the settlement committed (or failed: recovery then fails the job), the stdout
    /// record has served its purpose.
    pub(crate) fn cleanup(self) {
        if let Some(record) = self.record {
            runtime::spare::discard_record(&record);
        }
        super::brief::remove(&self.artifacts, &self.ended_run);
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
    if let Placement::Write(spec) = &claimed.placement {
        written::push_branch(&shared, &claimed.job, spec).await;
        written::store_diff(&shared, &claimed.job, spec).await;
    }
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
    let artifacts = shared.home.artifacts_dir();
    if let Outcome::Parsed(r) = &settlement.outcome
        && let Some(body) = r.artifact_body.as_deref()
    {
        super::brief::write(&artifacts, &claimed.job.id, body);
    }
    Finished {
        job: claimed.job,
        settlement,
        released: None,
        lease_taken: false,
        activity: ran.activity,
        cache: (ran.usage.cache_read, ran.usage.cache_creation),
        capture,
        record,
        artifacts,
        ended_run: Vec::new(),
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
        Placement::Write(spec) => return Some(observe_write(shared, job, &spec.path).await),
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
    let read = tokio::task::spawn_blocking(move || {
        if !super::worktree::is_git_checkout(&dir) {
            return Err(format!(
                "{} is not a git repository, so no change could be observed",
                dir.display()
            ));
        }
        super::worktree::touched_files(&dir)
    })
    .await;
    Some(match read {
        Ok(Ok(files)) => Capture::Touched { source, files },
        Ok(Err(reason)) => Capture::Indeterminate { source, reason },
        Err(e) => Capture::Indeterminate {
            source,
            reason: e.to_string(),
        },
    })
}

/// What a write job's work changed against its recorded base, committed or not, untracked
/// files included.
async fn observe_write(
    shared: &Arc<Shared>,
    job: &crate::store::jobs::Job,
    path: &std::path::Path,
) -> engine::observe::Capture {
    use engine::observe::{Capture, Source};
    let id = job.id.clone();
    let row = shared
        .with_store(move |store, _| crate::store::worktrees::get(store.conn(), &id))
        .await;
    let base = match row {
        Ok(Some(w)) => w.base_commit,
        Ok(None) => None,
        Err(e) => {
            return Capture::Indeterminate {
                source: Source::Worktree,
                reason: e.to_string(),
            };
        }
    };
    let Some(base) = base else {
        return Capture::Indeterminate {
            source: Source::Worktree,
            reason: "the job's base commit was not recorded".into(),
        };
    };
    let dir = path.to_path_buf();
    let read =
        tokio::task::spawn_blocking(move || crate::worktree::touched_since(&dir, &base)).await;
    match read {
        Ok(Ok(files)) => Capture::Touched {
            source: Source::Worktree,
            files,
        },
        Ok(Err(e)) => Capture::Indeterminate {
            source: Source::Worktree,
            reason: e.to_string(),
        },
        Err(e) => Capture::Indeterminate {
            source: Source::Worktree,
            reason: e.to_string(),
        },
    }
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
