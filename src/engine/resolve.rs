//! How a settled job's outcome travels upward: routing right after it settles (ask gate,
//! dispatch), its resolution through batch and continuation, and the run's final state.
//! Does not decide a batch's outcome (`batch`) or what a continuation says (`continuation`).

use serde_json::json;

use super::ctx::{Ctx, R, Resolution, parse_result};
use crate::domain::{EventKind, JobKind, JobState, RunState};
use crate::store::escalations;
use crate::store::jobs::{self, FollowUp, Job};
use crate::store::runs::{self, Run};

impl Ctx<'_, '_> {
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

    pub(super) fn finish_run(&self, root: &Job, res: &Resolution) -> R<()> {
        let mut run = runs::require(self.tx, &root.root_id)?;
        if run.state.is_terminal() {
            return Ok(());
        }
        let Resolution::Done { job_id, state, .. } = res else {
            return Ok(());
        };
        let before = run.clone();
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
        self.close_run(&before, &mut run)?;
        // Stragglers (siblings of an escalated or blocked leg) can no longer change the
        // outcome; they must not start after the run ended.
        let mut stragglers = jobs::by_root_in_state(self.tx, &root.root_id, JobState::Queued)?;
        stragglers.extend(jobs::by_root_in_state(
            self.tx,
            &root.root_id,
            JobState::Interrupted,
        )?);
        for mut j in stragglers {
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

    pub fn close_run(&self, before: &Run, run: &mut Run) -> R<()> {
        if let Some(since) = run.paused_since_ms.take() {
            run.paused_ms += self.now - since;
        }
        run.finished_ms = Some(self.now);
        run.updated_ms = self.now;
        runs::put_over(self.tx, before, run)?;
        self.event(
            &run.root_id,
            None,
            EventKind::RunFinished,
            format!("run {}", run.state),
            Some(json!({"state": run.state})),
        )
    }

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
                // A coordinator's own round holds its set until the answer dispatches it
                // (`escalation::answer`); a leg's round is its parent's, so a leg's set is
                // dropped and said so.
                let (kind, what) = if job.kind == JobKind::Leg {
                    (EventKind::DelegationIgnoredAsk, "not dispatching")
                } else {
                    (
                        EventKind::DelegationDeferredAsk,
                        "dispatching after the answer",
                    )
                };
                if !r.delegations.is_empty() {
                    self.job_event(
                        job,
                        kind,
                        format!(
                            "result asks {} question(s); {what} {} delegation(s)",
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
}
