//! Live agent activity in the view model: each job's newest step (for running rows), the
//! unsettled spend of running legs per root, the cost budget, today's fleet spend, and the
//! steps the Detail drawer's Activity tab lists.
//!
//! Owns only data and formatting; the glue fills it, the widgets draw it.

use std::collections::HashMap;

/// The live figures of one load.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Live {
    /// Newest activity summary per job id.
    pub latest: HashMap<String, String>,
    /// Per root: tokens and USD its running legs have spent and not yet settled.
    pub running_spend: HashMap<String, (u64, f64)>,
    /// `[orchestrate] max_delegation_cost_usd`, when set.
    pub budget_usd: Option<f64>,
    /// What the fleet spent today (settled plus running), in USD.
    pub today_usd: f64,
}

impl Live {
    /// A root's USD so far (settled plus running) for its row: `$0.42/5.00` against the
    /// budget; `None` when no budget is set (the row already shows tokens).
    pub fn root_spend(&self, root_id: &str, settled_usd: f64) -> Option<String> {
        let budget = self.budget_usd?;
        let live = self.running_spend.get(root_id).map_or(0.0, |s| s.1);
        Some(format!("${:.2}/{budget:.2}", settled_usd + live))
    }

    /// A root's tokens so far, settled plus running.
    pub fn root_tokens(&self, root_id: &str, settled: u64) -> u64 {
        settled + self.running_spend.get(root_id).map_or(0, |s| s.0)
    }
}

/// One step of a job, as the Activity tab lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub seq: u64,
    pub ts_ms: i64,
    /// `message`, `tool_call`, `tool_result`, `command`, `file_change`, `usage`, `error`,
    /// `stderr`, `output` or `truncated`.
    pub kind: String,
    pub summary: String,
    pub detail: Option<String>,
}

impl Step {
    /// The glyph that tells calls from results at a glance.
    pub fn glyph(&self) -> &'static str {
        match self.kind.as_str() {
            "tool_call" | "command" => "→",
            "tool_result" => "←",
            "file_change" => "✎",
            "message" => "•",
            "usage" => "Σ",
            "error" | "stderr" => "!",
            "truncated" => "…",
            _ => " ",
        }
    }
}

/// Which tab the Detail drawer shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DetailTab {
    #[default]
    Overview,
    Activity,
    /// A write job's diff against its base (`job diff`).
    Diff,
}
