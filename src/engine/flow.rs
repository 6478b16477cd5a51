//! The tree's forward motion after a job settles: resolution of a job's outcome through its
//! batch and continuation, dispatch of a batch with every bound checked in the seed's order,
//! the batch barrier with retries, failure policies and synthesis gates, and the single
//! continuation (normal, corrective, replan, answer or finalize) per coordinator.
//!
//! Works only inside the caller's transaction; never spawns anything.

use rusqlite::Transaction;
use serde_json::{Value, json};

use super::bounds::{Carry, progress_digest, set_hash};
use super::prompts::{self, Frame, LegLine, Upstream};
use super::{EngineError, Hooks};
use crate::clock::{Clock, Millis};
use crate::config::OrchestrateConfig;
use crate::contract::{Decision, Delegation, FailurePolicy, GitmootResult, SynthesisRule};
use crate::domain::{Action, JobKind, JobState, RunState, RuntimeKind};
use crate::store::delegations::{self, Leg, LegState};
use crate::store::escalations::{self, Round, RoundKind};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, FollowUp, Job};
use crate::store::runs::{self, Run};
use crate::store::{StoreError, agents};

pub(crate) type R<T> = Result<T, EngineError>;

/// One engine step's environment: the transaction, the clock reading and the knobs.
pub(crate) struct Ctx<'a, 't> {
    pub tx: &'a Transaction<'t>,
    pub clock: &'a dyn Clock,
    pub cfg: &'a OrchestrateConfig,
    pub hooks: &'a dyn Hooks,
    pub now: Millis,
}

/// A job's outcome as its parent sees it (invariant 6: through its subtree).
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// Something in its subtree is still queued, running, or awaiting a human.
    Pending,
    Done {
        /// The job whose result speaks (the job itself or its last continuation).
        job_id: String,
        state: JobState,
        result: Option<Box<GitmootResult>>,
        /// Why the batch blocked it, when it did.
        reason: Option<String>,
    },
}

/// A leg's outcome inside its batch.
#[derive(Debug, Clone)]
enum LegOutcome {
    Pending,
    Ok {
        job_id: String,
        result: Option<GitmootResult>,
    },
    Failed {
        job_id: String,
        state: JobState,
        result: Option<GitmootResult>,
        reason: Option<String>,
    },
    NotRun(String),
}

impl LegOutcome {
    fn resolved(&self) -> bool {
        !matches!(self, LegOutcome::Pending)
    }
    fn result(&self) -> Option<&GitmootResult> {
        match self {
            LegOutcome::Ok { result, .. } | LegOutcome::Failed { result, .. } => result.as_ref(),
            _ => None,
        }
    }
}

