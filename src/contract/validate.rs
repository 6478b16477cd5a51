//! Turning one decoded `gitmoot_result` object into a typed, normalised [`GitmootResult`],
//! collecting every error instead of stopping at the first.
//!
//! Owns the field rules of the contract: the top-level whitelist, decisions, evidence,
//! checks_blocked, severity, the narrative and structural lists, human_questions and the
//! delegation batch (per-entry fields, then the dependency graph, quorum bounds and the
//! artifacts/artifact_body coupling). It does not locate candidates or render prompts.
//!
//! Unknown keys inside a delegation, an ephemeral spec or a question are ignored (only the
//! top level is whitelisted), as in the original contract: a misnamed target such as `to`
//! then surfaces as the missing-target error, which names the fix.

mod delegation;
mod graph;
mod lists;

use std::collections::HashMap;

use serde_json::Value;
use serde_json::value::RawValue;

use super::decode::{self, Entries};
use super::types::{ChecksBlocked, Decision, Evidence, GitmootResult, Severity};

/// The top-level fields a `gitmoot_result` may carry.
pub(crate) const FIELDS: &[&str] = &[
    "decision",
    "summary",
    "findings",
    "changes_made",
    "tests_run",
    "needs",
    "delegations",
    "artifact_body",
    "human_questions",
    "evidence",
    "checks_blocked",
    "severity",
    "learnings",
];

/// Validates the value of `gitmoot_result`; `Err` holds every error line, in report order.
pub fn result(raw: &RawValue) -> Result<GitmootResult, Vec<String>> {
    let Some(entries) = Entries::of(raw) else {
        let why = decode::defect(raw.get(), 0)
            .unwrap_or_else(|| format!("must be a JSON object (got {})", decode::kind(raw)));
        return Err(vec![format!("gitmoot_result {why}")]);
    };
    let mut v = Validator::default();
    let mut fields: HashMap<&str, &RawValue> = HashMap::new();
    let mut undecodable = false;
    for (key, value) in &entries.0 {
        if !FIELDS.contains(&key.as_str()) {
            v.err(unsupported_field(key));
        } else if let Some(why) = decode::defect(value.get(), 1) {
            // The field cannot be read at all, so its rules (and those that depend on it)
            // would only restate that as a wrong type.
            v.err(format!("gitmoot_result {key} {why}"));
            undecodable = true;
        } else {
            // A repeated field keeps its last value, as the original's JSON decoder does:
            // rejecting it would lose a whole result over a harmless repetition.
            fields.insert(key.as_str(), value);
        }
    }
    if undecodable {
        return Err(v.errors);
    }
    let get = |name: &str| {
        fields
            .get(name)
            .copied()
            .filter(|r| decode::kind(r) != "null")
    };

    let decision = v.decision(get("decision"));
    let summary = v.summary(get("summary"));
    let evidence = v
        .named::<Evidence>("evidence", get("evidence"), "executed, static_only")
        .unwrap_or_default();
    let checks_blocked = v.named::<ChecksBlocked>(
        "checks_blocked",
        get("checks_blocked"),
        "toolchain, dependencies, sandbox, network, service, other",
    );
    let severity = v.named::<Severity>("severity", get("severity"), "P0, P1, P2, P3");
    if decision == Some(Decision::ChangesRequested)
        && severity.is_none()
        && get("severity").is_none()
    {
        v.err("gitmoot_result decision changes_requested requires severity P0, P1, P2 or P3 (the highest-severity finding)");
    }
    let findings = v.findings(get("findings"));
    let changes_made = v.list("changes_made", get("changes_made"));
    let tests_run = v.list("tests_run", get("tests_run"));
    let needs = v.list("needs", get("needs"));
    let artifact_body = v.artifact_body(get("artifact_body"));
    let delegation_values = v.array_of("delegations", get("delegations"));
    if decision == Some(Decision::Skipped) && !delegation_values.is_empty() {
        v.err("gitmoot_result decision skipped cannot be used with delegations");
    }
    let human_questions = v.human_questions(get("human_questions"));
    let learnings = v.learnings(get("learnings"));
    let delegations = v.delegations(&delegation_values, artifact_body.is_some());

    match decision {
        Some(decision) if v.errors.is_empty() => Ok(GitmootResult {
            decision,
            summary,
            findings,
            changes_made,
            tests_run,
            needs,
            delegations,
            artifact_body,
            human_questions,
            evidence,
            checks_blocked,
            severity,
            learnings,
        }),
        _ => Err(v.errors),
    }
}

