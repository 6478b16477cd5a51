//! What the engine makes of a valid result beyond its decision: the deterministic result
//! checks under `[orchestrate].result_checks` (warn: an event and a mark; block: the job
//! fails with their reason), the `blocking_severity` reading of a `changes_requested`
//! review (approved-with-notes), and the marks every viewer shows for a settled job.
//!
//! Pure over the caller's transaction; the checks themselves live in `contract::checks`,
//! the rows in `store::payloads`. Never spawns anything.

use crate::store::Tx;
use serde_json::{Value, json};

use super::EngineError;
use super::ctx::Ctx;
use crate::config::{OrchestrateConfig, ResultChecks};
use crate::contract::{CheckFailure, Decision, GitmootResult, result_checks};
use crate::domain::{Action, EventKind};
use crate::store::jobs::Job;
use crate::store::payloads;

/// The `resolution` of a `changes_requested` review below the blocking threshold.
pub const APPROVED_WITH_NOTES: &str = "approved_with_notes";

/// The checks `result` fails under the policy (none when checks are off).
pub fn failures(
    cfg: &OrchestrateConfig,
    action: Action,
    result: &GitmootResult,
) -> Vec<CheckFailure> {
    if cfg.result_checks == ResultChecks::Off {
        return Vec::new();
    }
    result_checks(action, result)
}

/// The failures as the one-line errors a repair prompt lists.
pub fn repair_lines(failures: &[CheckFailure]) -> Vec<String> {
    failures
        .iter()
        .map(|f| format!("result check {} failed: {}", f.id, f.explanation))
        .collect()
}

/// Whether a `changes_requested` result is milder than `blocking_severity`, so the engine
/// reads it as approved-with-notes (the stored result keeps its decision and findings).
pub fn approved_with_notes(cfg: &OrchestrateConfig, r: &GitmootResult) -> bool {
    r.decision == Decision::ChangesRequested
        && r.severity.is_some_and(|s| s > cfg.blocking_severity)
}

/// Whether the engine counts `r` as approving (vote, quorum, verify).
pub fn approving(cfg: &OrchestrateConfig, r: &GitmootResult) -> bool {
    r.decision.approves() || approved_with_notes(cfg, r)
}

impl Ctx<'_, '_> {
    /// Records what the engine made of a freshly parsed result on `job`: failed checks
    /// (event and payload) and an approved-with-notes resolution.
    pub(crate) fn record_result_marks(
        &self,
        job: &Job,
        r: &GitmootResult,
        failed: &[CheckFailure],
    ) -> Result<(), EngineError> {
        if !failed.is_empty() {
            let rows: Vec<Value> = failed
                .iter()
                .map(|f| json!({"id": f.id, "explanation": f.explanation}))
                .collect();
            payloads::set_checks(self.tx, &job.id, &Value::Array(rows.clone()), self.now)?;
            self.job_event(
                job,
                EventKind::ResultChecksFailed,
                CheckFailure::summarize(failed),
                Some(json!({"policy": self.cfg.result_checks, "checks": rows})),
            )?;
        }
        if approved_with_notes(self.cfg, r) {
            payloads::set_resolution(self.tx, &job.id, APPROVED_WITH_NOTES, self.now)?;
            let sev = r.severity.map(|s| format!("{s:?}")).unwrap_or_default();
            self.job_event(
                job,
                EventKind::ReviewApprovedWithNotes,
                format!(
                    "changes_requested at {sev} is below the blocking severity {:?}; resolved as approved-with-notes",
                    self.cfg.blocking_severity
                ),
                None,
            )?;
        }
        Ok(())
    }
}

/// The lines every viewer (`job show`, the control room's detail drawer) shows under a
/// job's result: learnings, failed checks, the resolution and the observation grades.
pub fn marks(conn: &Tx<'_>, job: &Job) -> Result<Vec<String>, EngineError> {
    let mut out = Vec::new();
    let result: Option<GitmootResult> = super::ctx::parse_result(job.result.as_ref());
    for l in result.iter().flat_map(|r| &r.learnings) {
        let scope = match l.scope {
            crate::contract::LearningScope::Repo => "repo",
            crate::contract::LearningScope::General => "general",
        };
        out.push(format!("learning {} ({scope}): {}", l.key, l.content));
    }
    if job.dispatched_by == crate::domain::SESSION {
        out.push("session review: graded reported, non_authoritative".into());
    }
    let p = payloads::get(conn, &job.id)?;
    for c in p.result_checks.iter().flat_map(|v| v.as_array()).flatten() {
        out.push(format!(
            "⚠ result check {}: {}",
            c["id"].as_str().unwrap_or(""),
            c["explanation"].as_str().unwrap_or("")
        ));
    }
    if p.resolution.as_deref() == Some(APPROVED_WITH_NOTES) {
        out.push("resolution: approved-with-notes (below the blocking severity)".into());
    }
    if let Some(o) = &p.result_observation {
        out.push(super::observe::summary_line(o));
    }
    if let Some(w) = crate::store::worktrees::get(conn, &job.id)? {
        out.extend(worktree_mark(&w));
    }
    Ok(out)
}

/// A write job's worktree as one line: where its work stands.
fn worktree_mark(w: &crate::store::worktrees::WriteTree) -> Option<String> {
    use crate::domain::WorktreeState;
    let short = |c: &Option<String>| {
        c.as_deref()
            .map(|c| c[..c.len().min(12)].to_string())
            .unwrap_or_default()
    };
    let base = w.base_ref.as_deref().unwrap_or("?");
    let rounds = match w.review_rounds {
        0 => String::new(),
        n => format!(", {n} review round(s)"),
    };
    match w.state {
        WorktreeState::Requested => None,
        WorktreeState::Open => Some(format!(
            "worktree: branch {} from {base} ({}){rounds}, not landed",
            w.branch.as_deref().unwrap_or("?"),
            short(&w.base_commit)
        )),
        WorktreeState::Landed => Some(format!(
            "⇡ landed on {base} as {}{rounds}",
            short(&w.landed_commit)
        )),
        WorktreeState::Discarded => Some(format!("✗ work discarded{rounds}")),
    }
}
