//! Engine scenarios: scripted results settled through `engine::settle` on a real SQLite
//! file with a manual clock.
#![allow(clippy::field_reassign_with_default)] // scenario configs read best as "default, then this knob"

use super::engine_support;

use engine_support::*;
use gitmoot::contract::{Decision, FailurePolicy, SynthesisRule};
use gitmoot::domain::{JobKind, JobState, RunState};
use gitmoot::engine::ResumeVerb;

#[test]
fn three_leg_fan_out_with_deps_runs_in_order_then_one_continuation() {
    let mut h = H::fanned(vec![
        d("a", "rev"),
        d("b", "alt"),
        d("c", "rev").deps(&["a", "b"]),
    ]);
    assert_eq!(h.queued(), ["a", "b"]);
    let a = h.job("a");
    assert_eq!(
        (a.kind, a.depth, a.parent_id.as_deref()),
        (JobKind::Leg, 1, Some(h.root.as_str()))
    );
    assert_eq!(a.delegation_id.as_deref(), Some("a"));
    assert_eq!(
        a.model.as_deref(),
        Some("claude-sonnet"),
        "agent model resolved"
    );
    h.ok("a", summary(approved(), "a found nothing"));
    assert_eq!(h.queued(), ["b"], "c waits for b");
    h.ok(
        "b",
        summary(res(Decision::ChangesRequested), "b wants a fix"),
    );
    assert_eq!(h.queued(), ["c"]);
    assert_eq!(
        h.job("c").prompt,
        "do c",
        "upstream context is off by default"
    );
    h.ok("c", approved());
    assert_eq!(h.queued(), ["continuation"]);
    let c = h.job("continuation");
    assert_eq!(
        (c.kind, c.depth, c.agent.as_str()),
        (JobKind::Continuation, 1, "coord")
    );
    assert!(
        c.prompt
            .starts_with("Original goal:\nShip the release notes\n"),
        "{}",
        c.prompt
    );
    assert!(
        c.prompt.contains(&format!(
            "- delegation \"a\" (job {}/a, agent rev): approved — a found nothing",
            h.root
        )),
        "{}",
        c.prompt
    );
    assert!(
        c.prompt.contains("changes_requested — b wants a fix"),
        "{}",
        c.prompt
    );
    assert_eq!(h.run().state, RunState::Running);
    h.ok("continuation", approved());
    assert_eq!(h.run().state, RunState::Done);
    assert_eq!(h.run().jobs, 5);
}

#[test]
fn block_parent_failure_blocks_the_run_without_continuation() {
    let mut h = H::fanned(vec![d("a", "rev"), d("b", "rev").deps(&["a"])]);
    h.fail("a", "runtime exited 1");
    assert!(h.queued().is_empty());
    assert_eq!(h.run().state, RunState::Blocked);
    let e = h.events("delegation_blocked");
    assert!(
        e[0].message
            .contains("delegation \"a\" failed (failure_policy block_parent): runtime exited 1"),
        "{}",
        e[0].message
    );
    assert!(h.try_job("continuation").is_none());
}

#[test]
fn continue_policy_skips_only_the_failed_branch() {
    let mut h = H::fanned(vec![
        d("a", "rev").policy(FailurePolicy::Continue),
        d("b", "rev"),
        d("a2", "rev").deps(&["a"]),
        d("b2", "rev").deps(&["b"]),
    ]);
    h.ok("a", res(Decision::Failed));
    h.ok("b", approved());
    assert_eq!(h.queued(), ["b2"], "a's dependent never runs");
    h.ok("b2", approved());
    let c = h.job("continuation");
    assert!(
        c.prompt
            .contains("- delegation \"a2\" (agent rev): not enqueued (dependencies unmet)"),
        "{}",
        c.prompt
    );
}

#[test]
fn escalate_policy_hands_the_failure_to_the_coordinator_at_once() {
    let mut h = H::fanned(vec![
        d("a", "rev").policy(FailurePolicy::Escalate),
        d("b", "rev"),
        d("c", "rev").deps(&["b"]),
    ]);
    h.fail("a", "boom");
    let c = h.job("continuation");
    assert!(c.prompt.contains("\"a\""), "{}", c.prompt);
    assert!(c.prompt.contains("still queued"), "{}", c.prompt);
    h.ok("b", approved());
    assert!(
        h.try_job("c").is_none(),
        "dependents are not enqueued once escalated"
    );
    assert_eq!(h.queued(), ["continuation"]);
}

