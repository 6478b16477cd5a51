//! The batch barrier: each leg's outcome, retries, failure policies, blocking and the job
//! budget. Does not build a leg's job (`legs`) or write the continuation (`continuation`).

use super::bounds::{Carry, job_budget_reason, stop_reason};
use super::ctx::{Ctx, R, Resolution};
use crate::contract::{FailurePolicy, GitmootResult};
use crate::domain::{EventKind, JobKind, JobState};
use crate::store::delegations::{self, Leg, LegState};
use crate::store::escalations::{self, RoundKind};
use crate::store::jobs::{self, FollowUp, Job};
use crate::store::runs;

/// A leg's outcome inside its batch.
#[derive(Debug, Clone)]
pub(super) enum LegOutcome {
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
    pub(super) fn resolved(&self) -> bool {
        !matches!(self, LegOutcome::Pending)
    }
    pub(super) fn result(&self) -> Option<&GitmootResult> {
        match self {
            LegOutcome::Ok { result, .. } | LegOutcome::Failed { result, .. } => result.as_ref(),
            _ => None,
        }
    }
}

/// What the failure policies of a batch's failed legs leave to do.
enum Policies {
    /// Nothing failed that stops the batch.
    Continue,
    /// An `escalate` leg failed: the coordinator continues now, before the others finish.
    Escalate,
    /// A human gate opened (or is open) or the coordinator was blocked.
    Settled,
}

impl Ctx<'_, '_> {
    pub(super) fn leg_outcome(&self, leg: &Leg, legs: &[Leg]) -> R<LegOutcome> {
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

    pub(super) fn outcomes(&self, legs: &[Leg]) -> R<Vec<LegOutcome>> {
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
        let mut escalate = false;
        if stop.is_none() {
            if self.retry_failed(&parent, &legs, &outs)? {
                legs = delegations::for_parent(self.tx, parent_id)?;
                outs = self.outcomes(&legs)?;
            }
            match self.apply_policies(&parent, &legs, &outs)? {
                Policies::Settled => return Ok(()),
                Policies::Escalate => escalate = true,
                Policies::Continue => {}
            }
        }
        self.enqueue_deferred(&parent, &mut legs, &mut outs, stop.as_deref(), escalate)?;
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

    /// Enqueues a retry of every failed leg with attempts left, budget permitting;
    /// whether any was enqueued.
    fn retry_failed(&self, parent: &Job, legs: &[Leg], outs: &[LegOutcome]) -> R<bool> {
        let mut retried = false;
        for (leg, out) in legs.iter().zip(outs) {
            let LegOutcome::Failed { job_id, .. } = out else {
                continue;
            };
            if leg.state != LegState::Dispatched || leg.accepted || leg.attempts > leg.spec.retry {
                continue;
            }
            if !self.budget_allows_one_more(&parent.root_id)? {
                self.job_event(
                    parent,
                    EventKind::DelegationRetryRefused,
                    format!(
                        "delegation {:?} not retried: the per-root job budget of {} is reached",
                        leg.delegation_id, self.cfg.max_delegation_total_jobs
                    ),
                    None,
                )?;
                continue;
            }
            let mut l = leg.clone();
            let new_id = self.enqueue_leg(parent, &mut l, legs, None)?;
            self.job_event(
                parent,
                EventKind::DelegationRetry,
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
        Ok(retried)
    }

    /// Applies each failed leg's failure policy, in leg order; a human gate or a block
    /// settles the batch for now.
    fn apply_policies(&self, parent: &Job, legs: &[Leg], outs: &[LegOutcome]) -> R<Policies> {
        let mut escalate = false;
        for (leg, out) in legs.iter().zip(outs) {
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
                        self.open_failure(parent, leg, job_id, &why)?;
                    }
                    return Ok(Policies::Settled);
                }
                FailurePolicy::BlockParent => {
                    let msg = format!(
                        "delegation {:?} failed (failure_policy block_parent): {why}",
                        leg.delegation_id
                    );
                    self.block(parent, msg)?;
                    return Ok(Policies::Settled);
                }
            }
        }
        Ok(if escalate {
            Policies::Escalate
        } else {
            Policies::Continue
        })
    }

    /// Deferred legs: enqueues the ready ones until nothing changes (a dedupe can make a
    /// dependent ready at once); skips them all when the tree is stopping, holds them while
    /// an escalation is pending. `legs` and `outs` are left re-read.
    fn enqueue_deferred(
        &self,
        parent: &Job,
        legs: &mut Vec<Leg>,
        outs: &mut Vec<LegOutcome>,
        stop: Option<&str>,
        escalate: bool,
    ) -> R<()> {
        loop {
            let mut changed = false;
            for i in 0..legs.len() {
                if legs[i].state != LegState::Waiting {
                    continue;
                }
                if let Some(reason) = stop {
                    self.skip(&legs[i], format!("not enqueued ({reason})"))?;
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
                    self.skip(&legs[i], "not enqueued (dependencies unmet)".into())?;
                    changed = true;
                } else if ready {
                    let mut l = legs[i].clone();
                    self.enqueue_leg(parent, &mut l, legs.as_slice(), None)?;
                    changed = true;
                    // Re-read before the next leg so a fingerprint twin sees this one.
                    break;
                }
            }
            if !changed {
                return Ok(());
            }
            *legs = delegations::for_parent(self.tx, &parent.id)?;
            *outs = self.outcomes(legs)?;
        }
    }

    /// Marks a waiting leg as never enqueued, with why.
    fn skip(&self, leg: &Leg, note: String) -> R<()> {
        let mut l = leg.clone();
        l.state = LegState::Skipped;
        l.note = Some(note);
        l.updated_ms = self.now;
        delegations::put(self.tx, &l)?;
        Ok(())
    }

    pub(super) fn block(&self, parent: &Job, msg: String) -> R<()> {
        let mut p = jobs::require(self.tx, &parent.id)?;
        p.followup = FollowUp::Blocked;
        p.followup_reason = Some(msg.clone());
        p.updated_ms = self.now;
        jobs::put(self.tx, &p)?;
        self.job_event(&p, EventKind::DelegationBlocked, msg, None)?;
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
    pub(super) fn budget_room(&self, root: &str) -> R<i64> {
        let run = runs::require(self.tx, root)?;
        let reserved = delegations::count_waiting(self.tx, root)?;
        Ok(i64::from(self.cfg.max_delegation_total_jobs) - i64::from(run.jobs + reserved))
    }

    pub(super) fn budget_reason(&self) -> String {
        job_budget_reason(self.cfg.max_delegation_total_jobs)
    }

    /// Whether `job` sits inside a leg's subtree (its chain of continuations leads to a
    /// leg), rather than on the root's own chain, which alone finalizes at the job cap.
    pub(super) fn nested(&self, job: &Job) -> R<bool> {
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
}
