//! Issue 15's engine rules, each on a real SQLite file through `engine::settle`: the job
//! budget caps the whole tree (finalize included) with one finalize, a verify leg that
//! never ran fails the verdict, and the replan cap wins over the loop ladder.
#![allow(clippy::field_reassign_with_default)] // scenario configs read best as "default, then this knob"

use super::engine_support;

use engine_support::*;
use gitmoot::contract::{Decision, FailurePolicy, SynthesisRule};
use gitmoot::domain::{JobKind, JobState, RunState};

fn ten(prefix: &str) -> Vec<gitmoot::contract::Delegation> {
    (0..10).map(|i| d(&format!("{prefix}{i}"), "rev")).collect()
}

/// Settles every queued job until none is left: legs of `coord` fan out ten more, every
/// other job approves; continuations try to fan out again.
fn drain(h: &mut H) {
    for _ in 0..500 {
        let Some(job) = h.all().into_iter().find(|j| j.state == JobState::Queued) else {
            return;
        };
        let rel = h.rel(&job.id);
        let r = match job.kind {
            JobKind::Leg if job.agent == "coord" => fan(ten("x")),
            JobKind::Continuation => fan(ten("again")),
            _ => approved(),
        };
        h.ok(&rel, r);
    }
    panic!("the tree never drained");
}

#[test]
fn the_job_budget_caps_the_whole_tree_with_one_finalize() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_total_jobs = 64;
    let mut h = H::with_cfg(cfg);
    h.ok(
        "",
        fan((0..6).map(|i| d(&format!("leg{i}"), "coord")).collect()),
    );
    drain(&mut h);
    let all = h.all();
    assert!(all.len() <= 64, "{} jobs under a budget of 64", all.len());
    assert_eq!(h.run().jobs as usize, all.len(), "every job is counted");
    let finalizes: Vec<_> = all.iter().filter(|j| j.kind == JobKind::Finalize).collect();
    assert_eq!(finalizes.len(), 1, "exactly one finalize for the tree");
    assert!(
        !finalizes[0].id[h.root.len()..].contains("/leg"),
        "the finalize is on the root's own chain: {}",
        finalizes[0].id
    );
    assert!(
        finalizes[0]
            .prompt
            .contains("per-root job budget of 64 reached"),
        "{}",
        finalizes[0].prompt
    );
    assert!(!h.events("delegation_budget_exceeded").is_empty());
    assert_eq!(h.run().state, RunState::Done);
}

#[test]
fn a_finalize_at_the_cap_takes_the_last_job_and_no_more() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_total_jobs = 4;
    let mut h = H::with_cfg(cfg);
    h.ok("", fan(vec![d("a", "rev"), d("b", "rev")]));
    h.ok("a", approved());
    h.ok("b", approved());
    let c = h.job("continuation");
    assert_eq!(c.kind, JobKind::Finalize, "the fourth job is the finalize");
    assert!(c.prompt.contains("per-root job budget of 4 reached"));
    assert!(c.prompt.contains("- delegation \"a\""), "{}", c.prompt);
    h.ok("continuation", fan(vec![d("more", "rev")]));
    assert_eq!(h.run().jobs, 4);
    assert_eq!(h.run().state, RunState::Done);
}

#[test]
fn a_verify_leg_that_never_ran_fails_the_verdict() {
    let mut h = H::new();
    h.ok(
        "",
        fan(vec![
            d("p", "rev").policy(FailurePolicy::Continue),
            d("v", "alt").deps(&["p"]).rule(SynthesisRule::Verify),
        ]),
    );
    h.fail("p", "producer crashed");
    assert!(h.try_job("v").is_none(), "v never enqueued");
    assert_eq!(h.events("verify_replan_warning").len(), 1);
    let c = h.job("continuation");
    assert!(
        c.prompt.contains("Independent verification FAILED"),
        "{}",
        c.prompt
    );
    assert!(
        c.prompt.contains("- verify leg \"v\" (agent alt): missing"),
        "{}",
        c.prompt
    );
}

#[test]
fn the_replan_cap_fires_when_producers_make_no_progress() {
    // The coordinator rewords its plan each round; the producers' results stay the same.
    let set = |round: usize| {
        fan(vec![
            d("make", "rev").prompt(&format!("attempt {round}")),
            d("check", "alt")
                .deps(&["make"])
                .rule(SynthesisRule::Verify),
        ])
    };
    let mut h = H::new();
    h.ok("", set(0));
    let mut at = String::new();
    for round in 1..4 {
        let pre = if at.is_empty() {
            String::new()
        } else {
            format!("{at}/")
        };
        h.ok(&format!("{pre}make"), approved());
        h.ok(&format!("{pre}check"), res(Decision::ChangesRequested));
        at = if at.is_empty() {
            "continuation".into()
        } else {
            format!("{at}/continuation")
        };
        if h.job(&at).kind == JobKind::Finalize {
            break;
        }
        h.ok(&at, set(round));
    }
    assert_eq!(h.events("verify_replan_warning").len(), 2);
    assert_eq!(h.events("verify_replan_exhausted").len(), 1);
    assert!(
        h.events("delegation_loop_warning").is_empty()
            && h.events("delegation_loop_detected").is_empty(),
        "the loop ladder does not pre-empt the replan cap"
    );
    assert_eq!(h.job(&at).kind, JobKind::Finalize);
}

#[test]
fn a_verify_leg_below_the_blocking_severity_passes_as_approved_with_notes() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.blocking_severity = gitmoot::contract::Severity::P1;
    let set = fan(vec![
        d("make", "rev"),
        d("check", "alt")
            .deps(&["make"])
            .rule(SynthesisRule::Verify),
    ]);
    let mut h = H::with_cfg(cfg.clone());
    h.ok("", set.clone());
    h.ok("make", approved());
    let mut nits = res(Decision::ChangesRequested);
    nits.severity = Some(gitmoot::contract::Severity::P2);
    h.ok("check", nits);
    assert!(h.events("verify_replan_warning").is_empty());
    assert_eq!(h.events("review_approved_with_notes").len(), 1);
    assert_eq!(h.job("continuation").kind, JobKind::Continuation);

    let mut h = H::with_cfg(cfg);
    h.ok("", set);
    h.ok("make", approved());
    let mut severe = res(Decision::ChangesRequested);
    severe.severity = Some(gitmoot::contract::Severity::P1);
    h.ok("check", severe);
    assert_eq!(
        h.events("verify_replan_warning").len(),
        1,
        "P1 restarts the fix loop"
    );
}