#[test]
fn escalate_human_pauses_and_resume_retry_reruns_with_guidance() {
    let mut h = H::fanned(vec![
        d("a", "rev").policy(FailurePolicy::EscalateHuman),
        d("b", "rev"),
    ]);
    h.fail("a", "flaky");
    h.ok("b", approved());
    assert_eq!(h.run().state, RunState::AwaitingHuman);
    assert!(
        h.try_job("continuation").is_none(),
        "no continuation while paused"
    );
    h.clock.advance(60_000);
    h.resume("", ResumeVerb::Retry, Some("use the staging db"))
        .unwrap();
    let retry = h.job("a.2");
    assert_eq!(retry.attempt, 2);
    assert!(
        retry
            .prompt
            .ends_with("\n\nHuman guidance on resume: use the staging db"),
        "{}",
        retry.prompt
    );
    assert_eq!(h.run().state, RunState::Running);
    assert_eq!(h.run().paused_ms, 60_000);
    h.fail("a.2", "still flaky");
    assert_eq!(
        h.open_rounds().len(),
        1,
        "a second failure opens a new round"
    );
    h.resume("", ResumeVerb::Retry, None).unwrap();
    assert!(h.try_job("a.3").is_some(), "every human retry is a new id");
    // The control room names each attempt apart (`a`, `a.2`, `a.3`) from these rows.
    let attempts: Vec<(String, u32)> = gitmoot::store::views::tree_rows(h.store.conn(), &h.root)
        .unwrap()
        .into_iter()
        .filter(|r| r.delegation_id.as_deref() == Some("a"))
        .map(|r| (r.id.rsplit('/').next().unwrap().to_string(), r.attempt))
        .collect();
    assert_eq!(
        attempts,
        [
            ("a".to_string(), 1),
            ("a.2".to_string(), 2),
            ("a.3".to_string(), 3)
        ]
    );
    h.ok("a.3", approved());
    assert_eq!(h.queued(), ["continuation"]);
}

#[test]
fn resume_continue_proceeds_and_abort_finalizes() {
    let mut h = H::fanned(vec![d("a", "rev").policy(FailurePolicy::EscalateHuman)]);
    h.fail("a", "x");
    h.resume("", ResumeVerb::Continue, None).unwrap();
    assert_eq!(h.job("continuation").kind, JobKind::Continuation);

    let mut h = H::fanned(vec![d("a", "rev").policy(FailurePolicy::EscalateHuman)]);
    h.fail("a", "x");
    h.resume("", ResumeVerb::Abort, Some("too risky")).unwrap();
    let f = h.job("continuation");
    assert_eq!(f.kind, JobKind::Finalize);
    assert!(
        f.prompt
            .contains("(human aborted the escalation: too risky)"),
        "{}",
        f.prompt
    );
    assert_eq!(h.events("delegation_finalize_enqueued").len(), 1);
}

#[test]
fn resume_and_answer_mismatches_are_refused() {
    let mut h = H::fanned(vec![d("a", "rev").policy(FailurePolicy::EscalateHuman)]);
    let e = h.resume("", ResumeVerb::Retry, None).unwrap_err();
    assert_eq!(e, format!("job {} has no pending human escalation", h.root));
    h.fail("a", "x");
    let e = h.answer("", "q1: yes").unwrap_err();
    assert!(e.contains("is paused on a failure escalation, not an ask; resume it with retry|continue|abort, not answer"), "{e}");

    let mut h = H::new();
    h.ok("", asking(approved(), &[("q1", "Which?")]));
    let e = h.resume("", ResumeVerb::Continue, None).unwrap_err();
    assert!(
        e.contains(
            "is awaiting a human answer; resume it with answer \"<qid>: ...\", not continue"
        ),
        "{e}"
    );
    let e = h.answer("nope", "x").unwrap_err();
    assert!(e.contains("not found"), "{e}");
    assert!(
        "answer"
            .parse::<ResumeVerb>()
            .unwrap_err()
            .0
            .contains("want retry|continue|abort")
    );
}

#[test]
fn vote_passes_with_skipped_and_blocks_on_failure() {
    let mut h = H::fanned(vec![
        d("a", "rev")
            .rule(SynthesisRule::Vote)
            .policy(FailurePolicy::Continue),
        d("b", "rev"),
    ]);
    h.ok("a", res(Decision::Skipped));
    h.ok("b", approved());
    assert!(
        h.try_job("continuation").is_some(),
        "skipped counts as succeeded for vote"
    );

    let mut h = H::fanned(vec![
        d("a", "rev")
            .rule(SynthesisRule::Vote)
            .policy(FailurePolicy::Continue),
        d("b", "rev"),
    ]);
    h.ok("a", res(Decision::Failed));
    h.ok("b", approved());
    assert_eq!(h.run().state, RunState::Blocked);
    h.assert_first_event("delegation_blocked", "synthesis_rule vote failed");

    let mut h = H::fanned(vec![d("a", "rev").rule(SynthesisRule::Vote), d("b", "rev")]);
    h.ok("a", approved());
    h.ok("b", res(Decision::ChangesRequested));
    assert_eq!(
        h.run().state,
        RunState::Blocked,
        "changes_requested does not approve"
    );
}

