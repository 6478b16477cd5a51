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
    /// `[orchestrate] max_delegation_token_budget`, when set.
    pub budget_tokens: Option<u64>,
    /// What the fleet spent today (settled plus running), in USD.
    pub today_usd: f64,
}

impl Live {
    /// A root's spend so far (settled plus running) for its row, against the budgets that
    /// are set: `$0.42/5.00` of the dollar budget, `24% tok` of the token budget. `None`
    /// without a budget: the row's token column already shows what it spent.
    pub fn root_spend(
        &self,
        root_id: &str,
        settled_usd: f64,
        settled_tokens: u64,
    ) -> Option<String> {
        let usd = settled_usd + self.running_spend.get(root_id).map_or(0.0, |s| s.1);
        let dollars = self
            .budget_usd
            .map(|budget| format!("${usd:.2}/{budget:.2}"));
        // A share, not two counts: the row has room for a few characters only.
        let tokens = self.budget_tokens.map(|budget| {
            let spent = self.root_tokens(root_id, settled_tokens);
            format!("{:.0}% tok", spent as f64 * 100.0 / budget.max(1) as f64)
        });
        match (dollars, tokens) {
            (Some(d), Some(t)) => Some(format!("{d} {t}")),
            (d, t) => d.or(t),
        }
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
