//! `result_observation`: an implement job's `changes_made` claims graded against the files
//! its checkout really touched (`git diff HEAD` plus untracked files, captured by the
//! daemon before the checkout is cleaned up).
//!
//! Pure: the capture arrives as data; this module binds claims to paths, grades them and
//! records the document. A claim is `observed` only when its repo-relative path is exactly
//! one of the touched files; a unique-basename match for a bare file name binds but stays
//! `reported`, as does everything when the capture is missing. Nothing is ever `verified`:
//! a path in the diff does not prove what the prose says about it.

use crate::store::Tx;
use serde::Serialize;
use serde_json::{Value, json};

use super::EngineError;
use crate::clock::Millis;
use crate::contract::GitmootResult;
use crate::store::payloads;

/// Where the touched files came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capture {
    /// The job's checkout or worktree was read: every touched path, repo-relative.
    Touched { source: Source, files: Vec<String> },
    /// The checkout could not be read; grades stay `reported`.
    Indeterminate { source: Source, reason: String },
    /// A leg with no worktree of its own is not graded against the shared checkout.
    ExcludedWorktreeLessChild,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Checkout,
    Worktree,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Binding {
    /// The claim names exactly a touched path.
    Exact,
    /// A bare file name matching exactly one touched file's basename.
    Basename,
    /// No touched file matches.
    Unbound,
    /// The claim names no path at all.
    NoPath,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    Observed,
    Reported,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    pub claim: String,
    pub path: Option<String>,
    pub bound_to: Option<String>,
    pub binding: Binding,
    pub grade: Grade,
}

/// A repo-relative path with `./` and surrounding punctuation removed.
fn normalize(p: &str) -> String {
    let t = p.trim_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '"' | '\'' | ',' | ';' | ':' | '(' | ')' | '[' | ']'
            )
    });
    let t = t.trim_end_matches('.');
    t.strip_prefix("./").unwrap_or(t).to_string()
}

fn looks_like_path(t: &str) -> bool {
    !t.is_empty()
        && !t.contains("://")
        && (t.contains('/')
            || t.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=5).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
            }))
}

/// The path a `changes_made` entry names: an object's `path`/`file` key, else the first
/// path-shaped word of the text.
pub fn claimed_path(entry: &str) -> Option<String> {
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(entry) {
        for k in ["path", "file", "filename"] {
            if let Some(p) = o.get(k).and_then(Value::as_str) {
                let p = normalize(p);
                return (!p.is_empty()).then_some(p);
            }
        }
        return None;
    }
    entry
        .split_whitespace()
        .map(normalize)
        .find(|t| looks_like_path(t))
}

/// Grades every claim of `result` against `capture`.
pub fn observe(result: &GitmootResult, capture: &Capture) -> Value {
    let (source, files, reason): (&str, Option<&[String]>, Option<&str>) = match capture {
        Capture::ExcludedWorktreeLessChild => {
            return json!({"source": "excluded_worktree_less_delegation_child"});
        }
        Capture::Touched { source, files } => (source_name(*source), Some(files), None),
        Capture::Indeterminate { source, reason } => (source_name(*source), None, Some(reason)),
    };
    let touched: Vec<String> = files
        .map(|f| f.iter().map(|p| normalize(p)).collect())
        .unwrap_or_default();
    let mut claims = Vec::new();
    for entry in &result.changes_made {
        let path = claimed_path(entry);
        let (binding, bound_to) = match (&path, files) {
            (None, _) => (Binding::NoPath, None),
            (Some(_), None) => (Binding::Unbound, None),
            (Some(p), Some(_)) if touched.contains(p) => (Binding::Exact, Some(p.clone())),
            (Some(p), Some(_)) if !p.contains('/') => {
                let same: Vec<&String> = touched
                    .iter()
                    .filter(|t| t.rsplit('/').next() == Some(p.as_str()))
                    .collect();
                match same.as_slice() {
                    [one] => (Binding::Basename, Some((*one).clone())),
                    _ => (Binding::Unbound, None),
                }
            }
            (Some(_), Some(_)) => (Binding::Unbound, None),
        };
        let grade = if binding == Binding::Exact {
            Grade::Observed
        } else {
            Grade::Reported
        };
        claims.push(Claim {
            claim: entry.clone(),
            path,
            bound_to,
            binding,
            grade,
        });
    }
    let bound: Vec<&String> = claims.iter().filter_map(|c| c.bound_to.as_ref()).collect();
    let claimed_only: Vec<&String> = claims
        .iter()
        .filter(|c| c.bound_to.is_none())
        .filter_map(|c| c.path.as_ref())
        .collect();
    let unclaimed: Vec<&String> = touched.iter().filter(|t| !bound.contains(t)).collect();
    let mut doc = json!({
        "source": source,
        "touched_files": files.map(|_| &touched),
        "claims": claims,
        "claimed_only": claimed_only,
        "unclaimed_diff_files": if files.is_some() { json!(unclaimed) } else { Value::Null },
    });
    if let Some(r) = reason {
        doc["indeterminate"] = json!(one_line(r));
    }
    doc
}