#[test]
fn quorum_counts_approvals_and_skipped_abstains() {
    let mk = || fan(vec![d("a", "rev").quorum(2), d("b", "rev"), d("c", "rev")]);
    let mut h = H::new();
    h.ok("", mk());
    h.ok("a", approved());
    h.ok("b", res(Decision::Skipped));
    h.ok("c", res(Decision::Implemented));
    assert!(h.try_job("continuation").is_some());

    let mut h = H::new();
    h.ok("", mk());
    h.ok("a", approved());
    h.ok("b", res(Decision::Skipped));
    h.ok("c", res(Decision::ChangesRequested));
    assert_eq!(h.run().state, RunState::Blocked);
    h.assert_first_event("delegation_blocked", "fewer than 2 delegated children");
}

#[test]
fn verify_pass_continues_fail_replans_then_exhausts_to_finalize() {
    let mk = |p: &str| {
        fan(vec![
            d("make", "rev").prompt(p),
            d("check", "alt")
                .deps(&["make"])
                .rule(SynthesisRule::Verify),
        ])
    };
    let mut h = H::new();
    h.ok("", mk("v0"));
    h.ok("make", approved());
    h.ok("check", approved());
    assert_eq!(h.job("continuation").kind, JobKind::Continuation);
    assert!(h.events("verify_replan_warning").is_empty());

    let mut h = H::new();
    h.ok("", mk("v0"));
    h.ok("make", approved());
    h.ok("check", res(Decision::Skipped));
    assert!(
        h.events("verify_replan_warning").is_empty(),
        "skipped abstains"
    );

    let mut h = H::new();
    h.ok("", mk("v0"));
    h.ok("make", approved());
    h.ok(
        "check",
        summary(res(Decision::ChangesRequested), "tests fail"),
    );
    let r1 = h.job("continuation");
    assert!(
        r1.prompt.contains("Independent verification FAILED"),
        "{}",
        r1.prompt
    );
    assert!(
        r1.prompt
            .contains("- verify leg \"check\" (agent alt): changes_requested — tests fail"),
        "{}",
        r1.prompt
    );
    assert!(r1.prompt.contains("attempt 1 of 2"), "{}", r1.prompt);
    h.ok("continuation", mk("v1"));
    h.ok("continuation/make", approved());
    let mut cr = res(Decision::ChangesRequested);
    cr.tests_run = vec!["cargo test".into()];
    h.ok("continuation/check", cr);
    let r2 = h.job("continuation/continuation");
    assert!(
        r2.prompt.contains("attempt 2 of 2") && r2.prompt.contains("LAST attempt"),
        "{}",
        r2.prompt
    );
    h.ok("continuation/continuation", mk("v2"));
    h.ok("continuation/continuation/make", approved());
    let mut cr = res(Decision::ChangesRequested);
    cr.changes_made = vec!["x".into()];
    h.ok("continuation/continuation/check", cr);
    assert_eq!(h.events("verify_replan_exhausted").len(), 1);
    let f = h.job("continuation/continuation/continuation");
    assert_eq!(f.kind, JobKind::Finalize);
    h.ok(
        "continuation/continuation/continuation",
        fan(vec![d("more", "rev")]),
    );
    assert_eq!(
        h.events("delegation_finalized").len(),
        1,
        "finalize's delegations are ignored"
    );
    assert_eq!(h.run().state, RunState::Done);
}

fn finalize_of(h: &H, rest: &str) -> gitmoot::store::jobs::Job {
    let f = h.job(rest);
    assert_eq!(f.kind, JobKind::Finalize, "{rest} is a finalize");
    assert_eq!(h.events("delegation_finalize_enqueued").len(), 1);
    f
}

#[test]
fn depth_bound_routes_to_finalize() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_depth = 1;
    let mut h = H::fanned_with(cfg, vec![d("a", "coord")]);
    h.ok("a", fan(vec![d("deep", "rev")]));
    h.assert_first_event(
        "delegation_depth_exceeded",
        "delegation depth 1 reached the limit of 1; not dispatching 1 delegation(s)",
    );
    let f = finalize_of(&h, "a/continuation");
    assert!(
        f.prompt.contains("delegation depth limit of 1 reached"),
        "{}",
        f.prompt
    );
    assert!(
        f.prompt
            .contains("- delegation \"deep\" (agent rev, action review)"),
        "{}",
        f.prompt
    );
    h.ok("a/continuation", approved());
    h.ok("continuation", approved());
    assert_eq!(h.run().state, RunState::Done);
}

