//! The contract's entry lists: human_questions and learnings, each entry checked field by
//! field. Touches no delegation rule.

use std::collections::HashSet;

use serde_json::Value;
use serde_json::value::RawValue;

use super::{Validator, kind_of, opt_str};
use crate::contract::types::{HumanQuestion, Learning, LearningScope};

impl Validator {
    pub(super) fn human_questions(&mut self, raw: Option<&RawValue>) -> Vec<HumanQuestion> {
        let items = self.array_of("human_questions", raw);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Some((obj, id)) = self.entry("human_questions", ("id", "prompt"), i, item) else {
                continue;
            };
            if !seen.insert(id.clone()) {
                self.err(format!("human_questions[{i}] id {id:?} is not unique"));
            }
            let prefix = format!("human_questions[{i}] (id {id:?})");
            let prompt = self
                .required_str(&prefix, obj, "prompt")
                .unwrap_or_default()
                .to_owned();
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
    pub(super) fn learnings(&mut self, raw: Option<&RawValue>) -> Vec<Learning> {
        let items = self.array_of("learnings", raw);
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Some((obj, key)) = self.entry("learnings", ("key", "content"), i, item) else {
                continue;
            };
            let content = self
                .required_str(&format!("learnings[{i}] (key {key:?})"), obj, "content")
                .map(str::to_owned);
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

    /// Entry `i` of the list `field`: an object with its `key` field (trimmed), or `None`
    /// once it is told it must be an object with `key` and `body`, or that the key is
    /// missing or not a string.
    fn entry<'v>(
        &mut self,
        field: &str,
        (key, body): (&str, &str),
        i: usize,
        item: &'v Value,
    ) -> Option<(&'v serde_json::Map<String, Value>, String)> {
        let Value::Object(obj) = item else {
            self.err(format!(
                "{field}[{i}] must be an object with {key} and {body} (got {})",
                kind_of(item)
            ));
            return None;
        };
        let value = self.required_str(&format!("{field}[{i}]"), obj, key)?;
        Some((obj, value.trim().to_owned()))
    }

    /// A structural list: identifiers the engine consumes, so strings only.
    pub(super) fn strict_list(
        &mut self,
        prefix: &str,
        field: &str,
        value: Option<&Value>,
    ) -> Vec<String> {
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
}
