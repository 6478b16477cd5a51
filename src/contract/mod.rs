//! The agent result contract: find, decode, validate and repair `gitmoot_result`.
//!
//! Pure code over text: no store, no processes.

pub mod types;

pub use types::{
    ChecksBlocked, Decision, Delegation, EphemeralSpec, Evidence, FailurePolicy, GitmootResult,
    HumanQuestion, Severity, SynthesisRule,
};