#[test]
fn job_budget_is_projected_and_refuses_the_whole_batch() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_total_jobs = 4;
    let mut h = H::with_cfg(cfg.clone());
    h.ok(
        "",
        fan(vec![
            d("a", "rev"),
            d("b", "rev"),
            d("c", "rev"),
            d("d", "rev").deps(&["a"]),
        ]),
    );
    assert!(h.events("delegation_budget_exceeded")[0].message.contains(
        "delegation batch of 4 new job(s) would exceed the per-root job budget of 4 (tree at 1)"
    ));
    assert!(h.try_job("a").is_none(), "no partial fan-out");
    finalize_of(&h, "continuation");

    let h = H::fanned_with(
        cfg,
        vec![
            d("a", "rev"),
            d("b", "rev").fp("same"),
            d("c", "rev").fp("same"),
        ],
    );
    assert!(
        h.events("delegation_budget_exceeded").is_empty(),
        "fingerprint twins count once; an exact fit admits"
    );
}

#[test]
fn wall_clock_bound_excludes_paused_time_and_trips_at_dispatch() {
    let mut h = H::fanned(vec![d("a", "coord").policy(FailurePolicy::EscalateHuman)]);
    h.fail("a", "x");
    h.clock.advance(3 * 3_600_000);
    h.resume("", ResumeVerb::Retry, None).unwrap();
    h.ok("a.2", fan(vec![d("x", "rev")]));
    assert!(
        h.events("delegation_walltime_exceeded").is_empty(),
        "3 h paused do not count"
    );
    h.clock.advance(2 * 3_600_000 + 1);
    h.ok("a.2/x", fan(vec![]));
    h.ok("a.2/continuation", fan(vec![d("y", "rev")]));
    assert_eq!(h.events("delegation_walltime_exceeded").len(), 1);
    finalize_of(&h, "a.2/continuation/continuation");
}

#[test]
fn wall_clock_bound_never_cancels_queued_or_running_work() {
    let mut h = H::fanned(vec![
        d("a", "rev"),
        d("b", "rev").deps(&["a"]),
        d("c", "rev"),
    ]);
    h.start("a");
    h.clock.advance(2 * 3_600_000 + 1);
    h.sweep();
    assert_eq!(h.job("a").state, JobState::Running);
    assert_eq!(h.queued(), ["c"], "a queued leg is not cancelled");
    assert!(
        h.events("delegation_walltime_exceeded").is_empty(),
        "no coordinator fanned out, so nothing trips"
    );
    h.ok("a", approved());
    assert_eq!(
        h.queued(),
        ["b", "c"],
        "a leg admitted before the limit runs"
    );
    h.ok("b", approved());
    h.ok("c", approved());
    h.ok("continuation", fan(vec![d("y", "rev")]));
    h.assert_first_event(
        "delegation_walltime_exceeded",
        "not dispatching 1 delegation(s)",
    );
    assert!(
        h.try_job("continuation/y").is_none(),
        "the new fan-out is dropped"
    );
    let f = finalize_of(&h, "continuation/continuation");
    assert!(
        f.prompt.contains("wall-clock limit of 2h reached"),
        "{}",
        f.prompt
    );
    h.ok("continuation/continuation", approved());
    assert_eq!(h.run().state, RunState::Done);
}

#[test]
fn a_forward_clock_step_neither_ages_nor_cancels_a_tree() {
    let mut h = H::fanned(vec![d("a", "coord"), d("b", "rev")]);
    h.start("a");
    // The daemon's tick sees the tree before the system clock is set 3 h ahead.
    h.sweep();
    h.clock.step(3 * 3_600_000);
    h.sweep();
    assert_eq!(h.job("a").state, JobState::Running);
    assert_eq!(h.queued(), ["b"], "nothing is cancelled by the step");
    h.ok("a", fan(vec![d("x", "rev")]));
    assert!(
        h.events("delegation_walltime_exceeded").is_empty(),
        "a step of the clock is not time the tree ran"
    );
    assert_eq!(h.queued(), ["a/x", "b"]);
    // Time that really passes still counts.
    h.clock.advance(2 * 3_600_000 + 1);
    h.ok("a/x", approved());
    h.ok("a/continuation", fan(vec![d("z", "rev")]));
    assert_eq!(h.events("delegation_walltime_exceeded").len(), 1);
    assert!(h.try_job("a/continuation/z").is_none());
}

