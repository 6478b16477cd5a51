//! The typed, normalised `gitmoot_result`: what the parser produces, what the store keeps
//! (as JSON of exactly this shape) and what the engine reads back.
//!
//! Only data and small predicates live here; locating, decoding and validating belong to
//! the parser, so these types deserialise leniently from already-validated JSON.

use serde::{Deserialize, Serialize};

use crate::domain::{Action, AutonomyPolicy, Capability, RuntimeKind};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailurePolicy {
    #[default]
    BlockParent,
    Continue,
    Escalate,
    EscalateHuman,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SynthesisRule {
    #[default]
    Summary,
    Vote,
    Quorum,
    Verify,
}

/// An inline worker spec for a leg that names no registered agent. Leaf-only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EphemeralSpec {
    pub runtime: RuntimeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// Defaults to read-only.
    #[serde(default = "read_only")]
    pub autonomy_policy: AutonomyPolicy,
}

fn read_only() -> AutonomyPolicy {
    AutonomyPolicy::ReadOnly
}

/// One requested child job of a coordinator's batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delegation {
    pub id: String,
    /// A registered agent; exactly one of `agent` and `ephemeral` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<EphemeralSpec>,
    /// `ask` or `review`; `implement` is refused by validation.
    pub action: Action,
    pub prompt: String,
    #[serde(default)]
    pub deps: Vec<String>,
    #[serde(default)]
    pub failure_policy: FailurePolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis_rule: Option<SynthesisRule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    /// Milliseconds; validated positive. Agents write `timeout` as a duration string
    /// ("10m"); the parser also accepts this stored form so printed results re-parse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<i64>,
    #[serde(default)]
    pub retry: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

impl Delegation {
    /// A leg for a registered agent with every optional field at its default; callers
    /// that build batches in code (benchmarks, fixtures) set what they need on top.
    pub fn to_agent(
        id: impl Into<String>,
        agent: impl Into<String>,
        action: Action,
        prompt: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            agent: Some(agent.into()),
            ephemeral: None,
            action,
            prompt: prompt.into(),
            deps: Vec::new(),
            failure_policy: FailurePolicy::default(),
            synthesis_rule: None,
            quorum: None,
            timeout_ms: None,
            retry: 0,
            worktree: None,
            artifacts: Vec::new(),
            fingerprint: None,
            model: None,
            effort: None,
            phase: None,
        }
    }
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
