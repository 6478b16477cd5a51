//! The one vocabulary every crate of the workspace speaks: job and run states, job kinds,
//! actions, runtimes, capabilities, autonomy policies, the human verbs, the event kinds, the chat
//! names, the delegation spec, a write job's diff and its merge forecasts and the tree row the control room draws.
//!
//! Owns names, their spellings and their parsing, plus plain data over them. Depends on
//! serde only: it must never name a database, an async runtime or a terminal, so the pure
//! ui crate and the library can share it (SQL conversions live in the library's store).

mod activity;
mod agent;
mod chat;
mod delegation;
mod diff;
mod event_kind;
mod fleet;
mod forecast;
mod job;
mod names;
mod policy;
mod stall;
mod tree;

pub use activity::ActivityKind;
pub use agent::{AgentLive, AgentState};
pub use chat::{AuthorKind, LinkPurpose, MessageKind, ThreadState};
pub use delegation::{Delegation, EphemeralSpec, FailurePolicy, SynthesisRule};
pub use diff::{DiffFile, DiffLine, FileStatus, Hunk, LandStrategy, LineOp};
pub use event_kind::EventKind;
pub use fleet::{SearchSource, UsageBy};
pub use forecast::{Clash, ConflictHunk, places};
pub use job::{Action, BulkVerb, JobKind, JobState, ResumeVerb, RunState, WorktreeState};
pub use names::UnknownName;
pub use policy::{AutonomyPolicy, Capability, RuntimeKind};
pub use stall::StallSignal;
pub use tree::{JobNode, Rollup};

#[doc(hidden)]
pub use serde as __serde;
