//! SPEC §5's seven engine invariants, one named test each, plus the hooks contract.
#![allow(clippy::field_reassign_with_default)] // configs read best as "default, then this knob"

use super::engine_support;

use std::sync::Mutex;

use engine_support::*;
use gitmoot::clock::Clock;
use gitmoot::contract::{Decision, FailurePolicy};
use gitmoot::domain::{JobKind, JobState, RunState};
use gitmoot::engine::{EngineError, Hooks, ResumeVerb};
use gitmoot::store::Tx;
use gitmoot::store::escalations;
use gitmoot::store::jobs::Job;

#[test]
fn invariant_1_open_ask_round_holds_the_continuation() {
    let mut h = H::fanned(vec![d("a", "rev"), d("b", "rev")]);
    h.ok(
        "a",
        asking(
            summary(approved(), "a needs a call"),
            &[("q1", "Keep the old API?")],
        ),
    );
    assert_eq!(h.run().state, RunState::AwaitingHuman);
    h.ok("b", summary(approved(), "b is done"));
    assert!(
        h.try_job("continuation").is_none(),
        "every leg is done but the round is open"
    );
    let next = h.answer("", "q1: keep it").unwrap();
    assert_eq!(next, Some(h.id("continuation")));
    let p = h.job("continuation").prompt;
    assert!(p.contains("answer: keep it"), "{p}");
    assert!(
        p.contains("approved — a needs a call") && p.contains("approved — b is done"),
        "{p}"
    );
}

#[test]
fn invariant_1_answer_before_the_legs_finish_waits_for_them() {
    let mut h = H::fanned(vec![d("a", "rev"), d("b", "rev")]);
    h.ok("a", asking(approved(), &[("q1", "?")]));
    assert_eq!(
        h.answer("a", "q1: go").unwrap(),
        None,
        "the asking leg's id finds the round"
    );
    assert!(h.try_job("continuation").is_none());
    h.ok("b", approved());
    assert!(h.job("continuation").prompt.contains("answer: go"));
}

#[test]
fn invariant_2_every_asker_gets_its_own_answer_continuation() {
    let mut h = H::fanned(vec![d("a", "rev"), d("b", "rev")]);
    h.ok("a", asking(approved(), &[("qa", "A?")]));
    h.ok("b", asking(approved(), &[("qb", "B?")]));
    let rounds = h.open_rounds();
    assert_eq!(rounds.len(), 1, "siblings share one round");
    assert_eq!(
        rounds[0].questions.as_array().unwrap().len(),
        2,
        "no question dropped"
    );
    h.answer("", "qa: 1\nqb: 2").unwrap();
    let p = h.job("continuation").prompt;
    assert!(
        p.contains("- qa — A?\n  answer: 1") && p.contains("- qb — B?\n  answer: 2"),
        "{p}"
    );

    // The continuation itself asks: the round is its own, and so is the answer continuation.
    h.ok("continuation", asking(approved(), &[("q2", "Again?")]));
    assert_eq!(h.open_rounds()[0].job_id, h.id("continuation"));
    h.answer("continuation", "q2: yes").unwrap();
    let c2 = h.job("continuation/continuation");
    assert!(
        c2.prompt.contains("- q2 — Again?\n  answer: yes"),
        "{}",
        c2.prompt
    );
    h.ok("continuation/continuation", approved());
    assert_eq!(h.run().state, RunState::Done);
}

#[test]
fn invariant_3_every_retry_is_a_new_job_counted_against_the_budget() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_total_jobs = 5;
    let mut h = H::fanned_with(
        cfg,
        vec![d("a", "rev").retry(1).policy(FailurePolicy::EscalateHuman)],
    );
    h.fail("a", "1");
    assert_eq!(h.job("a.2").attempt, 2, "automatic retry");
    h.fail("a.2", "2");
    h.resume("", ResumeVerb::Retry, None).unwrap();
    h.fail("a.3", "3");
    let ids: Vec<String> = h.all().into_iter().map(|j| j.id).collect();
    let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(ids.len(), unique.len());
    assert_eq!(h.run().jobs, 4, "root + 3 attempts");
    // The fifth job is the tree's finalize slot, so no retry may take it.
    let e = h
        .resume("", ResumeVerb::Retry, Some("last try"))
        .unwrap_err();
    assert!(e.contains("per-root job budget of 5 is reached"), "{e}");
    assert_eq!(h.run().jobs, 4);
    h.resume("", ResumeVerb::Continue, None).unwrap();
    assert_eq!(h.job("continuation").kind, JobKind::Finalize);
    assert_eq!(h.run().jobs, 5, "the finalize fills the budget exactly");
}