fn unsupported_field(key: &str) -> String {
    if key == "next_agents" {
        format!(
            "unsupported gitmoot_result field {key:?}: delegations replaced it; \
             list follow-up work as delegations[] entries with id, agent, action and prompt"
        )
    } else {
        format!(
            "unsupported gitmoot_result field {key:?} (allowed: {})",
            FIELDS.join(", ")
        )
    }
}

/// A JSON value's type, named as errors name it.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A present, non-null string value; `Err(kind)` for any other type.
fn opt_str<'v>(
    obj: &'v serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<&'v str>, &'static str> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(kind_of(other)),
    }
}

#[derive(Default)]
struct Validator {
    errors: Vec<String>,
}

impl Validator {
    fn err(&mut self, msg: impl Into<String>) {
        self.errors.push(msg.into());
    }

    /// `field` of `obj` as a string that is not blank, or `None` once the entry at `at` is
    /// told the field is missing or not a string.
    fn required_str<'v>(
        &mut self,
        at: &str,
        obj: &'v serde_json::Map<String, Value>,
        field: &str,
    ) -> Option<&'v str> {
        match opt_str(obj, field) {
            Ok(Some(s)) if !s.trim().is_empty() => Some(s),
            Ok(_) => {
                self.err(format!("{at} {field} is required"));
                None
            }
            Err(kind) => {
                self.err(format!("{at} {field} must be a string (got {kind})"));
                None
            }
        }
    }

    fn string(&mut self, field: &str, raw: &RawValue) -> Option<String> {
        match serde_json::from_str::<String>(raw.get()) {
            Ok(s) => Some(s),
            Err(_) => {
                self.err(format!(
                    "gitmoot_result {field} must be a string (got {})",
                    decode::kind(raw)
                ));
                None
            }
        }
    }

    fn decision(&mut self, raw: Option<&RawValue>) -> Option<Decision> {
        let Some(raw) = raw else {
            self.err("gitmoot_result decision is required");
            return None;
        };
        let text = self.string("decision", raw)?;
        let parsed = serde_json::from_value(Value::String(text.clone())).ok();
        if parsed.is_none() {
            self.err(format!(
                "unsupported gitmoot_result decision {text:?} (expected one of approved, changes_requested, blocked, implemented, failed, skipped)"
            ));
        }
        parsed
    }

    fn summary(&mut self, raw: Option<&RawValue>) -> String {
        let text = match raw {
            Some(raw) => match self.string("summary", raw) {
                Some(text) => text,
                // The type error is already reported.
                None => return String::new(),
            },
            None => String::new(),
        };
        if text.trim().is_empty() {
            self.err("gitmoot_result summary is required");
        }
        text
    }

    /// One of a closed set of names, rejected outright when unrecognised.
    fn named<T: serde::de::DeserializeOwned>(
        &mut self,
        field: &str,
        raw: Option<&RawValue>,
        expected: &str,
    ) -> Option<T> {
        let text = self.string(field, raw?)?;
        let parsed = serde_json::from_value(Value::String(text.clone())).ok();
        if parsed.is_none() {
            self.err(format!(
                "unsupported gitmoot_result {field} {text:?} (expected one of {expected})"
            ));
        }
        parsed
    }

    fn findings(&mut self, raw: Option<&RawValue>) -> Vec<Value> {
        self.array_of("findings", raw)
    }

    /// A top-level array of arbitrary elements; `null`/absent is empty.
    fn array_of(&mut self, field: &str, raw: Option<&RawValue>) -> Vec<Value> {
        let Some(raw) = raw else {
            return Vec::new();
        };
        match serde_json::from_str::<Vec<Value>>(raw.get()) {
            Ok(items) => items,
            Err(_) => {
                self.err(format!(
                    "gitmoot_result {field} must be an array (got {})",
                    decode::kind(raw)
                ));
                Vec::new()
            }
        }
    }

    fn list(&mut self, field: &str, raw: Option<&RawValue>) -> Vec<String> {
        match raw.map(|r| decode::string_list(field, r)) {
            None => Vec::new(),
            Some(Ok(items)) => items,
            Some(Err(errors)) => {
                self.errors.extend(errors);
                Vec::new()
            }
        }
    }

    fn artifact_body(&mut self, raw: Option<&RawValue>) -> Option<String> {
        self.string("artifact_body", raw?)
            .filter(|s| !s.trim().is_empty())
    }
}
