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

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use serde_json::value::RawValue;

use super::decode::{self, Entries};
use super::types::{
    ChecksBlocked, Decision, Delegation, EphemeralSpec, Evidence, FailurePolicy, GitmootResult,
    HumanQuestion, Learning, LearningScope, Severity, SynthesisRule,
};
use crate::domain::{Action, AutonomyPolicy, Capability, RuntimeKind};

/// The top-level fields a `gitmoot_result` may carry.
pub const FIELDS: &[&str] = &[
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
        return Err(vec![format!(
            "gitmoot_result must be a JSON object (got {})",
            decode::kind(raw)
        )]);
    };
    let mut v = Validator::default();
    let mut fields: HashMap<&str, &RawValue> = HashMap::new();
    for (key, value) in &entries.0 {
        if !FIELDS.contains(&key.as_str()) {
            v.err(unsupported_field(key));
        } else {
            // A repeated field keeps its last value, as the original's JSON decoder does:
            // rejecting it would lose a whole result over a harmless repetition.
            fields.insert(key.as_str(), value);
        }
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

    fn human_questions(&mut self, raw: Option<&RawValue>) -> Vec<HumanQuestion> {
        let items = self.array_of("human_questions", raw);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Value::Object(obj) = item else {
                self.err(format!(
                    "human_questions[{i}] must be an object with id and prompt (got {})",
                    kind_of(item)
                ));
                continue;
            };
            let id = match opt_str(obj, "id") {
                Ok(Some(id)) if !id.trim().is_empty() => id.trim().to_owned(),
                Ok(_) => {
                    self.err(format!("human_questions[{i}] id is required"));
                    continue;
                }
                Err(kind) => {
                    self.err(format!(
                        "human_questions[{i}] id must be a string (got {kind})"
                    ));
                    continue;
                }
            };
            if !seen.insert(id.clone()) {
                self.err(format!("human_questions[{i}] id {id:?} is not unique"));
            }
            let prompt = match opt_str(obj, "prompt") {
                Ok(Some(p)) if !p.trim().is_empty() => p.to_owned(),
                Ok(_) => {
                    self.err(format!(
                        "human_questions[{i}] (id {id:?}) prompt is required"
                    ));
                    String::new()
                }
                Err(kind) => {
                    self.err(format!(
                        "human_questions[{i}] (id {id:?}) prompt must be a string (got {kind})"
                    ));
                    String::new()
                }
            };
            let prefix = format!("human_questions[{i}] (id {id:?})");
            let choices = self.strict_list(&prefix, "choices", obj.get("choices"));
            out.push(HumanQuestion {
                id,
                prompt,
                choices,
            });
        }
        out
    }

    /// `learnings[]`: `{key, scope?, content}`, scope `repo` (default) or `general`.
    fn learnings(&mut self, raw: Option<&RawValue>) -> Vec<Learning> {
        let items = self.array_of("learnings", raw);
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Value::Object(obj) = item else {
                self.err(format!(
                    "learnings[{i}] must be an object with key and content (got {})",
                    kind_of(item)
                ));
                continue;
            };
            let key = match opt_str(obj, "key") {
                Ok(Some(k)) if !k.trim().is_empty() => k.trim().to_owned(),
                Ok(_) => {
                    self.err(format!("learnings[{i}] key is required"));
                    continue;
                }
                Err(kind) => {
                    self.err(format!("learnings[{i}] key must be a string (got {kind})"));
                    continue;
                }
            };
            let content = match opt_str(obj, "content") {
                Ok(Some(c)) if !c.trim().is_empty() => Some(c.to_owned()),
                Ok(_) => {
                    self.err(format!("learnings[{i}] (key {key:?}) content is required"));
                    None
                }
                Err(kind) => {
                    self.err(format!(
                        "learnings[{i}] (key {key:?}) content must be a string (got {kind})"
                    ));
                    None
                }
            };
            let scope = match opt_str(obj, "scope") {
                Ok(None) => Some(LearningScope::Repo),
                Ok(Some(s)) if s.trim().is_empty() => Some(LearningScope::Repo),
                Ok(Some(s)) => {
                    let parsed =
                        serde_json::from_value(Value::String(s.trim().to_ascii_lowercase())).ok();
                    if parsed.is_none() {
                        self.err(format!(
                            "learnings[{i}] (key {key:?}) scope {s:?} is invalid; expected repo or general"
                        ));
                    }
                    parsed
                }
                Err(kind) => {
                    self.err(format!(
                        "learnings[{i}] (key {key:?}) scope must be a string (got {kind})"
                    ));
                    None
                }
            };
            if let (Some(content), Some(scope)) = (content, scope) {
                out.push(Learning {
                    key,
                    scope,
                    content,
                });
            }
        }
        out
    }

    /// A structural list: identifiers the engine consumes, so strings only.
    fn strict_list(&mut self, prefix: &str, field: &str, value: Option<&Value>) -> Vec<String> {
        match value {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for (k, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        other => self.err(format!(
                            "{prefix}: {field}[{k}] must be a string (got {})",
                            kind_of(other)
                        )),
                    }
                }
                out
            }
            Some(other) => {
                self.err(format!(
                    "{prefix}: {field} must be an array of strings (got {})",
                    kind_of(other)
                ));
                Vec::new()
            }
        }
    }

    fn delegations(&mut self, items: &[Value], has_artifact_body: bool) -> Vec<Delegation> {
        let parsed: Vec<Option<Delegation>> = items
            .iter()
            .enumerate()
            .map(|(i, item)| self.delegation(i, item))
            .collect();
        let ids: Vec<Option<&str>> = items
            .iter()
            .map(|item| {
                item.get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.trim().is_empty())
            })
            .collect();
        // The graph is judged on every entry's deps, even entries with field errors, so
        // one repair round can fix everything at once.
        let deps: Vec<Vec<String>> = items.iter().map(raw_deps).collect();
        self.graph(&ids, &deps);
        // Batch-wide rules read the raw entries too: an entry with a field error still
        // counts, so every error reaches the one repair prompt together.
        self.quorum_bound(items);
        let wants_artifacts = items.iter().any(|item| {
            item.get("artifacts")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
        });
        if wants_artifacts && !has_artifact_body {
            self.err("artifact_body is required when delegations request artifacts");
        }
        parsed.into_iter().flatten().collect()
    }

    fn delegation(&mut self, i: usize, item: &Value) -> Option<Delegation> {
        let Value::Object(obj) = item else {
            self.err(format!(
                "delegations[{i}] must be an object (got {})",
                kind_of(item)
            ));
            return None;
        };
        let before = self.errors.len();
        let raw_id = obj.get("id").and_then(Value::as_str).unwrap_or("");
        let shown = if raw_id.trim().is_empty() {
            "<missing>".to_owned()
        } else {
            raw_id.to_owned()
        };
        let field = format!("delegations[{i}] (id {shown:?})");
        let who = if raw_id.trim().is_empty() {
            format!("delegations[{i}]")
        } else {
            format!("delegation {raw_id:?}")
        };

        let id = match opt_str(obj, "id") {
            Ok(Some(id)) if !id.trim().is_empty() => {
                if id.trim() != id {
                    self.err(format!(
                        "{field}: id must not have leading or trailing whitespace"
                    ));
                }
                id.to_owned()
            }
            Ok(_) => {
                self.err(format!("{field}: id is required"));
                String::new()
            }
            Err(kind) => {
                self.err(format!("{field}: id must be a string (got {kind})"));
                String::new()
            }
        };
        let action = match opt_str(obj, "action") {
            Ok(Some(a)) if !a.trim().is_empty() => {
                if a.trim() != a {
                    self.err(format!(
                        "{field}: action must not have leading or trailing whitespace"
                    ));
                    None
                } else {
                    match a.parse::<Action>() {
                        Ok(Action::Implement) => {
                            self.err(format!(
                                "{field}: action \"implement\" is refused: delegation legs may only ask or review"
                            ));
                            None
                        }
                        Ok(action) => Some(action),
                        Err(_) => {
                            self.err(format!("{field}: action {a:?} must be one of ask, review"));
                            None
                        }
                    }
                }
            }
            Ok(_) => {
                self.err(format!("{field}: action is required"));
                None
            }
            Err(kind) => {
                self.err(format!("{field}: action must be a string (got {kind})"));
                None
            }
        };
        let prompt = match opt_str(obj, "prompt") {
            Ok(Some(p)) if !p.trim().is_empty() => p.trim().to_owned(),
            Ok(_) => {
                self.err(format!("{field}: prompt is required"));
                String::new()
            }
            Err(kind) => {
                self.err(format!("{field}: prompt must be a string (got {kind})"));
                String::new()
            }
        };

        let agent = self.text(&field, obj, "agent");
        let ephemeral = match obj.get("ephemeral") {
            None | Some(Value::Null) => None,
            Some(spec) => self.ephemeral(&who, &field, spec),
        };
        let has_ephemeral = !matches!(obj.get("ephemeral"), None | Some(Value::Null));
        match (agent.is_some(), has_ephemeral) {
            (true, true) => self.err(format!(
                "{who} sets both agent and ephemeral; exactly one is allowed"
            )),
            (false, false) => self.err(format!("{who} must set exactly one of agent or ephemeral")),
            _ => {}
        }

        let deps: Vec<String> = self
            .strict_list(&field, "deps", obj.get("deps"))
            .into_iter()
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty())
            .collect();
        let artifacts = self.strict_list(&field, "artifacts", obj.get("artifacts"));
        let failure_policy = self
            .policy_name::<FailurePolicy>(&who, &field, obj, "failure_policy")
            .unwrap_or_default();
        let synthesis_rule = self.policy_name::<SynthesisRule>(&who, &field, obj, "synthesis_rule");
        let quorum = self.quorum(&who, obj, synthesis_rule);
        let timeout_ms = self.timeout(&who, &field, obj);
        let retry = match obj.get("retry") {
            None | Some(Value::Null) => 0,
            Some(Value::Number(n)) if n.as_i64().is_some_and(|r| r < 0) => {
                self.err(format!("{who} retry must be >= 0"));
                0
            }
            Some(Value::Number(n)) if n.as_u64().is_some_and(|r| r <= u32::MAX as u64) => {
                n.as_u64().map_or(0, |r| r as u32)
            }
            Some(other) => {
                self.err(format!("{who} retry must be an integer >= 0 (got {other})"));
                0
            }
        };
        let worktree = self.text(&field, obj, "worktree");
        let fingerprint = self.text(&field, obj, "fingerprint");
        let model = self.text(&field, obj, "model");
        let effort = self.text(&field, obj, "effort");
        let phase = self.text(&field, obj, "phase");

        if self.errors.len() > before {
            return None;
        }
        Some(Delegation {
            id,
            agent,
            ephemeral,
            action: action?,
            prompt,
            deps,
            failure_policy,
            synthesis_rule,
            quorum,
            timeout_ms,
            retry,
            worktree,
            artifacts,
            fingerprint,
            model,
            effort,
            phase,
        })
    }

    /// An optional free-form string; blank counts as absent.
    fn text(
        &mut self,
        field: &str,
        obj: &serde_json::Map<String, Value>,
        key: &str,
    ) -> Option<String> {
        match opt_str(obj, key) {
            Ok(s) => s
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            Err(kind) => {
                self.err(format!("{field}: {key} must be a string (got {kind})"));
                None
            }
        }
    }

    /// `failure_policy` / `synthesis_rule`: case-insensitive names.
    fn policy_name<T: serde::de::DeserializeOwned>(
        &mut self,
        who: &str,
        field: &str,
        obj: &serde_json::Map<String, Value>,
        key: &str,
    ) -> Option<T> {
        let text = self.text(field, obj, key)?;
        let parsed = serde_json::from_value(Value::String(text.to_ascii_lowercase())).ok();
        if parsed.is_none() {
            self.err(format!("{who} {key} {text:?} is invalid"));
        }
        parsed
    }

    fn quorum(
        &mut self,
        who: &str,
        obj: &serde_json::Map<String, Value>,
        rule: Option<SynthesisRule>,
    ) -> Option<u32> {
        let quorum = match obj.get("quorum") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_u64().is_some_and(|k| k > 0 && k <= u32::MAX as u64) => {
                n.as_u64().map(|k| k as u32)
            }
            Some(Value::Number(n)) if n.as_i64().is_some() => {
                self.err(format!("{who} quorum must be > 0 (got {n})"));
                return None;
            }
            Some(other) => {
                self.err(format!(
                    "{who} quorum must be an integer count of approving legs (got {other})"
                ));
                return None;
            }
        };
        if rule == Some(SynthesisRule::Quorum) && quorum.is_none() {
            self.err(format!("{who} synthesis_rule quorum requires quorum > 0"));
        }
        quorum
    }

    /// `timeout` (a positive duration string) or `timeout_ms` (the stored form).
    fn timeout(
        &mut self,
        who: &str,
        field: &str,
        obj: &serde_json::Map<String, Value>,
    ) -> Option<i64> {
        let text = self.text(field, obj, "timeout");
        let ms = match obj.get("timeout_ms") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_i64().is_some_and(|ms| ms > 0) => n.as_i64(),
            Some(other) => {
                self.err(format!(
                    "{who} timeout_ms must be a positive integer (got {other})"
                ));
                return None;
            }
        };
        match (text, ms) {
            (Some(_), Some(_)) => {
                self.err(format!("{who} sets both timeout and timeout_ms; give one"));
                None
            }
            (None, ms) => ms,
            (Some(t), None) => match crate::duration::parse_positive_ms(&t) {
                Ok(ms) => Some(ms),
                Err(_) if crate::duration::parse_ms(&t).is_ok() => {
                    self.err(format!("{who} timeout {t:?} must be positive"));
                    None
                }
                Err(e) => {
                    self.err(format!("{who} timeout {t:?} is invalid: {e}"));
                    None
                }
            },
        }
    }

    fn ephemeral(&mut self, who: &str, field: &str, spec: &Value) -> Option<EphemeralSpec> {
        let Value::Object(obj) = spec else {
            self.err(format!(
                "{field}: ephemeral must be an object with a runtime (got {})",
                kind_of(spec)
            ));
            return None;
        };
        let before = self.errors.len();
        let runtime = match self.text(field, obj, "runtime") {
            None if opt_str(obj, "runtime").is_ok() => {
                self.err(format!("{who} ephemeral runtime is required"));
                None
            }
            None => None,
            Some(rt) => match rt.parse::<RuntimeKind>() {
                Ok(RuntimeKind::Shell) | Err(_) => {
                    self.err(format!(
                        "{who} ephemeral runtime {rt:?} is invalid; expected one of codex/claude/kimi"
                    ));
                    None
                }
                Ok(kind) => Some(kind),
            },
        };
        let mut capabilities = Vec::new();
        for name in self.strict_list(field, "ephemeral.capabilities", obj.get("capabilities")) {
            match name.parse::<Capability>() {
                Ok(c) => capabilities.push(c),
                Err(_) => self.err(format!(
                    "{who} ephemeral capability {name:?} is invalid; expected one of {}",
                    Capability::choices()
                )),
            }
        }
        let policy = match self.text(field, obj, "autonomy_policy") {
            None => Some(AutonomyPolicy::ReadOnly),
            Some(p) => match p.parse::<AutonomyPolicy>() {
                Ok(policy) => Some(policy),
                Err(_) => {
                    self.err(format!("{who} ephemeral autonomy_policy {p:?} is invalid"));
                    None
                }
            },
        };
        if let Some(policy) = policy
            && capabilities.contains(&Capability::Implement)
            && !policy.can_write()
        {
            self.err(format!(
                "{who} ephemeral {}",
                crate::domain::implement_policy_guidance(policy)
            ));
        }
        let model = self.text(field, obj, "model");
        let effort = self.text(field, obj, "effort");
        let template = self.text(field, obj, "template");
        let role = self.text(field, obj, "role");
        if self.errors.len() > before {
            return None;
        }
        Some(EphemeralSpec {
            runtime: runtime?,
            model,
            effort,
            template,
            role,
            capabilities,
            autonomy_policy: policy?,
        })
    }

    /// Unique ids, known non-self deps, and no cycle (first found, in delegation order).
    fn graph(&mut self, ids: &[Option<&str>], deps: &[Vec<String>]) {
        let mut index: HashMap<&str, usize> = HashMap::new();
        for id in ids.iter().flatten() {
            if index.contains_key(id) {
                self.err(format!("delegation id {id:?} is not unique"));
            } else {
                index.insert(id, index.len());
            }
        }
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
        let position: HashMap<&str, usize> = ids
            .iter()
            .enumerate()
            .rev()
            .filter_map(|(i, id)| id.map(|id| (id, i)))
            .collect();
        for (i, id) in ids.iter().enumerate() {
            let Some(id) = id else { continue };
            for dep in &deps[i] {
                if dep == id {
                    self.err(format!("delegation {id:?} depends on itself"));
                } else if let Some(&j) = position.get(dep.as_str()) {
                    edges[i].push(j);
                } else {
                    self.err(format!("delegation {id:?} references unknown dep {dep:?}"));
                }
            }
        }
        if let Some(cycle) = find_cycle(&edges) {
            let names: Vec<&str> = cycle.iter().map(|&i| ids[i].unwrap_or("")).collect();
            self.err(format!(
                "delegations form a dependency cycle: {}",
                names.join(" -> ")
            ));
        }
    }

    /// K (the largest quorum of a quorum-tagged leg) may not exceed the batch size.
    fn quorum_bound(&mut self, items: &[Value]) {
        let k = items
            .iter()
            .filter(|d| {
                d.get("synthesis_rule")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.trim().eq_ignore_ascii_case("quorum"))
            })
            .filter_map(|d| d.get("quorum").and_then(Value::as_u64))
            .filter(|k| *k > 0)
            .max();
        if let Some(k) = k
            && k as usize > items.len()
        {
            self.err(format!(
                "synthesis_rule quorum requires quorum ({k}) to be <= the number of delegations ({})",
                items.len()
            ));
        }
    }
}