/// Why nothing was observed, as one line: the first non-empty line of `reason` (a tool's
/// usage text never fills the document), at most 300 bytes.
fn one_line(reason: &str) -> String {
    let line = reason
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("unknown");
    super::prompts::truncate_utf8(line, 300).to_string()
}

fn source_name(s: Source) -> &'static str {
    match s {
        Source::Checkout => "checkout",
        Source::Worktree => "worktree",
    }
}

/// Grades the stored result of `job_id` and records the observation; a job without a
/// parsed result records nothing.
pub fn record(
    tx: &Tx<'_>,
    now: Millis,
    job_id: &str,
    capture: &Capture,
) -> Result<(), EngineError> {
    let job = crate::store::jobs::require(tx, job_id)?;
    let Some(result) = super::ctx::parse_result(job.result.as_ref()) else {
        return Ok(());
    };
    let doc = observe(&result, capture);
    payloads::set_observation(tx, job_id, &doc, now)?;
    Ok(())
}

/// One line for viewers: where the files came from and how the claims graded.
pub fn summary_line(o: &Value) -> String {
    let source = o["source"].as_str().unwrap_or("?");
    let Some(claims) = o["claims"].as_array() else {
        return format!("observation: {source}");
    };
    let observed = claims.iter().filter(|c| c["grade"] == "observed").count();
    let len = |k: &str| o[k].as_array().map_or(0, Vec::len);
    format!(
        "observation ({source}): {observed}/{} claim(s) observed, {} claimed-only, {} unclaimed diff file(s)",
        claims.len(),
        len("claimed_only"),
        len("unclaimed_diff_files")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(changes: &[&str]) -> GitmootResult {
        let mut r: GitmootResult =
            serde_json::from_value(json!({"decision": "implemented", "summary": "s"})).unwrap();
        r.changes_made = changes.iter().map(|s| s.to_string()).collect();
        r
    }

    #[test]
    fn claims_bind_exactly_by_basename_or_not_at_all() {
        let cap = Capture::Touched {
            source: Source::Checkout,
            files: vec![
                "src/lib.rs".into(),
                "README.md".into(),
                "docs/new.md".into(),
            ],
        };
        let o = observe(
            &r(&[
                "Edited ./src/lib.rs to add the parser",
                "Updated new.md",
                "Changed src/main.rs",
                "Refactored everything",
                r#"{"path":"README.md","what":"docs"}"#,
            ]),
            &cap,
        );
        let grades: Vec<(&str, &str)> = o["claims"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["binding"].as_str().unwrap(), c["grade"].as_str().unwrap()))
            .collect();
        assert_eq!(
            grades,
            [
                ("exact", "observed"),
                ("basename", "reported"),
                ("unbound", "reported"),
                ("no_path", "reported"),
                ("exact", "observed"),
            ]
        );
        assert_eq!(o["claimed_only"], json!(["src/main.rs"]));
        assert_eq!(o["unclaimed_diff_files"], json!([]));
    }

    #[test]
    fn an_indeterminate_reason_is_kept_to_its_first_line() {
        let c = Capture::Indeterminate {
            source: Source::Checkout,
            reason: "\nfatal: not a repo\nusage: git diff --no-index\n  many lines".into(),
        };
        assert_eq!(observe(&r(&[]), &c)["indeterminate"], "fatal: not a repo");
    }

    #[test]
    fn an_indeterminate_capture_keeps_every_grade_reported() {
        let cap = Capture::Indeterminate {
            source: Source::Checkout,
            reason: "not a git checkout".into(),
        };
        let o = observe(&r(&["src/lib.rs"]), &cap);
        assert_eq!(o["claims"][0]["grade"], "reported");
        assert_eq!(o["indeterminate"], "not a git checkout");
        let o = observe(&r(&["src/lib.rs"]), &Capture::ExcludedWorktreeLessChild);
        assert_eq!(o["source"], "excluded_worktree_less_delegation_child");
    }
}
