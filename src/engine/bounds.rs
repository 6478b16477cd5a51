//! The bounds a delegation set must pass before it is dispatched, as a catalogue: one
//! function per bound, each answering with a `Stop` that carries its figures and knows its
//! event kind, message and finalize reason; `BOUNDS` lists them in the seed's order and
//! `first_stop` walks it. Also the loop signals and the carry-forward state between
//! generations: the structural set hash, the result digest of verifiable side effects, and
//! the window/streak counters.
//!
//! Owns the arithmetic only: reads no store and writes nothing; `dispatch` and `batch`
//! decide what a trip does.

use serde::{Deserialize, Serialize};

use crate::clock::{Clock, Millis};
use crate::config::OrchestrateConfig;
use crate::contract::{Delegation, GitmootResult};
use crate::domain::EventKind;
use crate::duration::format_ms;
use crate::ids::sha256_hex;
use crate::store::runs::Run;

/// How many recent delegation-set hashes a coordinator remembers.
pub const HASH_WINDOW: usize = 3;

/// State one generation hands the next through its continuation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Carry {
    #[serde(default)]
    pub hashes: Vec<String>,
    #[serde(default)]
    pub repeat_count: u32,
    #[serde(default)]
    pub streak: u32,
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(default)]
    pub verify_attempt: u32,
    /// Set when the batch must end in a finalize (abort, TTL) once nothing is in flight.
    #[serde(default)]
    pub finalize_reason: Option<String>,
}

impl Carry {
    pub fn from_value(v: Option<&serde_json::Value>) -> Self {
        v.and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    /// The window with `hash` appended, keeping the last `HASH_WINDOW`.
    pub fn window_with(&self, hash: &str) -> Vec<String> {
        let mut w = self.hashes.clone();
        w.push(hash.to_string());
        let skip = w.len().saturating_sub(HASH_WINDOW);
        w.split_off(skip)
    }
}

/// Order-independent signature of a delegation set; phase, model, timeout are excluded.
pub fn set_hash(set: &[Delegation]) -> String {
    let mut sorted: Vec<&Delegation> = set.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let records: Vec<String> = sorted
        .iter()
        .map(|d| {
            let eph = d
                .ephemeral
                .as_ref()
                .map(|e| {
                    [
                        e.runtime.as_str(),
                        e.model.as_deref().unwrap_or(""),
                        e.effort.as_deref().unwrap_or(""),
                        e.template.as_deref().unwrap_or(""),
                        e.role.as_deref().unwrap_or(""),
                    ]
                    .join("|")
                })
                .unwrap_or_default();
            let mut deps: Vec<&str> = d.deps.iter().map(|s| s.trim()).collect();
            deps.sort_unstable();
            [
                d.id.as_str(),
                d.agent.as_deref().unwrap_or(""),
                &eph,
                d.action.as_str(),
                d.prompt.trim(),
                &deps.join(","),
            ]
            .join("\x1f")
        })
        .collect();
    sha256_hex(records.join("\x1e").as_bytes())
}

/// Digest of a generation's verifiable side effects; summaries and ids are excluded.
pub fn progress_digest<'a>(results: impl Iterator<Item = Option<&'a GitmootResult>>) -> String {
    let mut tuples: Vec<String> = results
        .map(|r| match r {
            None => ["", "", "", "0", "", ""].join("\x1f"),
            Some(r) => {
                let mut changes = r.changes_made.clone();
                changes.sort();
                let mut tests = r.tests_run.clone();
                tests.sort();
                [
                    r.decision.as_str(),
                    &changes.join("\x1d"),
                    &tests.join("\x1d"),
                    "0",
                    "",
                    r.artifact_body.as_deref().unwrap_or(""),
                ]
                .join("\x1f")
            }
        })
        .collect();
    tuples.sort();
    sha256_hex(tuples.join("\x1e").as_bytes())
}

/// Why a tree must stop dispatching (operator kill or a sweep bound), if it must.
pub fn stop_reason(run: &Run) -> Option<String> {
    if run.killed {
        Some("delegation tree killed by operator".into())
    } else {
        run.stop_reason.clone()
    }
}

/// Milliseconds the tree has been active since its root's creation, paused time excluded,
/// as `clock` measures it (the daemon's corrects steps of the wall clock).
pub fn active_ms(run: &Run, clock: &dyn Clock, now: Millis) -> i64 {
    let paused = run.paused_ms + run.paused_since_ms.map(|p| now - p).unwrap_or(0);
    clock.active_ms(&run.root_id, now - run.created_ms - paused, paused)
}

