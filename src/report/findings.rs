//! A result's `findings` as readable markdown, the one rendering the chat `job_result`
//! message, `job show` and the control room's detail drawer all print (000:107-114).
//!
//! Pure text over JSON values: it never reads the store and never decides anything. A
//! string finding is its own text; an object a bold heading (the first present of `title`,
//! `approach`, `name`, `summary`, `finding`) with its qualifier in parentheses (the first
//! present of `recommendation`, `severity`, `status`) over an indented `key: value`
//! sub-list, a `source_url`/`url`/`source` as a link, nested arrays as nested bullets and
//! nested objects as `key: value` lines, at most [`MAX_DEPTH`] levels deep; anything else
//! (a top-level array, a number) a fenced, pretty-printed `json` block.

use serde_json::{Map, Value};

const HEADING_KEYS: &[&str] = &["title", "approach", "name", "summary", "finding"];
const QUALIFIER_KEYS: &[&str] = &["recommendation", "severity", "status"];
const LINK_KEYS: &[&str] = &["source_url", "url", "source"];
/// Nesting below a finding's own sub-list that is drawn as lines; deeper values are
/// printed as compact JSON on their line.
pub const MAX_DEPTH: usize = 3;

/// One finding as markdown, its lines joined by `\n` (no trailing newline).
pub fn render(finding: &Value) -> String {
    match finding {
        Value::String(s) => format!("- {s}"),
        Value::Object(map) => object(map),
        other => format!(
            "```json\n{}\n```",
            serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string())
        ),
    }
}

/// The first of `keys` present in `map` with a non-empty value: the key and its text.
fn first_present<'m>(map: &'m Map<String, Value>, keys: &[&'m str]) -> Option<(&'m str, String)> {
    keys.iter().find_map(|k| {
        let text = scalar(map.get(*k)?)?;
        (!text.trim().is_empty()).then_some((*k, text))
    })
}

fn object(map: &Map<String, Value>) -> String {
    let heading = first_present(map, HEADING_KEYS);
    let qualifier = first_present(map, QUALIFIER_KEYS);
    let mut out = format!(
        "- **{}**",
        heading.as_ref().map_or("Finding", |(_, t)| t.as_str())
    );
    if let Some((_, q)) = &qualifier {
        out.push_str(&format!(" ({q})"));
    }
    let shown = [heading.map(|h| h.0), qualifier.map(|q| q.0)];
    for (key, value) in map {
        if shown.contains(&Some(key.as_str())) {
            continue;
        }
        entry(key, value, 1, &mut out);
    }
    out
}

/// `  - key: value` at `depth`, or `key:` over its nested lines.
fn entry(key: &str, value: &Value, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    match value {
        Value::String(s) if LINK_KEYS.contains(&key) && !s.trim().is_empty() => {
            out.push_str(&format!("\n{pad}- {key}: [{s}]({s})"));
        }
        Value::Array(items) if depth <= MAX_DEPTH && !items.is_empty() => {
            out.push_str(&format!("\n{pad}- {key}:"));
            for item in items {
                element(item, depth + 1, out);
            }
        }
        Value::Object(map) if depth <= MAX_DEPTH && !map.is_empty() => {
            out.push_str(&format!("\n{pad}- {key}:"));
            for (k, v) in map {
                entry(k, v, depth + 1, out);
            }
        }
        v => out.push_str(&format!("\n{pad}- {key}: {}", inline(v))),
    }
}

/// One element of a nested array at `depth`.
fn element(item: &Value, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    match item {
        Value::Object(map) if depth <= MAX_DEPTH && !map.is_empty() => {
            let mut first = true;
            for (k, v) in map {
                if first {
                    // The element's bullet carries its first key.
                    let mut line = String::new();
                    entry(k, v, depth, &mut line);
                    out.push_str(&line);
                    first = false;
                } else {
                    entry(k, v, depth + 1, out);
                }
            }
        }
        Value::Array(items) if depth <= MAX_DEPTH && !items.is_empty() => {
            out.push_str(&format!("\n{pad}-"));
            for i in items {
                element(i, depth + 1, out);
            }
        }
        v => out.push_str(&format!("\n{pad}- {}", inline(v))),
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn inline(v: &Value) -> String {
    scalar(v).unwrap_or_else(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_string_finding_renders_as_it_is() {
        assert_eq!(render(&json!("plain **text**")), "- plain **text**");
    }

    #[test]
    fn an_object_takes_heading_qualifier_link_and_nested_lines() {
        let f = json!({
            "summary": "not the heading",
            "title": "Token leak",
            "status": "open",
            "severity": "high",
            "source_url": "https://example.test/1",
            "files": ["a.rs", {"path": "b.rs", "line": 3}],
            "detail": {"why": "logged", "deep": {"x": {"y": {"z": 1}}}}
        });
        assert_eq!(
            render(&f),
            "- **Token leak** (high)\n  - detail:\n    - deep:\n      - x:\n        - y: {\"z\":1}\n    - why: logged\n  - files:\n    - a.rs\n    - line: 3\n      - path: b.rs\n  - source_url: [https://example.test/1](https://example.test/1)\n  - status: open\n  - summary: not the heading"
        );
    }

    #[test]
    fn an_object_without_a_heading_key_is_a_finding_and_other_shapes_are_json() {
        assert_eq!(render(&json!({"note": "x"})), "- **Finding**\n  - note: x");
        assert_eq!(render(&json!([1, 2])), "```json\n[\n  1,\n  2\n]\n```");
    }
}
