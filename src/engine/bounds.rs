//! Loop signals and the carry-forward state between generations: the structural set hash,
//! the result digest of verifiable side effects, and the window/streak counters.
//!
//! Owns the arithmetic only; `dispatch` and `batch` decide what a trip does.

use serde::{Deserialize, Serialize};

use crate::contract::{Delegation, GitmootResult};
use crate::ids::sha256_hex;

/// How many recent delegation-set hashes a coordinator remembers.
pub const HASH_WINDOW: usize = 3;

/// State one generation hands the next through its continuation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Carry {
    #[serde(default)]
    pub hashes: Vec<String>,
    #[serde(default)]
    pub repeat_count: u32,
    #[serde(default)]
    pub streak: u32,
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(default)]
    pub verify_attempt: u32,
    /// Set when the batch must end in a finalize (abort, TTL) once nothing is in flight.
    #[serde(default)]
    pub finalize_reason: Option<String>,
}

impl Carry {
    pub fn from_value(v: Option<&serde_json::Value>) -> Self {
        v.and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    /// The window with `hash` appended, keeping the last `HASH_WINDOW`.
    pub fn window_with(&self, hash: &str) -> Vec<String> {
        let mut w = self.hashes.clone();
        w.push(hash.to_string());
        let skip = w.len().saturating_sub(HASH_WINDOW);
        w.split_off(skip)
    }
}

/// Order-independent signature of a delegation set; phase, model, timeout are excluded.
pub fn set_hash(set: &[Delegation]) -> String {
    let mut sorted: Vec<&Delegation> = set.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let records: Vec<String> = sorted
        .iter()
        .map(|d| {
            let eph = d
                .ephemeral
                .as_ref()
                .map(|e| {
                    [
                        e.runtime.as_str(),
                        e.model.as_deref().unwrap_or(""),
                        e.effort.as_deref().unwrap_or(""),
                        e.template.as_deref().unwrap_or(""),
                        e.role.as_deref().unwrap_or(""),
                    ]
                    .join("|")
                })
                .unwrap_or_default();
            let mut deps: Vec<&str> = d.deps.iter().map(|s| s.trim()).collect();
            deps.sort_unstable();
            [
                d.id.as_str(),
                d.agent.as_deref().unwrap_or(""),
                &eph,
                d.action.as_str(),
                d.prompt.trim(),
                &deps.join(","),
            ]
            .join("\x1f")
        })
        .collect();
    sha256_hex(records.join("\x1e").as_bytes())
}

/// Digest of a generation's verifiable side effects; summaries and ids are excluded.
pub fn progress_digest<'a>(results: impl Iterator<Item = Option<&'a GitmootResult>>) -> String {
    let mut tuples: Vec<String> = results
        .map(|r| match r {
            None => ["", "", "", "0", "", ""].join("\x1f"),
            Some(r) => {
                let mut changes = r.changes_made.clone();
                changes.sort();
                let mut tests = r.tests_run.clone();
                tests.sort();
                [
                    r.decision.as_str(),
                    &changes.join("\x1d"),
                    &tests.join("\x1d"),
                    "0",
                    "",
                    r.artifact_body.as_deref().unwrap_or(""),
                ]
                .join("\x1f")
            }
        })
        .collect();
    tuples.sort();
    sha256_hex(tuples.join("\x1e").as_bytes())
}
