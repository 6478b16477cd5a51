//! One delegation entry of a batch: its target, action, prompt, policies, quorum, timeout
//! and ephemeral spec. Rules across the batch are `graph`'s.

use serde_json::Value;

use super::graph::raw_deps;
use super::{Validator, kind_of, opt_str};
use crate::contract::types::{Delegation, EphemeralSpec, FailurePolicy, SynthesisRule};
use crate::domain::{Action, AutonomyPolicy, Capability, RuntimeKind};

impl Validator {
    pub(super) fn delegations(
        &mut self,
        items: &[Value],
        has_artifact_body: bool,
    ) -> Vec<Delegation> {
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

    pub(super) fn delegation(&mut self, i: usize, item: &Value) -> Option<Delegation> {
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

        let id = self.entry_id(&field, obj);
        let action = self.leg_action(&field, obj);
        let prompt = self.prompt(&field, obj);

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
        let retry = self.retry(&who, obj);
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

    /// The entry's `id`: required, a string without surrounding whitespace.
    fn entry_id(&mut self, field: &str, obj: &serde_json::Map<String, Value>) -> String {
        let Some(id) = self.required_str(&format!("{field}:"), obj, "id") else {
            return String::new();
        };
        if id.trim() != id {
            self.err(format!(
                "{field}: id must not have leading or trailing whitespace"
            ));
        }
        id.to_owned()
    }

    /// The entry's `action`: required, and a leg may only ask or review.
    fn leg_action(&mut self, field: &str, obj: &serde_json::Map<String, Value>) -> Option<Action> {
        let a = self.required_str(&format!("{field}:"), obj, "action")?;
        if a.trim() != a {
            self.err(format!(
                "{field}: action must not have leading or trailing whitespace"
            ));
            return None;
        }
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

    /// The entry's `prompt`, trimmed: required.
    fn prompt(&mut self, field: &str, obj: &serde_json::Map<String, Value>) -> String {
        self.required_str(&format!("{field}:"), obj, "prompt")
            .map_or_else(String::new, |p| p.trim().to_owned())
    }

    /// The entry's `retry`: an integer >= 0 that fits a u32, 0 when absent.
    fn retry(&mut self, who: &str, obj: &serde_json::Map<String, Value>) -> u32 {
        match obj.get("retry") {
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
        }
    }

    /// An optional free-form string; blank counts as absent.
    pub(super) fn text(
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
    pub(super) fn policy_name<T: serde::de::DeserializeOwned>(
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

    pub(super) fn quorum(
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
    pub(super) fn timeout(
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

    pub(super) fn ephemeral(
        &mut self,
        who: &str,
        field: &str,
        spec: &Value,
    ) -> Option<EphemeralSpec> {
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
}
