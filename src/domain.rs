//! The library's face of the shared vocabulary: every state, kind, action, runtime,
//! capability, policy, verb and the delegation spec come from `gitmoot_types` (the one crate
//! the ui also imports) and are re-exported here so `crate::domain::X` keeps naming them.
//!
//! Owns only what is the library's own wording over those names (the session marker, the
//! policy guidance); a new name goes into `gitmoot_types`, never here.

pub use gitmoot_types::{
    Action, ActivityKind, AgentLive, AgentState, AutonomyPolicy, BulkVerb, Capability, Clash,
    ConflictHunk, Delegation, DiffFile, DiffLine, EphemeralSpec, EventKind, FailurePolicy,
    FileStatus, Hunk, JobKind, JobState, LandStrategy, LineOp, ResumeVerb, RunState, RuntimeKind,
    SearchSource, StallSignal, SynthesisRule, UnknownName, UsageBy, WorktreeState, places,
};

/// `dispatched_by` of every session job: the daemon neither runs nor recovers them.
pub const SESSION: &str = "session";

/// The guidance given whenever `implement` meets a policy that cannot write.
pub fn implement_policy_guidance(policy: AutonomyPolicy) -> String {
    format!(
        "the implement capability needs a write policy, but the policy is {policy}; \
         set --policy workspace-write (edits files) or --policy danger-full-access (edits and runs anything)"
    )
}

/// A bad spelling given on the command line or in a file is bad input (exit 2).
impl From<UnknownName> for crate::Invalid {
    fn from(e: UnknownName) -> Self {
        crate::Invalid(e.0)
    }
}
