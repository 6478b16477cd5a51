//! Loop signals and the carry-forward state between generations: the structural set hash,
//! the result digest of verifiable side effects, and the window/streak counters.
//!
//! Owns the arithmetic only; `dispatch` and `batch` decide what a trip does.

use serde::{Deserialize, Serialize};

use crate::clock::Millis;
use crate::config::OrchestrateConfig;
use crate::contract::{Delegation, GitmootResult};
use crate::ids::sha256_hex;
use crate::store::runs::Run;

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

/// Why a tree must stop dispatching (operator kill or a sweep bound), if it must.
pub fn stop_reason(run: &Run) -> Option<String> {
    if run.killed {
        Some("delegation tree killed by operator".into())
    } else {
        run.stop_reason.clone()
    }
}

/// Milliseconds the tree has been active, paused time excluded.
pub fn active_ms(run: &Run, now: Millis) -> i64 {
    let paused_now = run.paused_since_ms.map(|p| now - p).unwrap_or(0);
    now - run.created_ms - run.paused_ms - paused_now
}

/// Non-progress rounds tolerated before a tree stops; 0 in the config means the default, 2.
pub(super) fn streak_threshold(cfg: &OrchestrateConfig) -> u32 {
    if cfg.max_delegation_non_progress_streak == 0 {
        2
    } else {
        cfg.max_delegation_non_progress_streak
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Action;

    fn d(id: &str, prompt: &str) -> Delegation {
        serde_json::from_value(serde_json::json!({
            "id": id, "agent": "rev", "action": "review", "prompt": prompt
        }))
        .unwrap()
    }

    #[test]
    fn set_hash_ignores_order_and_phase_but_not_prompt_or_action() {
        let a = vec![d("a", "x"), d("b", "y")];
        let mut b = vec![d("b", "y "), d("a", "x")];
        b[0].phase = Some("plan".into());
        b[0].model = Some("opus".into());
        assert_eq!(set_hash(&a), set_hash(&b));
        b[1].prompt = "z".into();
        assert_ne!(set_hash(&a), set_hash(&b));
        let mut c = a.clone();
        c[0].action = Action::Ask;
        assert_ne!(set_hash(&a), set_hash(&c));
    }

    #[test]
    fn window_keeps_the_last_three() {
        let c = Carry {
            hashes: vec!["1".into(), "2".into(), "3".into()],
            ..Carry::default()
        };
        assert_eq!(c.window_with("4"), ["2", "3", "4"]);
    }

    #[test]
    fn digest_ignores_summaries_and_order() {
        let r = |s: &str, changes: &[&str]| {
            let mut r: GitmootResult =
                serde_json::from_value(serde_json::json!({"decision": "approved", "summary": s}))
                    .unwrap();
            r.changes_made = changes.iter().map(|c| c.to_string()).collect();
            r
        };
        let (a, b) = (r("one", &["x"]), r("two", &[]));
        let (a2, b2) = (r("other words", &["x"]), r("more", &[]));
        assert_eq!(
            progress_digest([Some(&a), Some(&b)].into_iter()),
            progress_digest([Some(&b2), Some(&a2)].into_iter())
        );
        let c = r("one", &["y"]);
        assert_ne!(
            progress_digest([Some(&a)].into_iter()),
            progress_digest([Some(&c)].into_iter())
        );
    }
}
