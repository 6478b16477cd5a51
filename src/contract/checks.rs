//! Deterministic result checks: facts about an already-valid result that the engine may
//! warn about or block on (`result_checks` policy). They never reject a result at parse
//! time and never touch the store; the caller decides what a failure does.
//!
//! The evidence rule of the contract holds throughout: being `static_only` is never by
//! itself a failure. A static-only review is an honest verdict; only a claim of execution
//! must be backed by something that was run.

use super::decode::is_content_free;
use super::types::{Decision, Evidence, GitmootResult};
use crate::domain::Action;

/// One failed check: a stable id and a one-line explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    pub id: &'static str,
    pub explanation: String,
}

impl std::fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.id, self.explanation)
    }
}

impl CheckFailure {
    /// `N result check(s) failed: id (explanation); ...` — the event and block text.
    pub fn summarize(failures: &[CheckFailure]) -> String {
        let list: Vec<String> = failures.iter().map(ToString::to_string).collect();
        format!(
            "{} result check(s) failed: {}",
            failures.len(),
            list.join("; ")
        )
    }
}

pub(crate) const REVIEW_VERDICT_HAS_EVIDENCE: &str = "review-verdict-has-evidence";
pub(crate) const REVIEW_EXECUTED_CLAIM_IS_SUBSTANTIATED: &str =
    "review-executed-claim-is-substantiated";
pub(crate) const BLOCKED_BLOCKERS_ACTIONABLE: &str = "blocked-blockers-actionable";
pub(crate) const IMPLEMENT_CHANGES_LISTED: &str = "implement-changes-listed";
pub(crate) const IMPLEMENT_TESTS_LISTED: &str = "implement-tests-listed";

/// The two evidence checks of a review result.
///
/// - `review-verdict-has-evidence`: the verdict accounts for itself. A
///   `changes_requested` verdict must name at least one finding with content (what is to
///   change); an `approved` verdict is accounted for by its required summary, so a
///   static-only approval with an honest summary passes. Content-free findings (`{}`,
///   `{"name":""}`, blanks) do not count.
/// - `review-executed-claim-is-substantiated`: with `evidence: executed`, at least one
///   `tests_run` entry with content must name what was run. `static_only` always passes.
pub fn review_checks(result: &GitmootResult) -> Vec<CheckFailure> {
    let mut out = Vec::new();
    let findings = result
        .findings
        .iter()
        .filter(|f| finding_has_content(f))
        .count();
    let tests = contentful(&result.tests_run);
    if result.decision == Decision::ChangesRequested && findings == 0 {
        out.push(CheckFailure {
            id: REVIEW_VERDICT_HAS_EVIDENCE,
            explanation: "changes_requested names no finding with content".into(),
        });
    }
    if result.evidence == Evidence::Executed && tests == 0 {
        out.push(CheckFailure {
            id: REVIEW_EXECUTED_CLAIM_IS_SUBSTANTIATED,
            explanation: "evidence is executed but tests_run names nothing that was run".into(),
        });
    }
    out
}

/// Every check that applies to a result of a job with `action`.
///
/// Besides the review checks: a `blocked` result must list at least one actionable need,
/// and an `implemented` result of an implement job must list what changed and what it ran.
pub fn result_checks(action: Action, result: &GitmootResult) -> Vec<CheckFailure> {
    let mut out = Vec::new();
    if result.decision == Decision::Blocked && contentful(&result.needs) == 0 {
        out.push(CheckFailure {
            id: BLOCKED_BLOCKERS_ACTIONABLE,
            explanation: "blocked without a needs entry saying what would unblock it".into(),
        });
    }
    match action {
        Action::Review => out.extend(review_checks(result)),
        Action::Implement if result.decision == Decision::Implemented => {
            if contentful(&result.changes_made) == 0 {
                out.push(CheckFailure {
                    id: IMPLEMENT_CHANGES_LISTED,
                    explanation: "implemented but changes_made lists no change".into(),
                });
            }
            if contentful(&result.tests_run) == 0 {
                out.push(CheckFailure {
                    id: IMPLEMENT_TESTS_LISTED,
                    explanation: "implemented but tests_run lists no test".into(),
                });
            }
        }
        _ => {}
    }
    out
}

/// Entries that carry information; content-free ones are kept in the result but ignored.
fn contentful(entries: &[String]) -> usize {
    entries.iter().filter(|e| !is_content_free(e)).count()
}

fn finding_has_content(finding: &serde_json::Value) -> bool {
    match finding {
        serde_json::Value::String(s) => !is_content_free(s),
        other => !is_content_free(&other.to_string()),
    }
}
