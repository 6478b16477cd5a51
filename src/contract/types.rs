//! The typed, normalised `gitmoot_result`: what the parser produces, what the store keeps
//! (as JSON of exactly this shape) and what the engine reads back.
//!
//! Only data and small predicates live here; locating, decoding and validating belong to
//! the parser, so these types deserialise leniently from already-validated JSON.

use serde::{Deserialize, Serialize};

// The delegation spec lives below storage so the store can keep it without knowing the
// contract; it stays nameable here as part of the result's shape.
pub use crate::domain::{Delegation, EphemeralSpec, FailurePolicy, SynthesisRule};

/// The six outcomes an agent may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approved,
    ChangesRequested,
    Blocked,
    Implemented,
    Failed,
    Skipped,
}

impl Decision {
    /// `approved` and `implemented` approve; everything else does not.
    pub fn approves(self) -> bool {
        matches!(self, Decision::Approved | Decision::Implemented)
    }

    /// The job state this decision settles a job into.
    pub fn job_state(self) -> crate::domain::JobState {
        use crate::domain::JobState;
        match self {
            Decision::Blocked => JobState::Blocked,
            Decision::Failed => JobState::Failed,
            _ => JobState::Succeeded,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::ChangesRequested => "changes_requested",
            Decision::Blocked => "blocked",
            Decision::Implemented => "implemented",
            Decision::Failed => "failed",
            Decision::Skipped => "skipped",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    Executed,
    #[default]
    StaticOnly,
}

/// Why a review could not run some checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChecksBlocked {
    Toolchain,
    Dependencies,
    Sandbox,
    Network,
    Service,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Severity {
    P0,
    P1,
    P2,
    P3,
}

/// An ask-gate question for a human.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanQuestion {
    pub id: String,
    pub prompt: String,
    #[serde(default)]
    pub choices: Vec<String>,
}

/// Where a learning applies: this repository (the default) or anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LearningScope {
    #[default]
    Repo,
    General,
}

/// Something the agent learned that it wants remembered, as the original contract's
/// `learnings[]` carries it. Stored with the result and shown; never acted upon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learning {
    pub key: String,
    #[serde(default)]
    pub scope: LearningScope,
    pub content: String,
}

/// A normalised `gitmoot_result`.
///
/// String-list entries that were objects are stored as compact canonical JSON text
/// (top-level keys sorted); `null` entries are stored as empty strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GitmootResult {
    pub decision: Decision,
    #[serde(default)]
    pub summary: String,
    /// Strings or objects, kept as JSON values.
    #[serde(default)]
    pub findings: Vec<serde_json::Value>,
    #[serde(default)]
    pub changes_made: Vec<String>,
    #[serde(default)]
    pub tests_run: Vec<String>,
    #[serde(default)]
    pub needs: Vec<String>,
    #[serde(default)]
    pub delegations: Vec<Delegation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_body: Option<String>,
    #[serde(default)]
    pub human_questions: Vec<HumanQuestion>,
    #[serde(default)]
    pub evidence: Evidence,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks_blocked: Option<ChecksBlocked>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learnings: Vec<Learning>,
}

impl GitmootResult {
    /// A result with this decision and summary and every list and option empty, for the
    /// code that hands the engine a result of its own (the benches) to start from.
    pub fn new(decision: Decision, summary: impl Into<String>) -> Self {
        Self {
            decision,
            summary: summary.into(),
            findings: vec![],
            changes_made: vec![],
            tests_run: vec![],
            needs: vec![],
            delegations: vec![],
            artifact_body: None,
            human_questions: vec![],
            evidence: Evidence::default(),
            checks_blocked: None,
            severity: None,
            learnings: vec![],
        }
    }
}