#[test]
fn token_and_usd_budgets_trip_with_their_events() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_token_budget = 1000;
    let mut h = H::with_cfg(cfg);
    h.ok_usage("", fan(vec![d("a", "rev")]), 900, 100, 0.0);
    h.assert_first_event(
        "delegation_cost_exceeded",
        "reached token budget 1000 (used 1000)",
    );
    finalize_of(&h, "continuation");

    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_cost_usd = 0.01;
    let mut h = H::with_cfg(cfg);
    // 1000 in + 1000 out on the default (sonnet) price: 0.003 + 0.015 = $0.018.
    h.ok_usage("", fan(vec![d("a", "rev")]), 1000, 1000, 0.0);
    assert!((h.run().cost_usd - 0.018).abs() < 1e-9);
    h.assert_first_event(
        "delegation_cost_usd_exceeded",
        "reached cost budget $0.0100 (spent $0.0180)",
    );
    finalize_of(&h, "continuation");
}

#[test]
fn width_bound_trips() {
    let mut h = H::new();
    let many = (0..17).map(|i| d(&format!("l{i}"), "rev")).collect();
    h.ok("", fan(many));
    h.assert_first_event(
        "delegation_width_exceeded",
        "delegation set width 17 exceeds the per-coordinator limit of 16",
    );
    finalize_of(&h, "continuation");
}

#[test]
fn structural_loop_warns_then_detects() {
    let set = || vec![d("a", "rev"), d("b", "alt").deps(&["a"])];
    let mut h = H::fanned(set());
    h.ok("a", approved());
    let mut b = approved();
    b.changes_made = vec!["one".into()];
    h.ok("b", b);
    h.ok("continuation", fan(set()));
    assert_eq!(h.events("delegation_loop_warning").len(), 1);
    let corr = h.job("continuation/continuation");
    assert!(
        corr.prompt
            .contains("You delegated the same set as a previous round"),
        "{}",
        corr.prompt
    );
    h.ok("continuation/continuation", fan(set()));
    assert_eq!(h.events("delegation_loop_detected").len(), 1);
    finalize_of(&h, "continuation/continuation/continuation");
}

#[test]
fn non_progress_streak_trips_the_ladder() {
    let mut h = H::new();
    let generation = |n: usize| fan(vec![d("a", "rev").prompt(&format!("try {n}"))]);
    h.ok("", generation(0));
    let mut path = String::new();
    for n in 1..=3 {
        let leg = under(&path, "a");
        h.ok(&leg, approved());
        path = under(&path, "continuation");
        if n < 3 {
            h.ok(&path, generation(n));
        }
    }
    assert_eq!(
        h.events("delegation_loop_warning").len(),
        1,
        "gen 2 repeats the digest twice"
    );
    assert!(h.job(&path).prompt.contains("You delegated the same set"));
    h.ok(&path, generation(9));
    let leg = format!("{path}/a");
    h.ok(&leg, approved());
    assert_eq!(h.events("delegation_loop_detected").len(), 1);
    finalize_of(&h, &format!("{path}/continuation"));
}

#[test]
fn new_side_effects_reset_the_streak() {
    let mut h = H::new();
    let generation = |n: usize| fan(vec![d("a", "rev").prompt(&format!("try {n}"))]);
    h.ok("", generation(0));
    let mut path = String::new();
    for n in 1..=4 {
        let leg = under(&path, "a");
        let mut r = approved();
        r.changes_made = vec![format!("file{n}.rs")];
        h.ok(&leg, r);
        path = under(&path, "continuation");
        h.ok(&path, generation(n));
    }
    assert!(h.events("delegation_loop_warning").is_empty());
}

#[test]
fn preflight_failure_lists_valid_agents_then_correction_dispatches() {
    let mut h = H::fanned(vec![d("a", "rev"), d("b", "claude")]);
    let e = &h.events("delegation_preflight_failed")[0].message;
    assert!(
        e.contains(
            "delegation \"b\" preflight failed: \"claude\" is a runtime, not a registered agent"
        ),
        "{e}"
    );
    assert!(
        e.contains("Agents valid for review on acme/api: alt, coord, rev."),
        "{e}"
    );
    assert!(e.contains("ephemeral"), "{e}");
    assert!(h.try_job("a").is_none(), "nothing dispatches");
    assert_eq!(
        h.job("").state,
        JobState::Succeeded,
        "the coordinator stays succeeded"
    );
    let corr = h.job("continuation");
    assert!(
        corr.prompt.contains("registered agent, not a runtime"),
        "{}",
        corr.prompt
    );
    h.ok("continuation", fan(vec![d("a", "rev"), d("b", "alt")]));
    assert_eq!(h.queued(), ["continuation/a", "continuation/b"]);
}

#[test]
fn preflight_names_scope_and_capability_and_is_bounded() {
    let mut h = H::fanned(vec![d("a", "elsewhere")]);
    h.assert_first_event(
        "delegation_preflight_failed",
        "not allowed on repo acme/api",
    );
    h.ok("continuation", fan(vec![d("a", "asker")]));
    assert!(
        h.events("delegation_preflight_failed")[1]
            .message
            .contains("lacks the review capability")
    );
    finalize_of(&h, "continuation/continuation");
}

