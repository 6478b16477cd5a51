//! Synthesis and the single continuation per coordinator: normal, corrective, replan, answer
//! or finalize. Does not open human rounds (`gates`) or check bounds (`bounds`).

use serde_json::json;

use super::batch::LegOutcome;
use super::bounds::{Carry, progress_digest, set_hash, streak_threshold};
use super::ctx::{Ctx, R};
use super::prompts::{self, Frame, LegLine};
use crate::contract::{Decision, Delegation, GitmootResult, SynthesisRule};
use crate::domain::{Action, EventKind, JobKind};
use crate::store::delegations::{self, Leg};
use crate::store::jobs::{self, FollowUp, Job};
use crate::store::runs;

/// What one generation of legs hands its coordinator: the lines its prompts show and the
/// loop signals its next carry keeps.
struct Generation {
    lines: Vec<LegLine>,
    set: Vec<Delegation>,
    hash: String,
    digest: String,
    /// Generations in a row with the same progress digest.
    streak: u32,
}

impl Generation {
    /// The carry the next continuation starts from.
    fn next(&self, carry: &Carry, repeat_count: u32, verify_attempt: u32) -> Carry {
        Carry {
            hashes: carry.window_with(&self.hash),
            repeat_count,
            streak: self.streak,
            digest: Some(self.digest.clone()),
            verify_attempt,
            finalize_reason: None,
        }
    }
}

impl Ctx<'_, '_> {
    pub(super) fn maybe_continue(
        &self,
        parent: &Job,
        legs: &[Leg],
        outs: &[LegOutcome],
        carry: &Carry,
    ) -> R<()> {
        let rules: Vec<SynthesisRule> = legs.iter().filter_map(|l| l.spec.synthesis_rule).collect();
        if let Some(why) = self.synthesis_refusal(parent, legs, outs, &rules) {
            return self.block(parent, why);
        }
        let set: Vec<Delegation> = legs.iter().map(|l| l.spec.clone()).collect();
        let digest = progress_digest(outs.iter().map(LegOutcome::result));
        let g = Generation {
            lines: self.leg_lines(legs, outs)?,
            hash: set_hash(&set),
            set,
            streak: if carry.digest.as_deref() == Some(digest.as_str()) {
                carry.streak + 1
            } else {
                0
            },
            digest,
        };
        // A failed verdict goes through its own replan cap first: the producers making no
        // progress between replans must end in verify_replan_exhausted, not the loop ladder.
        if rules.contains(&SynthesisRule::Verify) {
            let findings = self.verify_findings(legs, outs);
            if !findings.is_empty() {
                return self.replan(parent, &g, carry, &findings);
            }
        }
        if g.streak >= streak_threshold(self.cfg) {
            return self.no_progress(parent, &g, carry);
        }
        let next = g.next(carry, 0, carry.verify_attempt);
        let prompt = prompts::continuation(&self.frame(parent, &g.lines)?);
        self.enqueue_continuation(parent, JobKind::Continuation, prompt, next, "synthesis")
    }

    /// Why a vote or quorum blocks the coordinator, if it does.
    fn synthesis_refusal(
        &self,
        parent: &Job,
        legs: &[Leg],
        outs: &[LegOutcome],
        rules: &[SynthesisRule],
    ) -> Option<String> {
        // Vote: every child approves; `skipped` (a succeeded abstention) counts as passing.
        let votes_yes = |o: &LegOutcome| match o {
            LegOutcome::Ok {
                result: Some(r), ..
            } => super::checks::approving(self.cfg, r) || r.decision == Decision::Skipped,
            LegOutcome::Ok { result: None, .. } => true,
            _ => false,
        };
        if rules.contains(&SynthesisRule::Vote) && !outs.iter().all(votes_yes) {
            return Some(format!(
                "delegation synthesis_rule vote failed: not all delegated children for {} were approved/succeeded",
                parent.id
            ));
        }
        if !rules.contains(&SynthesisRule::Quorum) {
            return None;
        }
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
        (approving < k).then(|| {
            format!(
                "delegation synthesis_rule quorum failed: fewer than {k} delegated children for {} were approved/succeeded",
                parent.id
            )
        })
    }