#[test]
fn invariant_4_a_killed_tree_always_ends() {
    // Queued, running and paused parts at once.
    let mut h = H::fanned(vec![
        d("a", "rev"),
        d("b", "rev").policy(FailurePolicy::EscalateHuman),
        d("c", "rev"),
    ]);
    h.start("a");
    h.fail("b", "x");
    assert_eq!(h.run().state, RunState::AwaitingHuman);
    h.kill(false);
    assert!(h.open_rounds().is_empty(), "kill closes the round");
    assert_eq!(h.job("c").state, JobState::Cancelled);
    assert!(h.try_job("continuation").is_none(), "a is still running");
    h.ok("a", approved());
    let finals: Vec<Job> = h
        .all()
        .into_iter()
        .filter(|j| j.kind == JobKind::Finalize)
        .collect();
    assert_eq!(finals.len(), 1);
    h.ok("continuation", approved());
    assert_eq!(h.run().state, RunState::Killed);

    // Nothing left to run: only waiting legs behind a queued one.
    let mut h = H::fanned(vec![d("a", "rev"), d("b", "rev").deps(&["a"])]);
    h.kill(false);
    assert_eq!(h.job("continuation").kind, JobKind::Finalize);
    h.ok("continuation", approved());
    assert_eq!(h.run().state, RunState::Killed);
}

#[test]
fn invariant_5_failed_or_blocked_continuation_blocks_the_run() {
    for outcome in ["failed", "blocked"] {
        let mut h = H::fanned(vec![d("a", "rev")]);
        h.ok("a", approved());
        if outcome == "failed" {
            h.fail("continuation", "runtime crashed");
        } else {
            h.ok("continuation", res(Decision::Blocked));
        }
        assert_eq!(h.run().state, RunState::Blocked, "{outcome}");
    }
    let mut h = H::new();
    h.fail("", "root crashed");
    assert_eq!(
        h.run().state,
        RunState::Failed,
        "only the root's own failure fails the run"
    );
}

#[test]
fn invariant_6_a_delegating_leg_settles_only_with_its_subtree() {
    let mut h = H::fanned(vec![d("a", "coord"), d("b", "rev").deps(&["a"])]);
    h.ok("a", fan(vec![d("x", "rev")]));
    assert!(h.try_job("b").is_none(), "a's subtree is still open");
    h.ok("a/x", approved());
    assert!(h.try_job("b").is_none(), "a's continuation has not run");
    h.ok(
        "a/continuation",
        summary(res(Decision::ChangesRequested), "a's synthesis"),
    );
    assert!(
        h.try_job("b").is_some(),
        "a settled through its last continuation"
    );
    h.ok("b", approved());
    let p = h.job("continuation").prompt;
    assert!(
        p.contains(&format!("- delegation \"a\" (job {}/a/continuation, agent coord): changes_requested — a's synthesis", h.root)),
        "{p}"
    );
}

#[test]
fn invariant_6_a_blocked_subtree_fails_its_leg() {
    let mut h = H::fanned(vec![
        d("a", "coord").policy(FailurePolicy::Continue),
        d("b", "rev"),
    ]);
    h.ok("a", fan(vec![d("x", "rev")]));
    h.fail("a/x", "no");
    h.ok("b", approved());
    let p = h.job("continuation").prompt;
    assert!(p.contains("\"a\"") && p.contains("blocked"), "{p}");
}

