//! Read-only documents over the store that more than one room prints: a job as JSON and a
//! run's tree (`job show/tree --json`, `job run --wait`, the demo's recap), and a result's
//! findings as markdown (`findings`), the fleet's agents live (`agents`), spend in words
//! (`usage`). It only reads; it never decides or writes anything.

pub mod agents;
pub(crate) mod findings;
pub mod usage;

use crate::store::Tx;
use std::collections::HashMap;

use serde_json::{Value, json};

use crate::store::StoreError;
use crate::store::jobs::{self, Job};
use crate::store::runs;

/// The `job show --json` document.
pub(crate) fn job_json(j: &Job) -> Value {
    json!({
        "id": j.id,
        "root_id": j.root_id,
        "parent_id": j.parent_id,
        "delegation_id": j.delegation_id,
        "kind": j.kind,
        "agent": j.agent,
        "action": j.action,
        "state": j.state,
        "depth": j.depth,
        "attempt": j.attempt,
        "prompt": j.prompt,
        "repo": j.repo,
        "model": j.model,
        "effort": j.effort,
        "phase": j.phase,
        "timeout_ms": j.timeout_ms,
        "result": j.result,
        "error": j.error,
        "output_truncated": j.output_truncated,
        "tokens": {"in": j.tokens_in, "out": j.tokens_out, "total": j.tokens()},
        "cost_usd": j.cost_usd,
        "dispatched_by": j.dispatched_by,
        "followup": j.followup,
        "followup_reason": j.followup_reason,
        "continuation_id": j.continuation_id,
        "on_label": j.on_label,
        "created": j.created_ms,
        "started": j.started_ms,
        "finished": j.finished_ms,
    })
}

/// The `job tree --json` document: the run and the root with nested children.
pub(crate) fn tree_json(conn: &Tx<'_>, root: &str) -> Result<Value, StoreError> {
    let run = runs::require(conn, root)?;
    let all = jobs::by_root(conn, root)?;
    let mut children: HashMap<&str, Vec<&Job>> = HashMap::new();
    for j in &all {
        if let Some(p) = &j.parent_id {
            children.entry(p.as_str()).or_default().push(j);
        }
    }
    fn node(j: &Job, children: &HashMap<&str, Vec<&Job>>) -> Value {
        let mut v = job_json(j);
        let kids: Vec<Value> = children
            .get(j.id.as_str())
            .into_iter()
            .flatten()
            .map(|c| node(c, children))
            .collect();
        v["children"] = Value::Array(kids);
        v
    }
    let root_job = all
        .iter()
        .find(|j| j.id == root)
        .ok_or_else(|| StoreError::Invalid(crate::Invalid(format!("job {root:?} not found"))))?;
    Ok(json!({
        "run": {
            "root_id": run.root_id,
            "state": run.state,
            "title": run.title,
            "killed": run.killed,
            "paused_ms": run.paused_ms,
            "stop_reason": run.stop_reason,
            "jobs": all.len(),
            "tokens": all.iter().map(Job::tokens).sum::<u64>(),
            "cost_usd": all.iter().map(|j| j.cost_usd).sum::<f64>(),
            "created": run.created_ms,
            "finished": run.finished_ms,
        },
        "tree": node(root_job, &children),
    }))
}

/// The tree of `job tree --json` as indented text lines, one job a line.
pub(crate) fn tree_text(node: &Value, depth: usize, out: &mut String) {
    let label = node["delegation_id"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| node["id"].as_str().unwrap_or("").to_string());
    let decision = node["result"]["decision"]
        .as_str()
        .map(|d| format!(" → {d}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "{}{} [{}] {} ({}){}\n",
        "  ".repeat(depth + 1),
        label,
        node["state"].as_str().unwrap_or(""),
        node["agent"].as_str().unwrap_or(""),
        node["kind"].as_str().unwrap_or(""),
        decision
    ));
    for c in node["children"].as_array().into_iter().flatten() {
        tree_text(c, depth + 1, out);
    }
}