    /// One line per verify leg whose verdict did not pass.
    fn verify_findings(&self, legs: &[Leg], outs: &[LegOutcome]) -> Vec<String> {
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
        findings
    }

    /// Gives up on more generations: `kind`'s event says why, then a finalize built from
    /// this generation ends the tree for `reason`.
    fn finalize_generation(
        &self,
        parent: &Job,
        g: &Generation,
        carry: &Carry,
        kind: EventKind,
        message: String,
        reason: &str,
    ) -> R<()> {
        self.job_event(parent, kind, message, None)?;
        let frame = self.frame(parent, &g.lines)?;
        self.finalize_with(parent, reason, frame, &[], carry)
    }

    /// A failed verdict: a replan continuation, until the replan cap finalizes the tree.
    fn replan(&self, parent: &Job, g: &Generation, carry: &Carry, findings: &[String]) -> R<()> {
        let cap = self.cfg.max_verify_replan_attempts;
        if carry.verify_attempt >= cap {
            return self.finalize_generation(
                parent,
                g,
                carry,
                EventKind::VerifyReplanExhausted,
                format!(
                    "independent verification failed after {cap} replan attempt(s); finalizing"
                ),
                &format!("verify→replan attempt cap of {cap} reached"),
            );
        }
        let attempt = carry.verify_attempt + 1;
        self.job_event(
            parent,
            EventKind::VerifyReplanWarning,
            format!("independent verification failed (attempt {attempt}/{cap}); enqueuing a replan continuation"),
            None,
        )?;
        let next = g.next(carry, 0, attempt);
        let prompt = prompts::replan(&self.frame(parent, &g.lines)?, findings, attempt, cap);
        self.enqueue_continuation(parent, JobKind::Continuation, prompt, next, "replan")
    }

    /// No new durable side effect for a streak of generations: one corrective continuation,
    /// then a finalize.
    fn no_progress(&self, parent: &Job, g: &Generation, carry: &Carry) -> R<()> {
        let (streak, short) = (g.streak, &g.digest[..12]);
        if carry.repeat_count >= 1 {
            return self.finalize_generation(
                parent,
                g,
                carry,
                EventKind::DelegationLoopDetected,
                format!(
                    "delegation tree made no new durable side effect for {streak} consecutive generations after a corrective nudge (digest {short}); finalizing instead of continuing"
                ),
                "no new durable side effect after a corrective nudge",
            );
        }
        self.job_event(
            parent,
            EventKind::DelegationLoopWarning,
            format!(
                "delegation tree made no new durable side effect for {streak} consecutive generations (digest {short}); sending a corrective continuation"
            ),
            None,
        )?;
        let next = g.next(carry, carry.repeat_count + 1, carry.verify_attempt);
        let prompt = prompts::corrective(&self.frame(parent, &g.lines)?, &g.set);
        self.enqueue_continuation(parent, JobKind::Continuation, prompt, next, "corrective")
    }

    pub(super) fn leg_lines(&self, legs: &[Leg], outs: &[LegOutcome]) -> R<Vec<LegLine>> {
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
            approvals: super::escalation::approvals_block(self.tx, &parent.id)?,
            pressure,
            legs: legs.to_vec(),
            inline: self.cfg.inline_artifact_bodies.then(|| self.inline()),
        })
    }

    /// A finalize continuation for a set that was refused at dispatch.
    pub(super) fn finalize(
        &self,
        job: &Job,
        reason: &str,
        set: &[Delegation],
        carry: &Carry,
    ) -> R<()> {
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
                self.job_event(
                    &p,
                    EventKind::DelegationBudgetExceeded,
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
            self.job_event(
                &p,
                EventKind::DelegationBudgetExceeded,
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
        c.on_label = p.on_label.clone();
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
        self.job_event(
            &p,
            EventKind::DelegationContinuationEnqueued,
            occupied,
            Some(json!({"job": id, "why": why})),
        )?;
        if kind == JobKind::Finalize {
            self.job_event(
                &p,
                EventKind::DelegationFinalizeEnqueued,
                format!("termination backstop tripped ({why}); enqueued a best-effort finalize continuation as job {id}"),
                Some(json!({"job": id, "reason": why})),
            )?;
        }
        Ok(())
    }
}