#[test]
fn invariant_7_prompts_state_goal_legs_and_budget_pressure() {
    let mut cfg = gitmoot::config::OrchestrateConfig::default();
    cfg.max_delegation_total_jobs = 5;
    let mut h = H::fanned_with(cfg, vec![d("a", "rev"), d("b", "rev")]);
    h.ok("a", summary(approved(), "alpha"));
    h.ok("b", summary(res(Decision::ChangesRequested), "beta"));
    let p = h.job("continuation").prompt;
    assert!(
        p.starts_with("Original goal:\nShip the release notes\n\n"),
        "{p}"
    );
    assert!(
        p.contains("): approved — alpha") && p.contains("): changes_requested — beta"),
        "{p}"
    );
    assert!(p.contains("You are at depth 1/8 and 3/5 jobs — prefer finishing (synthesize now) over re-delegating."), "{p}");

    h.ok("continuation", fan(vec![d("c", "rev"), d("d", "rev")]));
    let f = h.job("continuation/continuation");
    assert_eq!(f.kind, JobKind::Finalize);
    assert!(
        f.prompt
            .starts_with("Original goal:\nShip the release notes\n\n"),
        "{}",
        f.prompt
    );
    assert!(
        f.prompt.contains("You are at depth 2/8 and 4/5 jobs"),
        "{}",
        f.prompt
    );

    let mut far = H::new();
    far.ok("", fan(vec![d("a", "rev")]));
    far.ok("a", approved());
    assert!(
        !far.job("continuation").prompt.contains("You are at depth"),
        "no pressure far from bounds"
    );
}

#[derive(Default)]
struct Recorder {
    finished: Mutex<Vec<String>>,
    asked: Mutex<Vec<(String, i64, bool)>>,
}

impl Hooks for Recorder {
    fn job_finished(&self, _tx: &Tx<'_>, _c: &dyn Clock, job: &Job) -> Result<(), EngineError> {
        assert!(job.state.is_terminal());
        self.finished.lock().unwrap().push(job.id.clone());
        Ok(())
    }
    fn ask_round_opened(
        &self,
        tx: &Tx<'_>,
        _c: &dyn Clock,
        job: &Job,
        id: i64,
    ) -> Result<(), EngineError> {
        let written = escalations::get(tx, id)?.is_some();
        self.asked
            .lock()
            .unwrap()
            .push((job.id.clone(), id, written));
        Ok(())
    }
}

#[test]
fn hooks_see_every_terminal_job_and_each_opened_ask_round() {
    let mut h = H::new();
    let rec = Recorder::default();
    let root = h.root.clone();
    let settle = |h: &mut H, id: &str, r| {
        let env = gitmoot::engine::Env {
            clock: &h.clock,
            cfg: &h.cfg,
            hooks: &rec,
        };
        let s = gitmoot::engine::Settlement::of(gitmoot::engine::Outcome::Parsed(r));
        h.store
            .write(|tx| gitmoot::engine::settle(tx, env, id, s))
            .unwrap();
    };
    settle(&mut h, &root, fan(vec![d("a", "rev"), d("b", "rev")]));
    settle(
        &mut h,
        &format!("{root}/a"),
        asking(approved(), &[("q", "?")]),
    );
    let b = format!("{root}/b");
    let env = gitmoot::engine::Env {
        clock: &h.clock,
        cfg: &h.cfg,
        hooks: &rec,
    };
    h.store
        .write(|tx| gitmoot::engine::cancel_job(tx, env, &b))
        .unwrap();
    assert_eq!(
        *rec.finished.lock().unwrap(),
        [root.clone(), format!("{root}/a"), format!("{root}/b")]
    );
    let asked = rec.asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, root, "the round holds the coordinator");
    assert!(asked[0].2, "the escalations row exists when the hook runs");
}

#[test]
fn invariant_4_a_queued_continuation_becomes_the_one_finalize() {
    let mut h = H::fanned(vec![d("a", "rev")]);
    h.ok("a", approved());
    assert_eq!(h.job("continuation").kind, JobKind::Continuation);
    h.kill(false);
    let f = h.job("continuation");
    assert_eq!(f.kind, JobKind::Finalize);
    assert!(
        f.prompt.contains("(delegation tree killed by operator)"),
        "{}",
        f.prompt
    );
    assert_eq!(h.events("delegation_finalize_enqueued").len(), 1);
    h.ok("continuation", fan(vec![d("b", "rev")]));
    assert_eq!(h.events("delegation_finalized").len(), 1);
    assert_eq!(h.run().state, RunState::Killed);
    assert_eq!(
        h.all()
            .iter()
            .filter(|j| j.kind == JobKind::Finalize)
            .count(),
        1
    );
}

#[test]
fn invariant_4_a_running_root_that_delegates_after_kill_finalizes() {
    let mut h = H::new();
    h.start("");
    h.kill(false);
    h.ok("", fan(vec![d("a", "rev")]));
    assert_eq!(
        h.events("delegation_killed").len(),
        2,
        "kill, then the refused dispatch"
    );
    assert!(h.try_job("a").is_none());
    h.ok("continuation", approved());
    assert_eq!(h.run().state, RunState::Killed);
}
