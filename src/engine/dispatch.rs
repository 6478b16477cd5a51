//! Dispatching a result's delegations: every bound checked in the seed's order, then
//! preflight, then the legs enqueued as one batch. Does not settle or advance legs (`batch`).

use super::bounds::{Carry, active_ms, set_hash, stop_reason, streak_threshold};
use super::ctx::{Ctx, R};
use super::prompts;
use crate::contract::{Delegation, GitmootResult};
use crate::domain::{EventKind, JobKind, RuntimeKind};
use crate::store::agents;
use crate::store::delegations::{self, Leg, LegState};
use crate::store::jobs::{self, FollowUp, Job};
use crate::store::runs;

impl Ctx<'_, '_> {
    pub(super) fn dispatch(&self, job: &Job, r: &GitmootResult) -> R<()> {
        let set = &r.delegations;
        let n = set.len();
        let root = job.root_id.as_str();
        let ev = |kind: EventKind, msg: String| self.event(root, Some(&job.id), kind, msg, None);
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
        let run = runs::require(self.tx, root)?;
        let carry = Carry::from_value(job.carry.as_ref());
        let cfg = self.cfg;
        // A bound that holds ends the set: logged as its own kind, then the tree finalizes.
        let refuse = |kind: EventKind, msg: String, reason: &str| -> R<()> {
            ev(kind, msg)?;
            self.finalize(job, reason, set, &carry)
        };
        if let Some(reason) = stop_reason(&run) {
            let kind = if run.killed {
                EventKind::DelegationKilled
            } else {
                EventKind::DelegationWalltimeExceeded
            };
            return refuse(
                kind,
                format!("{reason}; not dispatching {n} delegation(s)"),
                &reason,
            );
        }
        if job.depth >= cfg.max_delegation_depth {
            return refuse(
                EventKind::DelegationDepthExceeded,
                format!(
                    "delegation depth {} reached the limit of {}; not dispatching {n} delegation(s)",
                    job.depth, cfg.max_delegation_depth
                ),
                &format!(
                    "delegation depth limit of {} reached",
                    cfg.max_delegation_depth
                ),
            );
        }
        let projected = projected_jobs(set);
        // Legs admitted elsewhere in the tree but not yet enqueued already hold budget, and
        // one job is always kept for the tree's finalize, so the cap is never crossed.
        let tree = run.jobs + delegations::count_waiting(self.tx, root)?;
        if tree + projected + 1 > cfg.max_delegation_total_jobs {
            ev(
                EventKind::DelegationBudgetExceeded,
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
            return refuse(
                EventKind::DelegationWalltimeExceeded,
                format!(
                    "delegation tree {root} ran {}, exceeding the wall-clock limit of {limit}; not dispatching {n} delegation(s)",
                    crate::duration::format_ms(active)
                ),
                &format!("wall-clock limit of {limit} reached"),
            );
        }
        let budget = cfg.max_delegation_token_budget;
        let usd = cfg.max_delegation_cost_usd;
        let spent = if budget > 0 && run.tokens >= budget {
            Some((
                EventKind::DelegationCostExceeded,
                format!("token budget {budget}"),
                format!("used {}", run.tokens),
            ))
        } else if usd > 0.0 && run.cost_usd >= usd {
            Some((
                EventKind::DelegationCostUsdExceeded,
                format!("cost budget ${usd:.4}"),
                format!("spent ${:.4}", run.cost_usd),
            ))
        } else {
            None
        };
        if let Some((kind, limit, used)) = spent {
            return refuse(
                kind,
                format!(
                    "delegation tree {root} reached {limit} ({used}); not dispatching {n} delegation(s)"
                ),
                &format!("{limit} reached"),
            );
        }
        if n as u32 > cfg.max_delegation_width {
            let msg = format!(
                "delegation set width {n} exceeds the per-coordinator limit of {}",
                cfg.max_delegation_width
            );
            return refuse(
                EventKind::DelegationWidthExceeded,
                format!("{msg}; not dispatching"),
                &msg,
            );
        }
        let hash = set_hash(set);
        if carry.hashes.contains(&hash) {
            if carry.repeat_count >= 1 {
                return refuse(
                    EventKind::DelegationLoopDetected,
                    format!(
                        "delegation set {hash} repeated after a corrective nudge (repeat count {}); not dispatching {n} delegation(s)",
                        carry.repeat_count
                    ),
                    "delegation set repeated after a corrective nudge",
                );
            }
            ev(
                EventKind::DelegationLoopWarning,
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
            ev(EventKind::DelegationPreflightFailed, reason.clone())?;
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
            EventKind::DelegationBatch,
            format!("batch of {n} delegation(s) admitted"),
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
