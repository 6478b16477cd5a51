//! A coordinator's delegation spec: one requested child job with its failure policy and
//! synthesis rule. Plain data shared by the contract that parses it and the store that keeps
//! it; validation lives in the library's contract, never here.

use serde::{Deserialize, Serialize};

use crate::{Action, AutonomyPolicy, Capability, RuntimeKind};

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
