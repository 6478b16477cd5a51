//! An agent as the fleet views show it (`agent list --live`, the Agents pane): what it is,
//! what it is doing, what it spent today and its last error.
//!
//! Owns the row's shape; reading it from the store is the library's `report::agents`.

use serde::Serialize;

use crate::policy::{AutonomyPolicy, RuntimeKind};

crate::named_enum!(
    /// What an agent is doing now.
    AgentState, "agent state", {
        // At least one of its jobs runs.
        Working => "working",
        // One of its jobs waits for a human (a question, a failure round, an interruption).
        Waiting => "waiting",
        Idle => "idle",
    }
);

/// One registered agent, live.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentLive {
    pub name: String,
    pub runtime: RuntimeKind,
    pub model: Option<String>,
    pub policy: AutonomyPolicy,
    pub state: AgentState,
    /// Its jobs running now.
    pub running: u32,
    /// Its jobs waiting for a human.
    pub waiting: u32,
    /// The newest activity summary of its running jobs, and that job.
    pub now: Option<String>,
    pub now_job: Option<String>,
    /// Mentions of it in chat nobody has read.
    pub unread: u32,
    /// Tokens (input plus output) and dollars of its jobs since 00:00 UTC, running ones
    /// counted as far as their streams have reported.
    pub tokens_today: u64,
    pub usd_today: f64,
    /// The error of its newest job that has one, and that job.
    pub last_error: Option<String>,
    pub last_error_job: Option<String>,
}
