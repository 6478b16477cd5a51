//! Building a leg: its job row, retries, timeout, ephemeral name and the upstream bodies its
//! prompt carries. Does not decide whether a leg may run (`batch`, `dispatch`).

use super::batch::LegOutcome;
use super::ctx::{Ctx, R, parse_result};
use super::prompts::{self, Upstream};
use crate::config::OrchestrateConfig;
use crate::contract::Delegation;
use crate::domain::{Action, EventKind, JobKind};
use crate::store::delegations::{self, Leg, LegState};
use crate::store::jobs::Job;
use crate::store::{StoreError, agents};

impl Ctx<'_, '_> {
    /// Creates the next attempt's job for a leg (its first, or a retry) and marks the leg
    /// dispatched.
    pub fn enqueue_leg(
        &self,
        parent: &Job,
        leg: &mut Leg,
        legs: &[Leg],
        guidance: Option<&str>,
    ) -> R<String> {
        if leg.attempts == 0
            && let Some(winner) = self.dedupe(parent, leg, legs)?
        {
            return Ok(winner);
        }
        let d = leg.spec.clone();
        let attempt = leg.attempts + 1;
        let base = if attempt == 1 {
            format!("{}/{}", parent.id, d.id)
        } else {
            format!("{}/{}.{attempt}", parent.id, d.id)
        };
        let id = self.fresh_id(&base)?;
        let (agent_name, agent_model, agent_effort) = self.leg_agent(parent, &d)?;
        let prompt = self.leg_prompt(parent, &d, legs, guidance)?;
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
        // A pinned tree runs where its checkout or hardware is, legs included.
        job.on_label = parent.on_label.clone();
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
        self.job_event(
            parent,
            EventKind::DelegationEnqueued,
            format!("delegation {:?} enqueued as job {id}", d.id),
            None,
        )?;
        Ok(id)
    }

    /// A first attempt whose fingerprint a dispatched sibling already carries is marked
    /// deduplicated instead of run; the sibling's job id, when it is.
    fn dedupe(&self, parent: &Job, leg: &mut Leg, legs: &[Leg]) -> R<Option<String>> {
        let d = &leg.spec;
        let Some(fp) = d
            .fingerprint
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
        else {
            return Ok(None);
        };
        let Some(winner) = legs.iter().find(|l| {
            l.delegation_id != d.id
                && l.state == LegState::Dispatched
                && l.spec.fingerprint.as_deref().map(str::trim) == Some(fp)
        }) else {
            return Ok(None);
        };
        let message = format!(
            "delegation {:?} skipped: fingerprint {fp:?} already enqueued as delegation {:?}",
            d.id, winner.delegation_id
        );
        leg.state = LegState::Deduped;
        leg.dedup_of = Some(winner.delegation_id.clone());
        leg.updated_ms = self.now;
        delegations::put(self.tx, leg)?;
        self.job_event(parent, EventKind::DelegationDeduped, message, None)?;
        Ok(Some(winner.job_id.clone().unwrap_or_default()))
    }

    /// The leg's agent with its model and effort: a registered agent's, or an ephemeral
    /// worker's own.
    fn leg_agent(
        &self,
        parent: &Job,
        d: &Delegation,
    ) -> R<(String, Option<String>, Option<String>)> {
        Ok(match (&d.agent, &d.ephemeral) {
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
        })
    }

    /// The leg's prompt: its own text, then the upstream results, the coordinator's brief
    /// and a human's resume guidance where they apply.
    fn leg_prompt(
        &self,
        parent: &Job,
        d: &Delegation,
        legs: &[Leg],
        guidance: Option<&str>,
    ) -> R<String> {
        let mut prompt = d.prompt.trim().to_string();
        if self.cfg.inject_upstream_dep_context {
            prompt.push_str(&self.upstream(d, legs)?);
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
                &self.inline(),
                &mut remaining,
                &parent.id,
            ));
        }
        if let Some(g) = guidance.filter(|g| !g.trim().is_empty()) {
            prompt.push_str(&format!("\n\nHuman guidance on resume: {}", g.trim()));
        }
        Ok(prompt)
    }

    pub(super) fn upstream(&self, d: &Delegation, legs: &[Leg]) -> R<String> {
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
        Ok(prompts::upstream_block(&ups, &self.inline()))
    }

    /// How this home inlines artifact bodies: the configured cap (0: the built-in one) and
    /// the artifacts folder (`$GITMOOT_HOME/artifacts` spelled out when the config was not
    /// loaded from a home).
    pub(super) fn inline(&self) -> prompts::Inline {
        prompts::Inline {
            cap: match self.cfg.inline_artifact_max_bytes {
                0 => prompts::DEFAULT_BODY_CAP,
                n => n as usize,
            },
            artifact_root: self
                .cfg
                .artifact_root
                .clone()
                .unwrap_or_else(|| "$GITMOOT_HOME/artifacts".into()),
        }
    }
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