pub(crate) fn parse_result(v: Option<&Value>) -> Option<GitmootResult> {
    v.and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// Why a tree must stop dispatching (operator kill or a sweep bound), if it must.
pub fn stop_reason(run: &Run) -> Option<String> {
    if run.killed {
        Some("delegation tree killed by operator".into())
    } else {
        run.stop_reason.clone()
    }
}

/// Milliseconds the tree has been active, paused time excluded.
pub fn active_ms(run: &Run, now: Millis) -> i64 {
    let paused_now = run.paused_since_ms.map(|p| now - p).unwrap_or(0);
    now - run.created_ms - run.paused_ms - paused_now
}

fn streak_threshold(cfg: &OrchestrateConfig) -> u32 {
    if cfg.max_delegation_non_progress_streak == 0 {
        2
    } else {
        cfg.max_delegation_non_progress_streak
    }
}

impl Ctx<'_, '_> {
    pub fn event(
        &self,
        root: &str,
        job: Option<&str>,
        kind: &str,
        message: String,
        data: Option<Value>,
    ) -> R<()> {
        events::append(
            self.tx,
            NewEvent {
                ts_ms: self.now,
                root_id: Some(root),
                job_id: job,
                kind,
                message,
                data,
            },
        )?;
        Ok(())
    }

    /// The first free id among `base`, `base.2`, `base.3`… (ids are never reused).
    fn fresh_id(&self, base: &str) -> R<String> {
        if !jobs::exists(self.tx, base)? {
            return Ok(base.to_string());
        }
        let mut n = 2;
        loop {
            let id = format!("{base}.{n}");
            if !jobs::exists(self.tx, &id)? {
                return Ok(id);
            }
            n += 1;
        }
    }

    /// Writes a new queued job, counts it in the run and logs it.
    fn insert_job(&self, job: &Job) -> R<()> {
        jobs::put(self.tx, job)?;
        let mut run = runs::require(self.tx, &job.root_id)?;
        run.jobs += 1;
        run.updated_ms = self.now;
        runs::put(self.tx, &run)?;
        self.event(
            &job.root_id,
            Some(&job.id),
            "queued",
            format!("{} {} queued for {}", job.kind, job.action, job.agent),
            Some(json!({"agent": job.agent, "action": job.action, "parent": job.parent_id})),
        )
    }

    /// Moves a job to a terminal state by the engine (cancel, kill), with hook and event.
    pub fn finish_job(&self, job: &mut Job, state: JobState, message: String) -> R<()> {
        job.state = state;
        job.finished_ms = Some(self.now);
        job.updated_ms = self.now;
        jobs::put(self.tx, job)?;
        self.event(&job.root_id, Some(&job.id), state.as_str(), message, None)?;
        self.hooks.job_finished(self.tx, self.clock, job)
    }

    // ---- resolution ------------------------------------------------------------------

    pub fn resolution(&self, job: &Job) -> R<Resolution> {
        if !job.state.is_terminal() {
            return Ok(Resolution::Pending);
        }
        if escalations::open_for_job(self.tx, &job.id)?.is_some() {
            return Ok(Resolution::Pending);
        }
        match job.followup {
            FollowUp::Batch => Ok(Resolution::Pending),
            FollowUp::Continued => {
                let id = job.continuation_id.as_deref().unwrap_or_default();
                let next = jobs::require(self.tx, id)?;
                self.resolution(&next)
            }
            FollowUp::Blocked => Ok(Resolution::Done {
                job_id: job.id.clone(),
                state: JobState::Blocked,
                // The coordinator's own approving result does not speak for a blocked batch.
                result: None,
                reason: job.followup_reason.clone(),
            }),
            FollowUp::None => Ok(Resolution::Done {
                job_id: job.id.clone(),
                state: job.state,
                result: parse_result(job.result.as_ref()).map(Box::new),
                reason: job.error.clone(),
            }),
        }
    }

    /// Moves everything above `job` whose outcome now became known.
    pub fn propagate(&self, job: &Job) -> R<()> {
        let mut cur = job.clone();
        loop {
            let res = self.resolution(&cur)?;
            let Resolution::Done { .. } = res else {
                return Ok(());
            };
            let Some(parent_id) = cur.parent_id.clone() else {
                return self.finish_run(&cur, &res);
            };
            let parent = jobs::require(self.tx, &parent_id)?;
            if cur.kind == JobKind::Leg {
                return self.advance_batch(&parent.id);
            }
            if parent.continuation_id.as_deref() != Some(cur.id.as_str()) {
                return Ok(());
            }
            cur = parent;
        }
    }

    fn finish_run(&self, root: &Job, res: &Resolution) -> R<()> {
        let mut run = runs::require(self.tx, &root.root_id)?;
        if run.state.is_terminal() {
            return Ok(());
        }
        let Resolution::Done { job_id, state, .. } = res else {
            return Ok(());
        };
        run.state = if run.killed {
            RunState::Killed
        } else if escalations::aborted_in_root(self.tx, &root.root_id)? {
            // The finalize ran on what completed, but the outcome is the human's abort.
            RunState::Aborted
        } else {
            match state {
                JobState::Succeeded => RunState::Done,
                // Invariant 5: a failed continuation blocks the run; only the root's own
                // failure fails it.
                JobState::Failed | JobState::Cancelled if job_id == &root.id => RunState::Failed,
                _ => RunState::Blocked,
            }
        };
        self.close_run(&mut run)?;
        // Stragglers (siblings of an escalated or blocked leg) can no longer change the
        // outcome; they must not start after the run ended.
        for mut j in jobs::by_root_in_state(self.tx, &root.root_id, JobState::Queued)? {
            self.finish_job(
                &mut j,
                JobState::Cancelled,
                format!(
                    "run {} ended {}; queued job no longer needed",
                    run.root_id, run.state
                ),
            )?;
        }
        Ok(())
    }

    pub fn close_run(&self, run: &mut Run) -> R<()> {
        if let Some(since) = run.paused_since_ms.take() {
            run.paused_ms += self.now - since;
        }
        run.finished_ms = Some(self.now);
        run.updated_ms = self.now;
        runs::put(self.tx, run)?;
        self.event(
            &run.root_id,
            None,
            "run_finished",
            format!("run {}", run.state),
            Some(json!({"state": run.state})),
        )
    }

    // ---- after a job settles ---------------------------------------------------------

    /// Routes a freshly settled job: ask-gate, dispatch, then upwards.
    pub fn after_settle(&self, job: &Job) -> R<()> {
        // A straggler finishing after its run ended changes nothing.
        if runs::require(self.tx, &job.root_id)?.state.is_terminal() {
            return Ok(());
        }
        let result = parse_result(job.result.as_ref());
        // Any healthy result may ask (contract): the job's state came from its decision,
        // so `blocked` and `failed` results open the gate as well as approving ones.
        if let Some(r) = &result
            && job.state == r.decision.job_state()
        {
            if !r.human_questions.is_empty() {
                self.open_ask(job, r)?;
                if !r.delegations.is_empty() {
                    self.event(
                        &job.root_id,
                        Some(&job.id),
                        "delegation_ignored_ask",
                        format!(
                            "result asks {} question(s); not dispatching {} delegation(s)",
                            r.human_questions.len(),
                            r.delegations.len()
                        ),
                        None,
                    )?;
                }
            } else if job.state == JobState::Succeeded && !r.delegations.is_empty() {
                // Only a succeeded result dispatches, as before.
                self.dispatch(job, r)?;
            }
        }
        let job = jobs::require(self.tx, &job.id)?;
        self.propagate(&job)
    }

    // ---- dispatch --------------------------------------------------------------------

    fn dispatch(&self, job: &Job, r: &GitmootResult) -> R<()> {
        let set = &r.delegations;
        let n = set.len();
        let root = job.root_id.as_str();
        let ev = |kind: &str, msg: String| self.event(root, Some(&job.id), kind, msg, None);
        if job.ephemeral.is_some() {
            return ev(
                "delegation_ignored_ephemeral",
                format!("ephemeral workers cannot delegate; ignoring {n} delegation(s)"),
            );
        }
        if job.kind == JobKind::Finalize {
            return ev(
                "delegation_finalized",
                format!("finalize continuation is terminal; ignoring {n} delegation(s)"),
            );
        }
        let run = runs::require(self.tx, root)?;
        let carry = Carry::from_value(job.carry.as_ref());
        let cfg = self.cfg;
        if let Some(reason) = stop_reason(&run) {
            let kind = if run.killed {
                "delegation_killed"
            } else {
                "delegation_walltime_exceeded"
            };
            ev(kind, format!("{reason}; not dispatching {n} delegation(s)"))?;
            return self.finalize(job, &reason, set, &carry);
        }
        if job.depth >= cfg.max_delegation_depth {
            ev(
                "delegation_depth_exceeded",
                format!(
                    "delegation depth {} reached the limit of {}; not dispatching {n} delegation(s)",
                    job.depth, cfg.max_delegation_depth
                ),
            )?;
            let reason = format!(
                "delegation depth limit of {} reached",
                cfg.max_delegation_depth
            );
            return self.finalize(job, &reason, set, &carry);
        }
        let projected = projected_jobs(set);
        // Legs admitted elsewhere in the tree but not yet enqueued already hold budget, and
        // one job is always kept for the tree's finalize, so the cap is never crossed.
        let tree = run.jobs + delegations::count_waiting(self.tx, root)?;
        if tree + projected + 1 > cfg.max_delegation_total_jobs {
            ev(
                "delegation_budget_exceeded",
                format!(
                    "delegation batch of {projected} new job(s) would exceed the per-root job budget of {} (tree at {}); not dispatching {n} delegation(s)",
                    cfg.max_delegation_total_jobs, tree
                ),
            )?;
            if self.nested(job)? {
                // Only the top of the tree finalizes at the cap: a nested coordinator's
                // refused set ends with its own result, which its parent synthesizes.
                return Ok(());
            }
            return self.finalize(job, &self.budget_reason(), set, &carry);
        }
        let active = active_ms(&run, self.now);
        if active > cfg.max_delegation_walltime.0 {
            let limit = crate::duration::format_ms(cfg.max_delegation_walltime.0);
            ev(
                "delegation_walltime_exceeded",
                format!(
                    "delegation tree {root} ran {}, exceeding the wall-clock limit of {limit}; not dispatching {n} delegation(s)",
                    crate::duration::format_ms(active)
                ),
            )?;
            return self.finalize(
                job,
                &format!("wall-clock limit of {limit} reached"),
                set,
                &carry,
            );
        }
        let budget = cfg.max_delegation_token_budget;
        if budget > 0 && run.tokens >= budget {
            ev(
                "delegation_cost_exceeded",
                format!(
                    "delegation tree {root} reached token budget {budget} (used {}); not dispatching {n} delegation(s)",
                    run.tokens
                ),
            )?;
            return self.finalize(job, &format!("token budget {budget} reached"), set, &carry);
        }
        let usd = cfg.max_delegation_cost_usd;
        if usd > 0.0 && run.cost_usd >= usd {
            ev(
                "delegation_cost_usd_exceeded",
                format!(
                    "delegation tree {root} reached cost budget ${usd:.4} (spent ${:.4}); not dispatching {n} delegation(s)",
                    run.cost_usd
                ),
            )?;
            return self.finalize(job, &format!("cost budget ${usd:.4} reached"), set, &carry);
        }
        if n as u32 > cfg.max_delegation_width {
            let msg = format!(
                "delegation set width {n} exceeds the per-coordinator limit of {}",
                cfg.max_delegation_width
            );
            ev(
                "delegation_width_exceeded",
                format!("{msg}; not dispatching"),
            )?;
            return self.finalize(job, &msg, set, &carry);
        }
        let hash = set_hash(set);
        if carry.hashes.contains(&hash) {
            if carry.repeat_count >= 1 {
                ev(
                    "delegation_loop_detected",
                    format!(
                        "delegation set {hash} repeated after a corrective nudge (repeat count {}); not dispatching {n} delegation(s)",
                        carry.repeat_count
                    ),
                )?;
                return self.finalize(
                    job,
                    "delegation set repeated after a corrective nudge",
                    set,
                    &carry,
                );
            }
            ev(
                "delegation_loop_warning",
                format!(
                    "delegation set {hash} repeats a recent round; sending a corrective continuation instead of dispatching {n} delegation(s)"
                ),
            )?;
            let next = Carry {
                hashes: carry.window_with(&hash),
                repeat_count: carry.repeat_count + 1,
                finalize_reason: None,
                ..carry.clone()
            };
            let prompt = prompts::corrective(&self.frame(job, &[])?, set);
            return self.enqueue_continuation(
                job,
                JobKind::Continuation,
                prompt,
                next,
                "corrective",
            );
        }
        if let Some(reason) = self.preflight(job, set)? {
            ev("delegation_preflight_failed", reason.clone())?;
            let streak = carry.streak + 1;
            if streak >= streak_threshold(cfg) && carry.repeat_count >= 1 {
                return self.finalize(
                    job,
                    "delegation set named an unroutable agent after a corrective nudge",
                    set,
                    &carry,
                );
            }
            let next = Carry {
                repeat_count: carry.repeat_count + 1,
                streak,
                finalize_reason: None,
                ..carry.clone()
            };
            let prompt = prompts::preflight(&self.frame(job, &[])?, &reason, set);
            return self.enqueue_continuation(
                job,
                JobKind::Continuation,
                prompt,
                next,
                "preflight",
            );
        }
        for (i, d) in set.iter().enumerate() {
            delegations::put(
                self.tx,
                &Leg {
                    parent_id: job.id.clone(),
                    delegation_id: d.id.clone(),
                    root_id: job.root_id.clone(),
                    position: i as u32,
                    spec: d.clone(),
                    state: LegState::Waiting,
                    job_id: None,
                    attempts: 0,
                    dedup_of: None,
                    accepted: false,
                    note: None,
                    created_ms: self.now,
                    updated_ms: self.now,
                },
            )?;
        }
        let mut j = jobs::require(self.tx, &job.id)?;
        j.followup = FollowUp::Batch;
        j.updated_ms = self.now;
        jobs::put(self.tx, &j)?;
        ev(
            "delegation_batch",
            format!("batch of {n} delegation(s) admitted"),
        )?;
        self.advance_batch(&job.id)
    }

    /// All-or-nothing routability check of every leg; the reason of the first failure.
    fn preflight(&self, job: &Job, set: &[Delegation]) -> R<Option<String>> {
        for d in set {
            let Some(name) = &d.agent else { continue };
            let err = match agents::get(self.tx, name)? {
                None => {
                    if name.parse::<RuntimeKind>().is_ok() && name != "shell" {
                        format!("{name:?} is a runtime, not a registered agent")
                    } else {
                        format!("agent {name:?} is not registered")
                    }
                }
                Some(a) => match crate::registry::check_dispatch(&a, d.action, job.repo.as_deref())
                {
                    Ok(()) => continue,
                    Err(e) => e.0,
                },
            };
            let valid: Vec<String> = agents::list(self.tx)?
                .into_iter()
                .filter(|a| {
                    crate::registry::check_dispatch(a, d.action, job.repo.as_deref()).is_ok()
                })
                .map(|a| a.name)
                .collect();
            let scope = job.repo.as_deref().unwrap_or("this tree");
            let hint = if valid.is_empty() {
                format!(
                    "No agents are registered for {scope} with the {} capability.",
                    d.action
                )
            } else {
                format!(
                    "Agents valid for {} on {scope}: {}.",
                    d.action,
                    valid.join(", ")
                )
            };
            return Ok(Some(format!(
                "delegation {:?} preflight failed: {err}. {hint} Or use an inline \"ephemeral\" spec (runtime codex, claude or kimi) for a one-off worker.",
                d.id
            )));
        }
        Ok(None)
    }

    // ---- the batch barrier -----------------------------------------------------------

    fn leg_outcome(&self, leg: &Leg, legs: &[Leg]) -> R<LegOutcome> {
        match leg.state {
            LegState::Waiting => Ok(LegOutcome::Pending),
            LegState::Skipped => Ok(LegOutcome::NotRun(
                leg.note.clone().unwrap_or_else(|| "not enqueued".into()),
            )),
            LegState::Deduped => {
                let winner = legs
                    .iter()
                    .find(|l| Some(&l.delegation_id) == leg.dedup_of.as_ref());
                match winner {
                    Some(w) if w.state != LegState::Deduped => self.leg_outcome(w, legs),
                    _ => Ok(LegOutcome::NotRun("deduplicated".into())),
                }
            }
            LegState::Dispatched => {
                let job = jobs::require(self.tx, leg.job_id.as_deref().unwrap_or_default())?;
                Ok(match self.resolution(&job)? {
                    Resolution::Pending => LegOutcome::Pending,
                    Resolution::Done {
                        job_id,
                        state: JobState::Succeeded,
                        result,
                        ..
                    } => LegOutcome::Ok {
                        job_id,
                        result: result.map(|b| *b),
                    },
                    Resolution::Done {
                        job_id,
                        state,
                        result,
                        reason,
                    } => LegOutcome::Failed {
                        job_id,
                        state,
                        result: result.map(|b| *b),
                        reason,
                    },
                })
            }
        }
    }

    fn outcomes(&self, legs: &[Leg]) -> R<Vec<LegOutcome>> {
        legs.iter().map(|l| self.leg_outcome(l, legs)).collect()
    }

    /// Re-evaluates a coordinator's batch: retries, policies, deferred legs, continuation.
    pub fn advance_batch(&self, parent_id: &str) -> R<()> {
        let parent = jobs::require(self.tx, parent_id)?;
        if parent.followup != FollowUp::Batch {
            return Ok(());
        }
        let run = runs::require(self.tx, &parent.root_id)?;
        let carry = Carry::from_value(parent.carry.as_ref());
        let stop = stop_reason(&run).or(carry.finalize_reason.clone());
        let mut legs = delegations::for_parent(self.tx, parent_id)?;
        let mut outs = self.outcomes(&legs)?;

        if stop.is_none() {
            let mut retried = false;
            for (leg, out) in legs.iter().zip(&outs) {
                if let LegOutcome::Failed { job_id, .. } = out
                    && leg.state == LegState::Dispatched
                    && !leg.accepted
                    && leg.attempts <= leg.spec.retry
                {
                    if !self.budget_allows_one_more(&parent.root_id)? {
                        self.event(
                            &parent.root_id,
                            Some(parent_id),
                            "delegation_retry_refused",
                            format!(
                                "delegation {:?} not retried: the per-root job budget of {} is reached",
                                leg.delegation_id, self.cfg.max_delegation_total_jobs
                            ),
                            None,
                        )?;
                        continue;
                    }
                    let mut l = leg.clone();
                    let new_id = self.enqueue_leg(&parent, &mut l, legs.as_slice(), None)?;
                    self.event(
                        &parent.root_id,
                        Some(parent_id),
                        "delegation_retry",
                        format!(
                            "delegation {:?} retry {}/{} enqueued as job {new_id} after {job_id} failed",
                            leg.delegation_id,
                            l.attempts - 1,
                            leg.spec.retry
                        ),
                        None,
                    )?;
                    retried = true;
                }
            }
            if retried {
                legs = delegations::for_parent(self.tx, parent_id)?;
                outs = self.outcomes(&legs)?;
            }
        }

        let mut escalate = false;
        if stop.is_none() {
            for (leg, out) in legs.iter().zip(&outs) {
                let LegOutcome::Failed {
                    job_id,
                    state,
                    result,
                    reason,
                } = out
                else {
                    continue;
                };
                if leg.accepted || leg.state != LegState::Dispatched {
                    continue;
                }
                let why = result
                    .as_ref()
                    .map(|r| r.summary.clone())
                    .filter(|s| !s.trim().is_empty())
                    .or(reason.clone())
                    .unwrap_or_else(|| state.to_string());
                match leg.spec.failure_policy {
                    FailurePolicy::Continue => {}
                    FailurePolicy::Escalate => escalate = true,
                    FailurePolicy::EscalateHuman => {
                        let failure_open = escalations::open_for_root(self.tx, &parent.root_id)?
                            .iter()
                            .any(|r| r.job_id == parent.id && r.kind == RoundKind::Failure);
                        if !failure_open {
                            self.open_failure(&parent, leg, job_id, &why)?;
                        }
                        return Ok(());
                    }
                    FailurePolicy::BlockParent => {
                        let msg = format!(
                            "delegation {:?} failed (failure_policy block_parent): {why}",
                            leg.delegation_id
                        );
                        return self.block(&parent, msg);
                    }
                }
            }
        }

        // Deferred legs: enqueue the ready ones until nothing changes (a dedupe can make
        // a dependent ready at once).
        loop {
            let mut changed = false;
            for i in 0..legs.len() {
                if legs[i].state != LegState::Waiting {
                    continue;
                }
                if let Some(reason) = &stop {
                    let mut l = legs[i].clone();
                    l.state = LegState::Skipped;
                    l.note = Some(format!("not enqueued ({reason})"));
                    l.updated_ms = self.now;
                    delegations::put(self.tx, &l)?;
                    changed = true;
                    continue;
                }
                if escalate {
                    continue;
                }
                let mut ready = true;
                let mut dead = false;
                for dep in &legs[i].spec.deps {
                    let pos = legs.iter().position(|l| &l.delegation_id == dep);
                    match pos.map(|p| &outs[p]) {
                        Some(LegOutcome::Ok { .. }) => {}
                        Some(LegOutcome::Pending) => ready = false,
                        _ => dead = true,
                    }
                }
                if dead {
                    let mut l = legs[i].clone();
                    l.state = LegState::Skipped;
                    l.note = Some("not enqueued (dependencies unmet)".into());
                    l.updated_ms = self.now;
                    delegations::put(self.tx, &l)?;
                    changed = true;
                } else if ready {
                    let mut l = legs[i].clone();
                    self.enqueue_leg(&parent, &mut l, legs.as_slice(), None)?;
                    changed = true;
                    // Re-read before the next leg so a fingerprint twin sees this one.
                    break;
                }
            }
            if !changed {
                break;
            }
            legs = delegations::for_parent(self.tx, parent_id)?;
            outs = self.outcomes(&legs)?;
        }

        let all_resolved = outs.iter().all(LegOutcome::resolved);
        // Invariant 1: an open round holds the continuation even when every leg is done.
        if escalations::open_for_job(self.tx, parent_id)?.is_some() {
            return Ok(());
        }
        if let Some(reason) = stop {
            if all_resolved {
                let frame = self.frame(&parent, &self.leg_lines(&legs, &outs)?)?;
                return self.finalize_with(&parent, &reason, frame, &[], &carry);
            }
            return Ok(());
        }
        if escalate || all_resolved {
            self.maybe_continue(&parent, &legs, &outs, &carry)?;
        }
        Ok(())
    }

    fn block(&self, parent: &Job, msg: String) -> R<()> {
        let mut p = jobs::require(self.tx, &parent.id)?;
        p.followup = FollowUp::Blocked;
        p.followup_reason = Some(msg.clone());
        p.updated_ms = self.now;
        jobs::put(self.tx, &p)?;
        self.event(&p.root_id, Some(&p.id), "delegation_blocked", msg, None)?;
        self.propagate(&p)
    }

    /// Whether one more job fits the per-root budget, counting admitted legs not yet
    /// enqueued (a retry must not eat the room a deferred leg was admitted with) and the
    /// one job kept for the tree's finalize.
    pub fn budget_allows_one_more(&self, root: &str) -> R<bool> {
        Ok(self.budget_room(root)? > 1)
    }

    /// Jobs the tree may still create: the budget less every job made and every admitted
    /// leg not yet enqueued.
    fn budget_room(&self, root: &str) -> R<i64> {
        let run = runs::require(self.tx, root)?;
        let reserved = delegations::count_waiting(self.tx, root)?;
        Ok(i64::from(self.cfg.max_delegation_total_jobs) - i64::from(run.jobs + reserved))
    }

    fn budget_reason(&self) -> String {
        format!(
            "per-root job budget of {} reached",
            self.cfg.max_delegation_total_jobs
        )
    }

    /// Whether `job` sits inside a leg's subtree (its chain of continuations leads to a
    /// leg), rather than on the root's own chain, which alone finalizes at the job cap.
    fn nested(&self, job: &Job) -> R<bool> {
        let mut j = job.clone();
        loop {
            match j.kind {
                JobKind::Leg => return Ok(true),
                JobKind::Root => return Ok(false),
                JobKind::Continuation | JobKind::Finalize => match &j.parent_id {
                    Some(p) => j = jobs::require(self.tx, p)?,
                    None => return Ok(false),
                },
            }
        }
    }

    /// Creates the next attempt's job for a leg and marks the leg dispatched.
    pub fn retry_leg(
        &self,
        parent: &Job,
        leg: &mut Leg,
        legs: &[Leg],
        guidance: Option<&str>,
    ) -> R<String> {
        self.enqueue_leg(parent, leg, legs, guidance)
    }

    fn enqueue_leg(
        &self,
        parent: &Job,
        leg: &mut Leg,
        legs: &[Leg],
        guidance: Option<&str>,
    ) -> R<String> {
        let d = leg.spec.clone();
        if leg.attempts == 0
            && let Some(fp) = d
                .fingerprint
                .as_deref()
                .map(str::trim)
                .filter(|f| !f.is_empty())
            && let Some(winner) = legs.iter().find(|l| {
                l.delegation_id != d.id
                    && l.state == LegState::Dispatched
                    && l.spec.fingerprint.as_deref().map(str::trim) == Some(fp)
            })
        {
            leg.state = LegState::Deduped;
            leg.dedup_of = Some(winner.delegation_id.clone());
            leg.updated_ms = self.now;
            delegations::put(self.tx, leg)?;
            self.event(
                &parent.root_id,
                Some(&parent.id),
                "delegation_deduped",
                format!(
                    "delegation {:?} skipped: fingerprint {fp:?} already enqueued as delegation {:?}",
                    d.id, winner.delegation_id
                ),
                None,
            )?;
            return Ok(winner.job_id.clone().unwrap_or_default());
        }
        let attempt = leg.attempts + 1;
        let base = if attempt == 1 {
            format!("{}/{}", parent.id, d.id)
        } else {
            format!("{}/{}.{attempt}", parent.id, d.id)
        };
        let id = self.fresh_id(&base)?;
        let (agent_name, agent_model, agent_effort) = match (&d.agent, &d.ephemeral) {
            (Some(name), _) => {
                let a = agents::get(self.tx, name)?;
                (
                    name.clone(),
                    a.as_ref().and_then(|a| a.model.clone()),
                    a.and_then(|a| a.effort),
                )
            }
            (None, Some(e)) => (
                ephemeral_name(&parent.id, &d.id),
                e.model.clone(),
                e.effort.clone(),
            ),
            (None, None) => (String::new(), None, None),
        };
        let mut prompt = d.prompt.trim().to_string();
        if self.cfg.inject_upstream_dep_context {
            prompt.push_str(&self.upstream(&d, legs)?);
        }
        // A leg naming artifacts receives the coordinator's artifact_body (the brief).
        if !d.artifacts.is_empty()
            && let Some(body) = parse_result(parent.result.as_ref()).and_then(|r| r.artifact_body)
        {
            let mut remaining = prompts::AGGREGATE_CAP;
            prompt.push_str(&format!(
                "\n\nDelegation artifacts ({}) from job {}:\n",
                d.artifacts.join(", "),
                parent.id
            ));
            prompt.push_str(&prompts::inline_body(
                &body,
                self.body_cap(),
                &mut remaining,
                &parent.id,
            ));
        }
        if let Some(g) = guidance.filter(|g| !g.trim().is_empty()) {
            prompt.push_str(&format!("\n\nHuman guidance on resume: {}", g.trim()));
        }
        let mut job = Job::queued(
            id.clone(),
            parent.root_id.clone(),
            JobKind::Leg,
            agent_name,
            d.action,
            prompt,
            self.now,
        );
        job.parent_id = Some(parent.id.clone());
        job.delegation_id = Some(d.id.clone());
        job.repo = parent.repo.clone();
        job.attempt = attempt;
        job.depth = parent.depth + 1;
        job.model = d.model.clone().or(agent_model);
        job.effort = d.effort.clone().or(agent_effort);
        job.phase = d.phase.clone();
        job.timeout_ms = timeout_for(self.cfg, &d);
        job.fingerprint = d.fingerprint.clone();
        job.retries_left = d.retry.saturating_sub(attempt - 1);
        job.ephemeral = d
            .ephemeral
            .as_ref()
            .map(|e| serde_json::to_value(e).map_err(StoreError::from))
            .transpose()?;
        job.worktree = d.worktree.clone();
        job.dispatched_by = parent.agent.clone();
        self.insert_job(&job)?;
        leg.state = LegState::Dispatched;
        leg.job_id = Some(id.clone());
        leg.attempts = attempt;
        leg.updated_ms = self.now;
        delegations::put(self.tx, leg)?;
        self.event(
            &parent.root_id,
            Some(&parent.id),
            "delegation_enqueued",
            format!("delegation {:?} enqueued as job {id}", d.id),
            None,
        )?;
        Ok(id)
    }

    fn upstream(&self, d: &Delegation, legs: &[Leg]) -> R<String> {
        let mut deps: Vec<&String> = d.deps.iter().collect();
        deps.sort();
        let mut ups = Vec::new();
        for dep in deps {
            let Some(l) = legs.iter().find(|l| &l.delegation_id == dep) else {
                continue;
            };
            if let LegOutcome::Ok { job_id, result } = self.leg_outcome(l, legs)? {
                let state_or_decision = result
                    .as_ref()
                    .map(|r| r.decision.as_str().to_string())
                    .unwrap_or_else(|| "succeeded".into());
                ups.push(Upstream {
                    id: dep.clone(),
                    agent: prompts::agent_label(&l.spec),
                    action: l.spec.action.to_string(),
                    job_id,
                    decision: state_or_decision,
                    summary: result
                        .as_ref()
                        .map(|r| r.summary.clone())
                        .unwrap_or_default(),
                    changes_made: result.as_ref().map(|r| r.changes_made.len()).unwrap_or(0),
                    artifact_body: result.and_then(|r| r.artifact_body),
                });
            }
        }
        Ok(prompts::upstream_block(&ups, self.body_cap()))
    }

    fn body_cap(&self) -> usize {
        match self.cfg.inline_artifact_max_bytes {
            0 => prompts::DEFAULT_BODY_CAP,
            n => n as usize,
        }
    }

    // ---- synthesis and continuation ----------------------------------------------------

    fn maybe_continue(
        &self,
        parent: &Job,
        legs: &[Leg],
        outs: &[LegOutcome],
        carry: &Carry,
    ) -> R<()> {
        let rules: Vec<SynthesisRule> = legs.iter().filter_map(|l| l.spec.synthesis_rule).collect();
        // Vote: every child approves; `skipped` (a succeeded abstention) counts as passing.
        let votes_yes = |o: &LegOutcome| match o {
            LegOutcome::Ok {
                result: Some(r), ..
            } => super::checks::approving(self.cfg, r) || r.decision == Decision::Skipped,
            LegOutcome::Ok { result: None, .. } => true,
            _ => false,
        };
        if rules.contains(&SynthesisRule::Vote) && !outs.iter().all(votes_yes) {
            return self.block(
                parent,
                format!(
                    "delegation synthesis_rule vote failed: not all delegated children for {} were approved/succeeded",
                    parent.id
                ),
            );
        }
        if rules.contains(&SynthesisRule::Quorum) {
            let k = legs.iter().filter_map(|l| l.spec.quorum).max().unwrap_or(0) as usize;
            let approving = outs
                .iter()
                .filter(|o| match o {
                    LegOutcome::Ok {
                        result: Some(r), ..
                    } => super::checks::approving(self.cfg, r),
                    LegOutcome::Ok { result: None, .. } => true,
                    _ => false,
                })
                .count();
            if approving < k {
                return self.block(
                    parent,
                    format!(
                        "delegation synthesis_rule quorum failed: fewer than {k} delegated children for {} were approved/succeeded",
                        parent.id
                    ),
                );
            }
        }
        let lines = self.leg_lines(legs, outs)?;
        let set: Vec<Delegation> = legs.iter().map(|l| l.spec.clone()).collect();
        let hash = set_hash(&set);
        let digest = progress_digest(outs.iter().map(LegOutcome::result));
        let streak = if carry.digest.as_deref() == Some(digest.as_str()) {
            carry.streak + 1
        } else {
            0
        };
        // A failed verdict goes through its own replan cap first: the producers making no
        // progress between replans must end in verify_replan_exhausted, not the loop ladder.
        if rules.contains(&SynthesisRule::Verify) {
            let mut findings = Vec::new();
            for (l, o) in legs.iter().zip(outs) {
                if l.spec.synthesis_rule != Some(SynthesisRule::Verify) {
                    continue;
                }
                let agent = prompts::agent_label(&l.spec);
                match o {
                    LegOutcome::Ok {
                        result: Some(r), ..
                    // Skipped abstains from the verdict.
                    } if super::checks::approving(self.cfg, r) || r.decision == Decision::Skipped => {}
                    // A result-less success passes; a pending leg (escalate hands the
                    // batch over early) has no verdict yet.
                    LegOutcome::Ok { result: None, .. } | LegOutcome::Pending => {}
                    LegOutcome::NotRun(note) => findings.push(format!(
                        "- verify leg \"{}\" (agent {agent}): missing — {note}",
                        l.delegation_id
                    )),
                    LegOutcome::Ok {
                        result: Some(r), ..
                    } => findings.push(format!(
                        "- verify leg \"{}\" (agent {agent}): {} — {}",
                        l.delegation_id,
                        r.decision.as_str(),
                        r.summary
                    )),
                    LegOutcome::Failed { state, result, .. } => findings.push(format!(
                        "- verify leg \"{}\" (agent {agent}): {} — {}",
                        l.delegation_id,
                        result
                            .as_ref()
                            .map(|r| r.decision.as_str().to_string())
                            .unwrap_or(state.to_string()),
                        result
                            .as_ref()
                            .map(|r| r.summary.clone())
                            .unwrap_or_default()
                    )),
                }
            }
            if !findings.is_empty() {
                let cap = self.cfg.max_verify_replan_attempts;
                if carry.verify_attempt >= cap {
                    self.event(
                        &parent.root_id,
                        Some(&parent.id),
                        "verify_replan_exhausted",
                        format!("independent verification failed after {cap} replan attempt(s); finalizing"),
                        None,
                    )?;
                    let frame = self.frame(parent, &lines)?;
                    return self.finalize_with(
                        parent,
                        &format!("verify→replan attempt cap of {cap} reached"),
                        frame,
                        &[],
                        carry,
                    );
                }
                let attempt = carry.verify_attempt + 1;
                self.event(
                    &parent.root_id,
                    Some(&parent.id),
                    "verify_replan_warning",
                    format!("independent verification failed (attempt {attempt}/{cap}); enqueuing a replan continuation"),
                    None,
                )?;
                let next = Carry {
                    hashes: carry.window_with(&hash),
                    repeat_count: 0,
                    streak,
                    digest: Some(digest),
                    verify_attempt: attempt,
                    finalize_reason: None,
                };
                let prompt = prompts::replan(&self.frame(parent, &lines)?, &findings, attempt, cap);
                return self.enqueue_continuation(
                    parent,
                    JobKind::Continuation,
                    prompt,
                    next,
                    "replan",
                );
            }
        }
        if streak >= streak_threshold(self.cfg) {
            let short = &digest[..12];
            if carry.repeat_count >= 1 {
                self.event(
                    &parent.root_id,
                    Some(&parent.id),
                    "delegation_loop_detected",
                    format!(
                        "delegation tree made no new durable side effect for {streak} consecutive generations after a corrective nudge (digest {short}); finalizing instead of continuing"
                    ),
                    None,
                )?;
                let frame = self.frame(parent, &lines)?;
                return self.finalize_with(
                    parent,
                    "no new durable side effect after a corrective nudge",
                    frame,
                    &[],
                    carry,
                );
            }
            self.event(
                &parent.root_id,
                Some(&parent.id),
                "delegation_loop_warning",
                format!(
                    "delegation tree made no new durable side effect for {streak} consecutive generations (digest {short}); sending a corrective continuation"
                ),
                None,
            )?;
            let next = Carry {
                hashes: carry.window_with(&hash),
                repeat_count: carry.repeat_count + 1,
                streak,
                digest: Some(digest),
                verify_attempt: carry.verify_attempt,
                finalize_reason: None,
            };
            let prompt = prompts::corrective(&self.frame(parent, &lines)?, &set);
            return self.enqueue_continuation(
                parent,
                JobKind::Continuation,
                prompt,
                next,
                "corrective",
            );
        }
        let next = Carry {
            hashes: carry.window_with(&hash),
            repeat_count: 0,
            streak,
            digest: Some(digest),
            verify_attempt: carry.verify_attempt,
            finalize_reason: None,
        };
        let prompt = prompts::continuation(&self.frame(parent, &lines)?);
        self.enqueue_continuation(parent, JobKind::Continuation, prompt, next, "synthesis")
    }

    fn leg_lines(&self, legs: &[Leg], outs: &[LegOutcome]) -> R<Vec<LegLine>> {
        let mut lines = Vec::new();
        for (l, o) in legs.iter().zip(outs) {
            let agent = match &l.job_id {
                Some(j) => jobs::get(self.tx, j)?.map(|j| j.agent).unwrap_or_default(),
                None => prompts::agent_label(&l.spec),
            };
            let line =
                |job_id: Option<String>, outcome: String, r: Option<&GitmootResult>| LegLine {
                    id: l.delegation_id.clone(),
                    job_id,
                    agent: agent.clone(),
                    outcome,
                    phase: l.spec.phase.clone(),
                    summary: r.map(|r| r.summary.clone()),
                    artifact_body: r.and_then(|r| r.artifact_body.clone()),
                };
            lines.push(match o {
                LegOutcome::Ok { job_id, result } => line(
                    Some(job_id.clone()),
                    result
                        .as_ref()
                        .map(|r| r.decision.as_str().to_string())
                        .unwrap_or("succeeded".into()),
                    result.as_ref(),
                ),
                LegOutcome::Failed {
                    job_id,
                    state,
                    result,
                    reason,
                } => {
                    let mut ln = line(
                        Some(job_id.clone()),
                        result
                            .as_ref()
                            .map(|r| r.decision.as_str().to_string())
                            .unwrap_or(state.to_string()),
                        result.as_ref(),
                    );
                    if ln.summary.is_none() {
                        ln.summary = reason.clone();
                    }
                    ln
                }
                LegOutcome::Pending => {
                    let state = match &l.job_id {
                        Some(j) => jobs::get(self.tx, j)?
                            .map(|j| j.state.to_string())
                            .unwrap_or_default(),
                        None => "waiting".into(),
                    };
                    line(l.job_id.clone(), format!("still {state}"), None)
                }
                LegOutcome::NotRun(note) => line(None, note.clone(), None),
            });
        }
        Ok(lines)
    }

    /// The shared frame of every continuation-like prompt for `parent`.
    pub fn frame(&self, parent: &Job, legs: &[LegLine]) -> R<Frame> {
        let root = jobs::require(self.tx, &parent.root_id)?;
        let run = runs::require(self.tx, &parent.root_id)?;
        let next_depth = parent.depth + 1;
        let (md, mj) = (
            self.cfg.max_delegation_depth,
            self.cfg.max_delegation_total_jobs,
        );
        let pressure = (next_depth + 2 >= md || run.jobs + 2 >= mj).then(|| {
            format!(
                "You are at depth {next_depth}/{md} and {}/{mj} jobs — prefer finishing (synthesize now) over re-delegating.",
                run.jobs
            )
        });
        Ok(Frame {
            goal: root.prompt.clone(),
            answers: super::escalation::answers_block(self.tx, &parent.id)?,
            pressure,
            legs: legs.to_vec(),
            inline_cap: self.cfg.inline_artifact_bodies.then(|| self.body_cap()),
        })
    }

    /// A finalize continuation for a set that was refused at dispatch.
    fn finalize(&self, job: &Job, reason: &str, set: &[Delegation], carry: &Carry) -> R<()> {
        let frame = self.frame(job, &[])?;
        self.finalize_with(job, reason, frame, set, carry)
    }

    pub fn finalize_with(
        &self,
        job: &Job,
        reason: &str,
        frame: Frame,
        not_dispatched: &[Delegation],
        carry: &Carry,
    ) -> R<()> {
        let prompt = prompts::finalize(&frame, reason, not_dispatched);
        let next = Carry {
            finalize_reason: None,
            ..carry.clone()
        };
        self.enqueue_continuation(job, JobKind::Finalize, prompt, next, reason)
    }

    /// The single continuation slot of `parent`; a second request is a no-op.
    pub fn enqueue_continuation(
        &self,
        parent: &Job,
        kind: JobKind,
        prompt: String,
        carry: Carry,
        why: &str,
    ) -> R<()> {
        let mut p = jobs::require(self.tx, &parent.id)?;
        if p.followup == FollowUp::Continued {
            return Ok(());
        }
        let (mut kind, mut prompt, mut why) = (kind, prompt, why.to_string());
        // This job would take the slot kept for the tree's finalize: the root's chain
        // finalizes in it; a nested coordinator ends on its own result instead.
        let nested = self.nested(&p)?;
        // A finalize that asked already holds the tree's last slot: its answer is recorded
        // on the round, but no further job fits.
        let no_room_left = nested || p.kind == JobKind::Finalize;
        if (no_room_left || kind != JobKind::Finalize) && self.budget_room(&p.root_id)? <= 1 {
            let reason = self.budget_reason();
            if no_room_left {
                self.event(
                    &p.root_id,
                    Some(&p.id),
                    "delegation_budget_exceeded",
                    format!(
                        "{reason}; job {} ends on its own result without a {why} continuation",
                        p.id
                    ),
                    None,
                )?;
                p.followup = FollowUp::None;
                p.followup_reason = Some(format!("no continuation: {reason}"));
                p.updated_ms = self.now;
                jobs::put(self.tx, &p)?;
                return self.propagate(&p);
            }
            self.event(
                &p.root_id,
                Some(&p.id),
                "delegation_budget_exceeded",
                format!(
                    "{reason}; the {why} continuation of job {} becomes the tree's finalize",
                    p.id
                ),
                None,
            )?;
            let legs = delegations::for_parent(self.tx, &p.id)?;
            let outs = self.outcomes(&legs)?;
            let frame = self.frame(&p, &self.leg_lines(&legs, &outs)?)?;
            prompt = prompts::finalize(&frame, &reason, &[]);
            kind = JobKind::Finalize;
            why = reason;
        }
        let why = why.as_str();
        let id = self.fresh_id(&format!("{}/continuation", p.id))?;
        let mut c = Job::queued(
            id.clone(),
            p.root_id.clone(),
            kind,
            p.agent.clone(),
            Action::Ask,
            prompt,
            self.now,
        );
        c.parent_id = Some(p.id.clone());
        c.repo = p.repo.clone();
        c.depth = p.depth + 1;
        c.model = p.model.clone();
        c.effort = p.effort.clone();
        c.phase = p.phase.clone();
        c.dispatched_by = p.agent.clone();
        c.carry = Some(carry.to_value());
        self.insert_job(&c)?;
        p.followup = FollowUp::Continued;
        p.continuation_id = Some(id.clone());
        p.updated_ms = self.now;
        jobs::put(self.tx, &p)?;
        let occupied = if kind == JobKind::Finalize {
            format!("finalize continuation occupies the continuation slot for job {id}")
        } else {
            format!("delegation continuation enqueued as job {id}")
        };
        self.event(
            &p.root_id,
            Some(&p.id),
            "delegation_continuation_enqueued",
            occupied,
            Some(json!({"job": id, "why": why})),
        )?;
        if kind == JobKind::Finalize {
            self.event(
                &p.root_id,
                Some(&p.id),
                "delegation_finalize_enqueued",
                format!("termination backstop tripped ({why}); enqueued a best-effort finalize continuation as job {id}"),
                Some(json!({"job": id, "reason": why})),
            )?;
        }
        Ok(())
    }

    // ---- human rounds ----------------------------------------------------------------

    fn open_ask(&self, asker: &Job, r: &GitmootResult) -> R<()> {
        let target_id = if asker.kind == JobKind::Leg {
            asker.parent_id.clone().unwrap_or_else(|| asker.id.clone())
        } else {
            asker.id.clone()
        };
        let qs = serde_json::to_value(&r.human_questions).map_err(StoreError::from)?;
        let open =
            escalations::open_for_job(self.tx, &target_id)?.filter(|x| x.kind == RoundKind::Ask);
        let target = jobs::require(self.tx, &target_id)?;
        if let Some(mut round) = open {
            // Invariant 2: a sibling's questions join the open round, never dropped.
            if let (Value::Array(have), Value::Array(more)) = (&mut round.questions, qs) {
                have.extend(more);
            }
            round.reason = format!(
                "{} human question(s) awaiting an answer",
                round.questions.as_array().map_or(0, Vec::len)
            );
            escalations::update(self.tx, &round)?;
            return self.event(
                &target.root_id,
                Some(&target_id),
                "delegation_ask_extended",
                format!(
                    "job {} added {} question(s) to the open round",
                    asker.id,
                    r.human_questions.len()
                ),
                None,
            );
        }
        let n = r.human_questions.len();
        let round = Round {
            id: 0,
            root_id: target.root_id.clone(),
            job_id: target_id.clone(),
            kind: RoundKind::Ask,
            questions: qs,
            reason: format!("{n} human question(s) awaiting an answer"),
            failed_job_id: Some(asker.id.clone()),
            delegation_id: asker.delegation_id.clone(),
            opened_ms: self.now,
            resolved_ms: None,
            verb: None,
            answers: None,
            instructions: None,
            thread_id: None,
        };
        let id = escalations::insert(self.tx, &round)?;
        let rendered: Vec<String> = r
            .human_questions
            .iter()
            .map(|q| {
                if q.choices.is_empty() {
                    format!("- {}: {}", q.id, q.prompt)
                } else {
                    format!(
                        "- {}: {} (choices: {})",
                        q.id,
                        q.prompt,
                        q.choices.join(", ")
                    )
                }
            })
            .collect();
        self.event(
            &target.root_id,
            Some(&target_id),
            "delegation_escalation_requested",
            format!("job {} is awaiting a human answer to {n} question(s)", target_id),
            Some(json!({"kind": "ask", "escalation": id, "asked_by": asker.id, "question": rendered.join("\n"), "paused_at": self.now})),
        )?;
        self.pause(&target.root_id)?;
        self.hooks
            .ask_round_opened(self.tx, self.clock, &target, id)
    }

    fn open_failure(&self, parent: &Job, leg: &Leg, failed_job: &str, why: &str) -> R<()> {
        let reason = format!(
            "delegation {:?} failed (failure_policy escalate_human): {why}",
            leg.delegation_id
        );
        let round = Round {
            id: 0,
            root_id: parent.root_id.clone(),
            job_id: parent.id.clone(),
            kind: RoundKind::Failure,
            questions: Value::Array(vec![]),
            reason: reason.clone(),
            failed_job_id: Some(failed_job.to_string()),
            delegation_id: Some(leg.delegation_id.clone()),
            opened_ms: self.now,
            resolved_ms: None,
            verb: None,
            answers: None,
            instructions: None,
            thread_id: None,
        };
        let id = escalations::insert(self.tx, &round)?;
        self.event(
            &parent.root_id,
            Some(&parent.id),
            "delegation_escalation_requested",
            format!("workflow awaiting human: {reason}"),
            Some(json!({"kind": "failure", "escalation": id, "delegation_id": leg.delegation_id, "child_job_id": failed_job, "question": leg.spec.prompt, "paused_at": self.now})),
        )?;
        self.pause(&parent.root_id)
    }

    fn pause(&self, root: &str) -> R<()> {
        let mut run = runs::require(self.tx, root)?;
        if run.state.is_terminal() {
            return Ok(());
        }
        if run.paused_since_ms.is_none() {
            run.paused_since_ms = Some(self.now);
        }
        run.state = RunState::AwaitingHuman;
        run.updated_ms = self.now;
        runs::put(self.tx, &run)?;
        Ok(())
    }

    /// Closes a round; the run resumes its clock when no round is left open.
    pub fn resolve_round(
        &self,
        round: &mut Round,
        verb: &str,
        answers: Option<Value>,
        instructions: Option<String>,
    ) -> R<()> {
        round.resolved_ms = Some(self.now);
        round.verb = Some(verb.to_string());
        round.answers = answers;
        round.instructions = instructions;
        escalations::update(self.tx, round)?;
        self.event(
            &round.root_id,
            Some(&round.job_id),
            "delegation_escalation_resolved",
            format!("{} round on job {} resolved with {verb}", round.kind.as_str(), round.job_id),
            Some(json!({"kind": round.kind.as_str(), "escalation": round.id, "delegation_id": round.delegation_id, "child_job_id": round.failed_job_id, "reason": verb, "question": round.instructions, "answers": round.answers})),
        )?;
        if escalations::open_for_root(self.tx, &round.root_id)?.is_empty() {
            let mut run = runs::require(self.tx, &round.root_id)?;
            if let Some(since) = run.paused_since_ms.take() {
                run.paused_ms += self.now - since;
            }
            if run.state == RunState::AwaitingHuman {
                run.state = RunState::Running;
            }
            run.updated_ms = self.now;
            runs::put(self.tx, &run)?;
        }
        Ok(())
    }
}

/// New jobs a batch would add: each fingerprint counts once.
fn projected_jobs(set: &[Delegation]) -> u32 {
    let mut seen = std::collections::HashSet::new();
    set.iter()
        .filter(|d| {
            match d
                .fingerprint
                .as_deref()
                .map(str::trim)
                .filter(|f| !f.is_empty())
            {
                Some(fp) => seen.insert(fp.to_string()),
                None => true,
            }
        })
        .count() as u32
}

/// Timeout precedence: delegation > phase default > action default > delegation default.
pub fn timeout_for(cfg: &OrchestrateConfig, d: &Delegation) -> Option<i64> {
    if let Some(t) = d.timeout_ms {
        return Some(t);
    }
    let by_phase = match d.phase.as_deref().map(str::trim) {
        Some("plan") => cfg.default_plan_timeout,
        Some("implement") => cfg.default_implement_timeout,
        Some("review" | "review-prep" | "review-dispatch") => cfg.default_review_timeout,
        Some("gate") => cfg.default_gate_timeout,
        Some("repair" | "continue") => cfg.default_repair_timeout,
        _ => None,
    };
    let by_action = match d.action {
        Action::Review => cfg.default_review_timeout,
        Action::Implement => cfg.default_implement_timeout,
        Action::Ask => None,
    };
    by_phase
        .or(by_action)
        .or(cfg.default_delegation_timeout)
        .map(|d| d.0)
}

/// `<slug>-ephemeral-<10 hex>`: the `-ephemeral-` infix is how UIs filter them.
pub fn ephemeral_name(parent_id: &str, delegation_id: &str) -> String {
    let mut slug: String = delegation_id
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .trim_matches('-')
        .chars()
        .take(32)
        .collect();
    if slug.is_empty() {
        slug = "ephem".into();
    }
    let h = crate::ids::sha256_hex(format!("{parent_id}{delegation_id}").as_bytes());
    format!("{slug}-ephemeral-{}", &h[..10])
}