#[test]
fn fingerprint_dedupe_resolves_dependents_through_the_winner() {
    let mut h = H::fanned(vec![
        d("a", "rev").fp("k"),
        d("b", "rev").fp("k"),
        d("c", "rev").deps(&["b"]),
    ]);
    assert_eq!(h.queued(), ["a"]);
    h.assert_first_event(
        "delegation_deduped",
        "delegation \"b\" skipped: fingerprint \"k\" already enqueued",
    );
    h.ok("a", approved());
    assert_eq!(h.queued(), ["c"]);
    h.ok("c", approved());
    assert!(h.try_job("continuation").is_some());
}

#[test]
fn retries_are_new_attempt_ids_until_exhausted() {
    let mut h = H::fanned(vec![d("a", "rev").retry(2).policy(FailurePolicy::Continue)]);
    h.fail("a", "1");
    assert_eq!(h.queued(), ["a.2"]);
    assert_eq!(h.job("a.2").attempt, 2);
    h.ok("a.2", res(Decision::Blocked));
    assert_eq!(h.queued(), ["a.3"]);
    h.fail("a.3", "3");
    assert_eq!(h.queued(), ["continuation"]);
    assert_eq!(h.events("delegation_retry").len(), 2);
    assert_eq!(h.run().jobs, 5);
}

#[test]
fn ephemeral_legs_are_leaf_only() {
    let mut h = H::fanned(vec![d("Lens A", "x").ephemeral()]);
    let leg = h
        .all()
        .into_iter()
        .find(|j| j.kind == JobKind::Leg)
        .unwrap();
    assert!(leg.agent.starts_with("lens-a-ephemeral-"), "{}", leg.agent);
    assert_eq!(leg.model.as_deref(), Some("gpt-5"));
    assert_eq!(leg.effort.as_deref(), Some("high"));
    assert!(leg.ephemeral.is_some());
    let rel = h.rel(&leg.id);
    h.ok(&rel, fan(vec![d("sub", "rev")]));
    assert_eq!(h.events("delegation_ignored_ephemeral").len(), 1);
    assert_eq!(h.queued(), ["continuation"]);
}

#[test]
fn artifact_bodies_inline_with_caps_and_fences() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.inline_artifact_bodies = true;
    cfg.inline_artifact_max_bytes = 8;
    let mut h = H::fanned_with(cfg, vec![d("a", "rev"), d("b", "rev")]);
    let mut a = approved();
    a.artifact_body = Some("0123456789abcdef".into());
    h.ok("a", a);
    let mut b = approved();
    b.artifact_body = Some("```x```".into());
    h.ok("b", b);
    let p = h.job("continuation").prompt;
    assert!(
        p.contains("  artifact_body:\n```\n01234567\n[... (8 bytes truncated"),
        "{p}"
    );
    assert!(p.contains("````\n```x```\n````"), "{p}");

    let mut h = H::fanned(vec![d("a", "rev")]);
    let mut a = approved();
    a.artifact_body = Some("secret".into());
    h.ok("a", a);
    assert!(
        !h.job("continuation").prompt.contains("artifact_body"),
        "off by default"
    );
}

#[test]
fn upstream_context_injects_succeeded_deps_with_caps() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.inject_upstream_dep_context = true;
    cfg.inline_artifact_max_bytes = 4;
    let mut h = H::fanned_with(
        cfg,
        vec![
            d("b", "rev"),
            d("a", "rev"),
            d("c", "rev").deps(&["b", "a"]),
        ],
    );
    let mut a = summary(approved(), &"x".repeat(300));
    a.changes_made = vec!["f.rs".into()];
    a.artifact_body = Some("abcdefgh".into());
    h.ok("a", a);
    h.ok("b", summary(approved(), "b ok"));
    let p = h.job("c").prompt;
    assert!(p.starts_with("do c\n\nUpstream dependency results:\n- dep \"a\" (agent rev, action review): approved — "), "{p}");
    assert!(
        p.contains(&format!("{}… [changes_made: 1]\n", "x".repeat(280))),
        "{p}"
    );
    assert!(p.contains("abcd\n[... (4 bytes truncated"), "{p}");
    let a_at = p.find("dep \"a\"").unwrap();
    let b_at = p.find("dep \"b\"").unwrap();
    assert!(a_at < b_at, "sorted by id");
}

