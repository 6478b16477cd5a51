//! Opening human rounds: the ask gate, failure escalations and pausing a tree, and resolving
//! a round once it is answered. Answering and resuming are `escalation`'s.

use serde_json::{Value, json};

use super::ctx::{Ctx, R};
use crate::contract::GitmootResult;
use crate::domain::{EventKind, JobKind, RunState};
use crate::store::StoreError;
use crate::store::delegations::Leg;
use crate::store::escalations::{self, Round, RoundKind};
use crate::store::jobs::{self, Job};
use crate::store::runs;

impl Ctx<'_, '_> {
    /// Inserts an open round held by `holder` (the coordinator whose continuation waits).
    fn insert_round(
        &self,
        holder: &Job,
        kind: RoundKind,
        questions: Value,
        reason: String,
        failed_job_id: &str,
        delegation_id: Option<String>,
    ) -> R<i64> {
        let round = Round {
            id: 0,
            root_id: holder.root_id.clone(),
            job_id: holder.id.clone(),
            kind,
            questions,
            reason,
            failed_job_id: Some(failed_job_id.to_string()),
            delegation_id,
            opened_ms: self.now,
            resolved_ms: None,
            verb: None,
            answers: None,
            instructions: None,
            thread_id: None,
        };
        Ok(escalations::insert(self.tx, &round)?)
    }

    pub(super) fn open_ask(&self, asker: &Job, r: &GitmootResult) -> R<()> {
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
                EventKind::DelegationAskExtended,
                format!(
                    "job {} added {} question(s) to the open round",
                    asker.id,
                    r.human_questions.len()
                ),
                None,
            );
        }
        let n = r.human_questions.len();
        let id = self.insert_round(
            &target,
            RoundKind::Ask,
            qs,
            format!("{n} human question(s) awaiting an answer"),
            &asker.id,
            asker.delegation_id.clone(),
        )?;
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
            EventKind::DelegationEscalationRequested,
            format!("job {} is awaiting a human answer to {n} question(s)", target_id),
            Some(json!({"kind": "ask", "escalation": id, "asked_by": asker.id, "question": rendered.join("\n"), "paused_at": self.now})),
        )?;
        self.pause(&target.root_id)?;
        self.hooks
            .ask_round_opened(self.tx, self.clock, &target, id)
    }

    pub(super) fn open_failure(
        &self,
        parent: &Job,
        leg: &Leg,
        failed_job: &str,
        why: &str,
    ) -> R<()> {
        let reason = format!(
            "delegation {:?} failed (failure_policy escalate_human): {why}",
            leg.delegation_id
        );
        let id = self.insert_round(
            parent,
            RoundKind::Failure,
            Value::Array(vec![]),
            reason.clone(),
            failed_job,
            Some(leg.delegation_id.clone()),
        )?;
        self.job_event(
            parent,
            EventKind::DelegationEscalationRequested,
            format!("workflow awaiting human: {reason}"),
            Some(json!({"kind": "failure", "escalation": id, "delegation_id": leg.delegation_id, "child_job_id": failed_job, "question": leg.spec.prompt, "paused_at": self.now})),
        )?;
        self.pause(&parent.root_id)
    }

    pub(super) fn pause(&self, root: &str) -> R<()> {
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

    /// Closes a round; the run resumes its clock when nothing in it waits for a human.
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
        self.hooks.round_closed(self.tx, self.clock, round)?;
        self.event(
            &round.root_id,
            Some(&round.job_id),
            EventKind::DelegationEscalationResolved,
            format!("{} round on job {} resolved with {verb}", round.kind.as_str(), round.job_id),
            Some(json!({"kind": round.kind.as_str(), "escalation": round.id, "delegation_id": round.delegation_id, "child_job_id": round.failed_job_id, "reason": verb, "question": round.instructions, "answers": round.answers})),
        )?;
        super::lost::unpause(self, &round.root_id)
    }
}
