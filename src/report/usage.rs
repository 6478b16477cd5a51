//! A root's spend in words, for `gitmoot usage` and the control room's Usage view alike: its
//! headroom against the per-root budgets that are set.
//!
//! Reads only the figures `store::usage` already added up; decides nothing.

use serde::Serialize;

use crate::config::Config;
use crate::store::usage::Group;

/// A root's spend against the per-root budgets that are set (`[orchestrate]`
/// `max_delegation_cost_usd`, `max_delegation_token_budget`; 0 is none).
#[derive(Debug, Serialize)]
pub struct Budget {
    #[serde(skip_serializing_if = "Option::is_none")]
    usd: Option<Headroom<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens: Option<Headroom<u64>>,
}

#[derive(Debug, Serialize)]
struct Headroom<T> {
    spent: T,
    limit: T,
}

/// The budgets of `g` when it is a root's group and any budget is set.
pub fn budget(g: &Group, config: &Config) -> Option<Budget> {
    let root = g.root.as_ref()?;
    let o = &config.orchestrate;
    let b = Budget {
        usd: (o.max_delegation_cost_usd > 0.0).then_some(Headroom {
            spent: root.cost_usd,
            limit: o.max_delegation_cost_usd,
        }),
        tokens: (o.max_delegation_token_budget > 0).then_some(Headroom {
            spent: root.tokens,
            limit: o.max_delegation_token_budget,
        }),
    };
    (b.usd.is_some() || b.tokens.is_some()).then_some(b)
}

/// "$0.42 of $5.00, 1200 of 100000 tokens".
pub fn headroom(b: &Budget) -> String {
    let usd = b
        .usd
        .as_ref()
        .map(|h| format!("${:.2} of ${:.2}", h.spent, h.limit));
    let tokens = b
        .tokens
        .as_ref()
        .map(|h| format!("{} of {} tokens", h.spent, h.limit));
    [usd, tokens]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
}