#[test]
fn timeouts_follow_precedence() {
    use gitmoot::config::Duration;
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.default_delegation_timeout = Some(Duration(1));
    cfg.default_review_timeout = Some(Duration(2));
    cfg.default_plan_timeout = Some(Duration(3));
    let mut h = H::with_cfg(cfg);
    let mut explicit = d("e", "rev");
    explicit.timeout_ms = Some(9);
    let mut plan = d("p", "rev");
    plan.phase = Some("plan".into());
    let mut ask = d("q", "rev");
    ask.action = gitmoot::domain::Action::Ask;
    h.ok("", fan(vec![explicit, plan, d("r", "rev"), ask]));
    assert_eq!(h.job("e").timeout_ms, Some(9));
    assert_eq!(h.job("p").timeout_ms, Some(3));
    assert_eq!(h.job("r").timeout_ms, Some(2));
    assert_eq!(h.job("q").timeout_ms, Some(1));
}

#[test]
fn ask_gate_answer_multi_line_and_unmatched_ids() {
    let mut h = H::new();
    h.ok(
        "",
        asking(
            approved(),
            &[("q1", "Which branch?"), ("q2", "Ship today?")],
        ),
    );
    assert_eq!(h.run().state, RunState::AwaitingHuman);
    let pending = gitmoot::engine::pending(&h.store.conn()).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].questions[1].prompt, "Ship today?");
    h.clock.advance(5_000);
    let next = h
        .answer("", "q1: main\nand tag it\nq3: typo id\nq2: yes")
        .unwrap();
    assert_eq!(next, Some(h.id("continuation")));
    let p = h.job("continuation").prompt;
    assert!(p.contains("Human answers to your questions (you paused to ask these; use them and proceed):\n- q1 — Which branch?\n  answer: main\nand tag it\n- q2 — Ship today?\n  answer: yes\n"), "{p}");
    assert!(p.contains("Unmatched answer ids (no such question; treat as additional human guidance):\n- q3: typo id"), "{p}");
    assert_eq!(h.run().state, RunState::Running);
    assert_eq!(h.run().paused_ms, 5_000);
    assert_eq!(h.events("delegation_ask_answered").len(), 1);
}

#[test]
fn single_question_takes_a_bare_answer() {
    let mut h = H::new();
    h.ok("", asking(approved(), &[("q1", "Which?")]));
    h.answer("", "the blue one").unwrap();
    assert!(
        h.job("continuation")
            .prompt
            .contains("  answer: the blue one")
    );
}

