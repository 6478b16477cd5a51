//! Dispatching a result's delegations: the bounds catalogue (`bounds::first_stop`) walked
//! in the seed's order, then the loop check and preflight, then the legs admitted as one
//! batch. Does not settle or advance legs (`batch`).

use super::bounds::{Carry, Dispatching, first_stop, set_hash, streak_threshold};
use super::ctx::{Ctx, R};
use super::prompts;
use crate::contract::{Delegation, GitmootResult};
use crate::domain::{EventKind, JobKind, RuntimeKind};
use crate::store::agents;
use crate::store::delegations::{self, Leg};
use crate::store::jobs::{self, FollowUp, Job};
use crate::store::runs;

impl Ctx<'_, '_> {
    pub(super) fn dispatch(&self, job: &Job, r: &GitmootResult) -> R<()> {
        let set = &r.delegations;
        let n = set.len();
        let ev = |kind, msg| self.event(&job.root_id, Some(&job.id), kind, msg, None);
        if job.ephemeral.is_some() {
            return ev(
                EventKind::DelegationIgnoredEphemeral,
                format!("ephemeral workers cannot delegate; ignoring {n} delegation(s)"),
            );
        }
        if job.kind == JobKind::Finalize {
            return ev(
                EventKind::DelegationFinalized,
                format!("finalize continuation is terminal; ignoring {n} delegation(s)"),
            );
        }
        let run = runs::require(self.tx, &job.root_id)?;
        let carry = Carry::from_value(job.carry.as_ref());
        // Legs admitted elsewhere in the tree but not yet enqueued already hold budget.
        let tree = run.jobs + delegations::count_waiting(self.tx, &job.root_id)?;
        let facts = Dispatching {
            run: &run,
            cfg: self.cfg,
            clock: self.clock,
            now: self.now,
            depth: job.depth,
            width: n,
            projected: projected_jobs(set),
            tree,
        };
        // A bound that holds ends the set: logged as its own kind, then the tree finalizes.
        if let Some(stop) = first_stop(&facts) {
            ev(stop.event_kind(), stop.message())?;
            if stop.spares_nested() && self.nested(job)? {
                return Ok(());
            }
            return self.finalize(job, &stop.reason(), set, &carry);
        }
        let hash = set_hash(set);
        if carry.hashes.contains(&hash) {
            return self.repeated(job, set, &carry, &hash);
        }
        if let Some(reason) = self.preflight(job, set)? {
            return self.unroutable(job, set, &carry, reason);
        }
        self.admit(job, set)
    }

    /// A set that repeats a recent round: one corrective continuation, then a finalize.
    fn repeated(&self, job: &Job, set: &[Delegation], carry: &Carry, hash: &str) -> R<()> {
        let n = set.len();
        let ev = |kind, msg| self.event(&job.root_id, Some(&job.id), kind, msg, None);
        if carry.repeat_count >= 1 {
            ev(
                EventKind::DelegationLoopDetected,
                format!(
                    "delegation set {hash} repeated after a corrective nudge (repeat count {}); not dispatching {n} delegation(s)",
                    carry.repeat_count
                ),
            )?;
            return self.finalize(
                job,
                "delegation set repeated after a corrective nudge",
                set,
                carry,
            );
        }
        ev(
            EventKind::DelegationLoopWarning,
            format!(
                "delegation set {hash} repeats a recent round; sending a corrective continuation instead of dispatching {n} delegation(s)"
            ),
        )?;
        let next = Carry {
            hashes: carry.window_with(hash),
            repeat_count: carry.repeat_count + 1,
            finalize_reason: None,
            ..carry.clone()
        };
        let prompt = prompts::corrective(&self.frame(job, &[])?, set);
        self.enqueue_continuation(job, JobKind::Continuation, prompt, next, "corrective")
    }

    /// A set naming an unroutable agent: a preflight continuation, until the streak ends it.
    fn unroutable(&self, job: &Job, set: &[Delegation], carry: &Carry, reason: String) -> R<()> {
        self.job_event(
            job,
            EventKind::DelegationPreflightFailed,
            reason.clone(),
            None,
        )?;
        let streak = carry.streak + 1;
        if streak >= streak_threshold(self.cfg) && carry.repeat_count >= 1 {
            return self.finalize(
                job,
                "delegation set named an unroutable agent after a corrective nudge",
                set,
                carry,
            );
        }
        let next = Carry {
            repeat_count: carry.repeat_count + 1,
            streak,
            finalize_reason: None,
            ..carry.clone()
        };
        let prompt = prompts::preflight(&self.frame(job, &[])?, &reason, set);
        self.enqueue_continuation(job, JobKind::Continuation, prompt, next, "preflight")
    }

    /// Admits the whole set as one batch: its legs wait, the coordinator follows the batch.
    fn admit(&self, job: &Job, set: &[Delegation]) -> R<()> {
        for (i, d) in set.iter().enumerate() {
            delegations::put(
                self.tx,
                &Leg::waiting(
                    job.id.clone(),
                    job.root_id.clone(),
                    i as u32,
                    d.clone(),
                    self.now,
                ),
            )?;
        }
        let mut j = jobs::require(self.tx, &job.id)?;
        j.followup = FollowUp::Batch;
        j.updated_ms = self.now;
        jobs::put(self.tx, &j)?;
        self.job_event(
            job,
            EventKind::DelegationBatch,
            format!("batch of {} delegation(s) admitted", set.len()),
            None,
        )?;
        self.advance_batch(&job.id)
    }

    /// All-or-nothing routability check of every leg; the reason of the first failure.
    pub(super) fn preflight(&self, job: &Job, set: &[Delegation]) -> R<Option<String>> {
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
}

/// New jobs a batch would add: each fingerprint counts once.
pub(super) fn projected_jobs(set: &[Delegation]) -> u32 {
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