/// What the bounds read about one delegation set at dispatch.
pub(super) struct Dispatching<'a> {
    pub run: &'a Run,
    pub cfg: &'a OrchestrateConfig,
    pub clock: &'a dyn Clock,
    pub now: Millis,
    /// The coordinator's depth in its tree.
    pub depth: u32,
    /// Delegations in the set.
    pub width: usize,
    /// New jobs the set would add (`dispatch::projected_jobs`).
    pub projected: u32,
    /// Jobs the tree holds, counting legs admitted but not yet enqueued.
    pub tree: u32,
}

/// A bound that stops a delegation set, with the figures its message names.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stop {
    /// The operator killed the tree, or a sweep bound already stopped it.
    Stopped {
        killed: bool,
        reason: String,
        n: usize,
    },
    Depth {
        depth: u32,
        limit: u32,
        n: usize,
    },
    JobBudget {
        projected: u32,
        tree: u32,
        limit: u32,
        n: usize,
    },
    WallClock {
        root: String,
        active: i64,
        limit: i64,
        n: usize,
    },
    Tokens {
        root: String,
        budget: u64,
        used: u64,
        n: usize,
    },
    Usd {
        root: String,
        budget: f64,
        spent: f64,
        n: usize,
    },
    Width {
        n: usize,
        limit: u32,
    },
}