#[test]
fn ttl_auto_finalizes_unanswered_rounds() {
    let mut h = H::new();
    h.ok("", asking(approved(), &[("q1", "Which?")]));
    h.clock.advance(24 * 3_600_000 - 1);
    assert!(h.sweep().expired_rounds.is_empty());
    h.clock.advance(1);
    assert_eq!(h.sweep().expired_rounds.len(), 1);
    let f = finalize_of(&h, "continuation");
    assert!(
        f.prompt
            .contains("escalation TTL of 1d elapsed with no human response"),
        "{}",
        f.prompt
    );
    assert_eq!(h.run().state, RunState::Running);
    assert!(
        gitmoot::engine::pending(&h.store.conn())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn kill_cancels_queued_legs_lets_running_finish_then_one_finalize() {
    let mut h = H::fanned(vec![
        d("a", "rev"),
        d("b", "rev"),
        d("c", "rev").deps(&["a"]),
    ]);
    h.start("a");
    let rep = h.kill(false);
    assert_eq!(rep.cancelled, [h.id("b")]);
    assert_eq!(rep.running, [h.id("a")]);
    assert!(
        gitmoot::engine::jobs_to_terminate(&h.store.conn())
            .unwrap()
            .is_empty(),
        "graceful kill terminates nothing"
    );
    let b = gitmoot::store::jobs::require(h.store.conn(), &h.id("b")).unwrap();
    assert!(!gitmoot::engine::may_start(&h.store.conn(), &b).unwrap());
    h.ok("a", approved());
    assert!(h.try_job("c").is_none());
    let f = finalize_of(&h, "continuation");
    assert!(f.prompt.contains("delegation tree killed by operator"));
    h.ok("continuation", fan(vec![d("z", "rev")]));
    assert_eq!(h.run().state, RunState::Killed);
    assert_eq!(h.job("b").state, JobState::Cancelled);
}

#[test]
fn kill_force_lists_running_jobs_for_termination() {
    let mut h = H::fanned(vec![d("a", "rev")]);
    h.start("a");
    h.kill(true);
    assert_eq!(
        gitmoot::engine::jobs_to_terminate(&h.store.conn()).unwrap(),
        [h.id("a")]
    );
    h.fail("a", "terminated by operator");
    assert!(
        gitmoot::engine::jobs_to_terminate(&h.store.conn())
            .unwrap()
            .is_empty()
    );
    h.ok("continuation", approved());
    assert_eq!(h.run().state, RunState::Killed);
}

#[test]
fn kill_with_nothing_left_to_run_ends_at_once() {
    let mut h = H::new();
    let rep = h.kill(false);
    assert_eq!(rep.cancelled, [h.root.clone()]);
    assert_eq!(h.run().state, RunState::Killed);
    let e = {
        let root = h.root.clone();
        let env = engine_support::env(&h.clock, &h.cfg);
        h.store
            .write(|tx| gitmoot::engine::kill_root(tx, env, &root, false))
            .unwrap_err()
    };
    assert!(e.to_string().contains("is already killed"), "{e}");
}

#[test]
fn cancel_a_queued_leg_moves_the_batch_on() {
    let mut h = H::fanned(vec![
        d("a", "rev").policy(FailurePolicy::Continue),
        d("b", "rev"),
    ]);
    let id = h.id("a");
    let env = engine_support::env(&h.clock, &h.cfg);
    h.store
        .write(|tx| gitmoot::engine::cancel_job(tx, env, &id))
        .unwrap();
    h.ok("b", approved());
    assert!(h.job("continuation").prompt.contains("cancelled"));
    let id = h.id("a");
    let env = engine_support::env(&h.clock, &h.cfg);
    let e = h
        .store
        .write(|tx| gitmoot::engine::cancel_job(tx, env, &id))
        .unwrap_err();
    assert!(e.to_string().contains("is already cancelled"));
}

#[test]
fn run_totals_stay_current_and_unknown_models_are_priced() {
    let mut h = H::new();
    h.ok_usage("", fan(vec![d("a", "rev")]), 10, 5, 0.5);
    h.ok_usage("a", approved(), 1_000_000, 0, 0.0);
    let run = h.run();
    assert_eq!(run.tokens, 1_000_015);
    assert!((run.cost_usd - 3.5).abs() < 1e-9, "{}", run.cost_usd);
    assert_eq!(run.jobs, 3);
}

#[test]
fn legs_naming_artifacts_receive_the_coordinators_brief_capped() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.inline_artifact_max_bytes = 5;
    let mut h = H::with_cfg(cfg);
    let mut with_art = d("a", "rev");
    with_art.artifacts = vec!["plan.md".into()];
    let mut r = fan(vec![with_art, d("b", "rev")]);
    r.artifact_body = Some("the plan body".into());
    h.ok("", r);
    let p = h.job("a").prompt;
    assert!(p.starts_with(&format!("do a\n\nDelegation artifacts (plan.md) from job {}:\n  artifact_body:\n```\nthe p\n[... (8 bytes truncated", h.root)), "{p}");
    assert_eq!(
        h.job("b").prompt,
        "do b",
        "legs without artifacts get nothing"
    );
}

#[test]
fn failure_round_ttl_finalizes_once_the_batch_is_quiet() {
    let mut h = H::fanned(vec![
        d("a", "rev").policy(FailurePolicy::EscalateHuman),
        d("b", "rev"),
        d("c", "rev").deps(&["b"]),
    ]);
    h.fail("a", "x");
    h.clock.advance(24 * 3_600_000);
    assert_eq!(h.sweep().expired_rounds.len(), 1);
    assert!(h.try_job("continuation").is_none(), "b is still queued");
    h.ok("b", approved());
    assert!(h.try_job("c").is_none(), "no new legs after the TTL");
    let f = finalize_of(&h, "continuation");
    assert!(
        f.prompt.contains("escalation TTL of 1d elapsed"),
        "{}",
        f.prompt
    );
    assert_eq!(h.run().paused_ms, 24 * 3_600_000);
}

#[test]
fn an_ask_and_a_failure_round_coexist_without_duplicates() {
    let mut h = H::fanned(vec![
        d("a", "rev"),
        d("b", "rev").policy(FailurePolicy::EscalateHuman),
        d("c", "rev"),
    ]);
    h.ok("a", asking(approved(), &[("q1", "?")]));
    h.fail("b", "x");
    h.ok("c", approved());
    let rounds = h.open_rounds();
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    h.answer("", "q1: fine").unwrap();
    assert!(
        h.try_job("continuation").is_none(),
        "the failure round still holds it"
    );
    h.resume("", ResumeVerb::Continue, None).unwrap();
    let p = h.job("continuation").prompt;
    assert!(p.contains("answer: fine") && p.contains("\"b\""), "{p}");
}

#[test]
fn a_straggler_settling_after_the_run_ended_changes_nothing() {
    let mut h = H::fanned(vec![d("a", "rev"), d("b", "rev")]);
    h.start("b");
    h.fail("a", "boom");
    assert_eq!(h.run().state, RunState::Blocked);
    h.ok("b", fan(vec![d("late", "rev")]));
    assert!(h.try_job("b/late").is_none());
    assert_eq!(h.run().state, RunState::Blocked);
}