/// A delegation's string deps, trimmed, blanks dropped; other elements are field errors.
fn raw_deps(item: &Value) -> Vec<String> {
    item.get("deps")
        .and_then(Value::as_array)
        .map(|deps| {
            deps.iter()
                .filter_map(Value::as_str)
                .map(|d| d.trim().to_owned())
                .filter(|d| !d.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The first cycle met by a depth-first walk in index order, closed (`a, b, a`).
fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut marks = vec![Mark::New; edges.len()];
    for root in 0..edges.len() {
        if marks[root] != Mark::New {
            continue;
        }
        // Iterative walk: (node, next edge to follow); `path` mirrors the stack.
        let mut stack = vec![(root, 0usize)];
        marks[root] = Mark::OnPath;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match marks[to] {
                    Mark::OnPath => {
                        let from = stack.iter().position(|&(n, _)| n == to).unwrap_or(0);
                        let mut cycle: Vec<usize> = stack[from..].iter().map(|&(n, _)| n).collect();
                        cycle.push(to);
                        return Some(cycle);
                    }
                    Mark::New => {
                        marks[to] = Mark::OnPath;
                        stack.push((to, 0));
                    }
                    Mark::Done => {}
                }
            } else {
                marks[node] = Mark::Done;
                stack.pop();
            }
        }
    }
    None
}