/// The bounds in the seed's order: the first that answers stops the set.
pub(super) const BOUNDS: [fn(&Dispatching<'_>) -> Option<Stop>; 7] =
    [stopped, depth, job_budget, wall_clock, tokens, usd, width];

/// The first bound `d` trips, if any.
pub(super) fn first_stop(d: &Dispatching<'_>) -> Option<Stop> {
    BOUNDS.iter().find_map(|bound| bound(d))
}

fn stopped(d: &Dispatching<'_>) -> Option<Stop> {
    stop_reason(d.run).map(|reason| Stop::Stopped {
        killed: d.run.killed,
        reason,
        n: d.width,
    })
}

fn depth(d: &Dispatching<'_>) -> Option<Stop> {
    let limit = d.cfg.max_delegation_depth;
    (d.depth >= limit).then_some(Stop::Depth {
        depth: d.depth,
        limit,
        n: d.width,
    })
}

/// One job is always kept for the tree's finalize, so the cap is never crossed.
fn job_budget(d: &Dispatching<'_>) -> Option<Stop> {
    let limit = d.cfg.max_delegation_total_jobs;
    (d.tree + d.projected + 1 > limit).then_some(Stop::JobBudget {
        projected: d.projected,
        tree: d.tree,
        limit,
        n: d.width,
    })
}

/// Checked only here, when a coordinator fans out: the bound drops new delegations and
/// never cancels a job that is queued or running.
fn wall_clock(d: &Dispatching<'_>) -> Option<Stop> {
    let active = active_ms(d.run, d.clock, d.now);
    let limit = d.cfg.max_delegation_walltime.0;
    (active > limit).then(|| Stop::WallClock {
        root: d.run.root_id.clone(),
        active,
        limit,
        n: d.width,
    })
}

/// 0 in the config means no token budget.
fn tokens(d: &Dispatching<'_>) -> Option<Stop> {
    let budget = d.cfg.max_delegation_token_budget;
    (budget > 0 && d.run.tokens >= budget).then(|| Stop::Tokens {
        root: d.run.root_id.clone(),
        budget,
        used: d.run.tokens,
        n: d.width,
    })
}

/// 0 in the config means no cost budget.
fn usd(d: &Dispatching<'_>) -> Option<Stop> {
    let budget = d.cfg.max_delegation_cost_usd;
    (budget > 0.0 && d.run.cost_usd >= budget).then(|| Stop::Usd {
        root: d.run.root_id.clone(),
        budget,
        spent: d.run.cost_usd,
        n: d.width,
    })
}

fn width(d: &Dispatching<'_>) -> Option<Stop> {
    let limit = d.cfg.max_delegation_width;
    (d.width as u32 > limit).then_some(Stop::Width { n: d.width, limit })
}

impl Stop {
    pub fn event_kind(&self) -> EventKind {
        match self {
            Stop::Stopped { killed: true, .. } => EventKind::DelegationKilled,
            Stop::Stopped { killed: false, .. } | Stop::WallClock { .. } => {
                EventKind::DelegationWalltimeExceeded
            }
            Stop::Depth { .. } => EventKind::DelegationDepthExceeded,
            Stop::JobBudget { .. } => EventKind::DelegationBudgetExceeded,
            Stop::Tokens { .. } => EventKind::DelegationCostExceeded,
            Stop::Usd { .. } => EventKind::DelegationCostUsdExceeded,
            Stop::Width { .. } => EventKind::DelegationWidthExceeded,
        }
    }

    /// The event's message: what tripped, and that the set was not dispatched.
    pub fn message(&self) -> String {
        let not = |n: &usize| format!("not dispatching {n} delegation(s)");
        match self {
            Stop::Stopped { reason, n, .. } => format!("{reason}; {}", not(n)),
            Stop::Depth { depth, limit, n } => {
                format!(
                    "delegation depth {depth} reached the limit of {limit}; {}",
                    not(n)
                )
            }
            Stop::JobBudget {
                projected,
                tree,
                limit,
                n,
            } => format!(
                "delegation batch of {projected} new job(s) would exceed the per-root job budget of {limit} (tree at {tree}); {}",
                not(n)
            ),
            Stop::WallClock {
                root,
                active,
                limit,
                n,
            } => format!(
                "delegation tree {root} ran {}, exceeding the wall-clock limit of {}; {}",
                format_ms(*active),
                format_ms(*limit),
                not(n)
            ),
            Stop::Tokens {
                root,
                budget,
                used,
                n,
            } => format!(
                "delegation tree {root} reached token budget {budget} (used {used}); {}",
                not(n)
            ),
            Stop::Usd {
                root,
                budget,
                spent,
                n,
            } => format!(
                "delegation tree {root} reached cost budget ${budget:.4} (spent ${spent:.4}); {}",
                not(n)
            ),
            Stop::Width { .. } => format!("{}; not dispatching", self.reason()),
        }
    }

    /// Why the tree finalizes: the text its finalize prompt names as the backstop.
    pub fn reason(&self) -> String {
        match self {
            Stop::Stopped { reason, .. } => reason.clone(),
            Stop::Depth { limit, .. } => format!("delegation depth limit of {limit} reached"),
            Stop::JobBudget { limit, .. } => job_budget_reason(*limit),
            Stop::WallClock { limit, .. } => {
                format!("wall-clock limit of {} reached", format_ms(*limit))
            }
            Stop::Tokens { budget, .. } => format!("token budget {budget} reached"),
            Stop::Usd { budget, .. } => format!("cost budget ${budget:.4} reached"),
            Stop::Width { n, limit } => {
                format!("delegation set width {n} exceeds the per-coordinator limit of {limit}")
            }
        }
    }

    /// Only the top of the tree finalizes at the job cap: a nested coordinator's refused
    /// set ends with its own result, which its parent synthesizes.
    pub fn spares_nested(&self) -> bool {
        matches!(self, Stop::JobBudget { .. })
    }
}

/// The finalize reason of a tree at its job cap.
pub(super) fn job_budget_reason(limit: u32) -> String {
    format!("per-root job budget of {limit} reached")
}

/// Non-progress rounds tolerated before a tree stops; 0 in the config means the default, 2.
pub(super) fn streak_threshold(cfg: &OrchestrateConfig) -> u32 {
    if cfg.max_delegation_non_progress_streak == 0 {
        2
    } else {
        cfg.max_delegation_non_progress_streak
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Duration;
    use crate::domain::Action;

    /// One row per bound: what to change in a passing set's facts, and the stop it trips.
    struct Row {
        bound: &'static str,
        trip: fn(&mut Run, &mut OrchestrateConfig, &mut (u32, usize, u32)),
        kind: EventKind,
        message: &'static str,
        reason: &'static str,
    }

    const ROWS: &[Row] = &[
        Row {
            bound: "killed",
            trip: |run, _, _| run.killed = true,
            kind: EventKind::DelegationKilled,
            message: "delegation tree killed by operator; not dispatching 2 delegation(s)",
            reason: "delegation tree killed by operator",
        },
        Row {
            bound: "depth",
            trip: |_, cfg, (depth, _, _)| (cfg.max_delegation_depth, *depth) = (3, 3),
            kind: EventKind::DelegationDepthExceeded,
            message: "delegation depth 3 reached the limit of 3; not dispatching 2 delegation(s)",
            reason: "delegation depth limit of 3 reached",
        },
        Row {
            bound: "job budget",
            trip: |run, cfg, _| (run.jobs, cfg.max_delegation_total_jobs) = (8, 10),
            kind: EventKind::DelegationBudgetExceeded,
            message: "delegation batch of 2 new job(s) would exceed the per-root job budget of 10 (tree at 8); not dispatching 2 delegation(s)",
            reason: "per-root job budget of 10 reached",
        },
        Row {
            bound: "wall clock",
            trip: |_, cfg, _| cfg.max_delegation_walltime = Duration(60_000),
            kind: EventKind::DelegationWalltimeExceeded,
            message: "delegation tree r ran 2m, exceeding the wall-clock limit of 1m; not dispatching 2 delegation(s)",
            reason: "wall-clock limit of 1m reached",
        },
        Row {
            bound: "tokens",
            trip: |run, cfg, _| (run.tokens, cfg.max_delegation_token_budget) = (500, 400),
            kind: EventKind::DelegationCostExceeded,
            message: "delegation tree r reached token budget 400 (used 500); not dispatching 2 delegation(s)",
            reason: "token budget 400 reached",
        },
        Row {
            bound: "usd",
            trip: |run, cfg, _| (run.cost_usd, cfg.max_delegation_cost_usd) = (0.5, 0.25),
            kind: EventKind::DelegationCostUsdExceeded,
            message: "delegation tree r reached cost budget $0.2500 (spent $0.5000); not dispatching 2 delegation(s)",
            reason: "cost budget $0.2500 reached",
        },
        Row {
            bound: "width",
            trip: |_, cfg, _| cfg.max_delegation_width = 1,
            kind: EventKind::DelegationWidthExceeded,
            message: "delegation set width 2 exceeds the per-coordinator limit of 1; not dispatching",
            reason: "delegation set width 2 exceeds the per-coordinator limit of 1",
        },
    ];

    /// `first_stop` over a two-leg set in tree `r`, two minutes old, after `trips`.
    fn stop_after(trips: &[Row]) -> Option<Stop> {
        let mut run = Run::new("r".into(), "t".into(), None, 0);
        let mut cfg = OrchestrateConfig::default();
        // (depth, width, projected) of the set.
        let mut set = (1, 2, 2);
        for row in trips {
            (row.trip)(&mut run, &mut cfg, &mut set);
        }
        let (depth, width, projected) = set;
        first_stop(&Dispatching {
            tree: run.jobs,
            run: &run,
            cfg: &cfg,
            clock: &crate::clock::SystemClock,
            now: 120_000,
            depth,
            width,
            projected,
        })
    }

    #[test]
    fn each_bound_trips_with_its_own_kind_message_and_reason() {
        assert_eq!(stop_after(&[]), None, "a set within every bound passes");
        for (i, row) in ROWS.iter().enumerate() {
            let stop =
                stop_after(&ROWS[i..=i]).unwrap_or_else(|| panic!("{} did not trip", row.bound));
            assert_eq!(stop.event_kind(), row.kind, "{}", row.bound);
            assert_eq!(stop.message(), row.message, "{}", row.bound);
            assert_eq!(stop.reason(), row.reason, "{}", row.bound);
            assert_eq!(
                stop.spares_nested(),
                row.bound == "job budget",
                "{}",
                row.bound
            );
        }
    }

    #[test]
    fn bounds_are_checked_in_the_seed_s_order() {
        // With every bound from the i-th on tripped at once, the i-th is the one that stops.
        for (i, row) in ROWS.iter().enumerate() {
            let stop = stop_after(&ROWS[i..]).map(|s| s.reason());
            assert_eq!(stop.as_deref(), Some(row.reason), "{}", row.bound);
        }
    }

    fn d(id: &str, prompt: &str) -> Delegation {
        serde_json::from_value(serde_json::json!({
            "id": id, "agent": "rev", "action": "review", "prompt": prompt
        }))
        .unwrap()
    }

    #[test]
    fn set_hash_ignores_order_and_phase_but_not_prompt_or_action() {
        let a = vec![d("a", "x"), d("b", "y")];
        let mut b = vec![d("b", "y "), d("a", "x")];
        b[0].phase = Some("plan".into());
        b[0].model = Some("opus".into());
        assert_eq!(set_hash(&a), set_hash(&b));
        b[1].prompt = "z".into();
        assert_ne!(set_hash(&a), set_hash(&b));
        let mut c = a.clone();
        c[0].action = Action::Ask;
        assert_ne!(set_hash(&a), set_hash(&c));
    }

    #[test]
    fn window_keeps_the_last_three() {
        let c = Carry {
            hashes: vec!["1".into(), "2".into(), "3".into()],
            ..Carry::default()
        };
        assert_eq!(c.window_with("4"), ["2", "3", "4"]);
    }

    #[test]
    fn digest_ignores_summaries_and_order() {
        let r = |s: &str, changes: &[&str]| {
            let mut r: GitmootResult =
                serde_json::from_value(serde_json::json!({"decision": "approved", "summary": s}))
                    .unwrap();
            r.changes_made = changes.iter().map(|c| c.to_string()).collect();
            r
        };
        let (a, b) = (r("one", &["x"]), r("two", &[]));
        let (a2, b2) = (r("other words", &["x"]), r("more", &[]));
        assert_eq!(
            progress_digest([Some(&a), Some(&b)].into_iter()),
            progress_digest([Some(&b2), Some(&a2)].into_iter())
        );
        let c = r("one", &["y"]);
        assert_ne!(
            progress_digest([Some(&a)].into_iter()),
            progress_digest([Some(&c)].into_iter())
        );
    }
}
