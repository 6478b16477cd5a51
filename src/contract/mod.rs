//! The agent result contract: find, decode, validate and repair `gitmoot_result`.
//!
//! Pure code over text: no store, no processes. [`parse`] is the one entry point the
//! daemon calls on an agent's output; [`repair_prompt`] renders the single re-ask when it
//! fails; [`instructions`] is the contract text appended to every job prompt; the result
//! checks live in [`checks`]. Files: `locate` (candidate spans), `decode` (raw JSON
//! entries and narrative lists), `validate` (every field rule), `repair`, `instructions`,
//! `checks`.

pub mod checks;
pub mod decode;
mod instructions;
pub mod locate;
mod repair;
pub mod types;
mod validate;

use std::collections::HashMap;

use serde_json::value::RawValue;

pub use checks::{CheckFailure, result_checks, review_checks};
pub use instructions::instructions;
pub use repair::{REPAIR_OUTPUT_TRUNCATE_BYTES, repair_failed_reason, repair_prompt};
pub use types::{
    ChecksBlocked, Decision, Delegation, EphemeralSpec, Evidence, FailurePolicy, GitmootResult,
    HumanQuestion, Learning, LearningScope, Severity, SynthesisRule,
};

/// The error when no candidate in the output even carries the `gitmoot_result` key.
pub const MISSING: &str = "missing valid gitmoot_result JSON object";

/// Every reason an output was not accepted, one line each, in report order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct ContractErrors(pub Vec<String>);

impl ContractErrors {
    pub fn lines(&self) -> &[String] {
        &self.0
    }
}

impl From<ContractErrors> for crate::Invalid {
    fn from(e: ContractErrors) -> Self {
        crate::Invalid(e.to_string())
    }
}

/// Finds, decodes, normalises and validates the `gitmoot_result` in an agent's output.
///
/// Candidates are tried in [`locate::candidates`] order; the first whose JSON has a
/// `gitmoot_result` key and passes every rule wins. When none passes, the errors are those
/// of the first candidate that had the key (the agent's evident attempt), or [`MISSING`].
pub fn parse(raw: &str) -> Result<GitmootResult, ContractErrors> {
    let mut first_errors: Option<Vec<String>> = None;
    for span in locate::candidates(raw) {
        let Some(value) = envelope_value(&raw[span]) else {
            continue;
        };
        match validate::result(value) {
            Ok(result) => return Ok(result),
            Err(errors) => {
                first_errors.get_or_insert(errors);
            }
        }
    }
    Err(ContractErrors(
        first_errors.unwrap_or_else(|| vec![MISSING.to_owned()]),
    ))
}

/// The raw `gitmoot_result` value of a candidate that is a JSON object carrying that key.
fn envelope_value(text: &str) -> Option<&RawValue> {
    let envelope: HashMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    envelope.get("gitmoot_result").copied()
}

/// The normalised result as the JSON text the store keeps and `result check` prints.
pub fn to_json(result: &GitmootResult) -> String {
    #[derive(serde::Serialize)]
    struct Envelope<'a> {
        gitmoot_result: &'a GitmootResult,
    }
    // Serialising plain data with string keys cannot fail.
    serde_json::to_string_pretty(&Envelope {
        gitmoot_result: result,
    })
    .unwrap_or_default()
}
