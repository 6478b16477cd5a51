//! Human gates the operator must be able to trust: questions open an ask-gate whatever the
//! result's decision (the contract lets any healthy result ask), and a human's abort is
//! the run's recorded outcome — not a success — after the graceful finalize ran.

use super::engine_support;

use engine_support::*;
use gitmoot::contract::{Decision, FailurePolicy};
use gitmoot::domain::{JobKind, RunState};
use gitmoot::engine::ResumeVerb;

/// A root result with any decision and one question: the gate opens, the run waits for a
/// human, `job pending` lists it, an event carries the question, and the answer moves on.
#[test]
fn questions_open_a_gate_whatever_the_decision() {
    for &decision in EVERY_DECISION {
        let mut h = H::new();
        h.ok("", asking(res(decision), &[("q1", "Which database?")]));
        assert_eq!(h.run().state, RunState::AwaitingHuman, "{decision:?}");
        let pending = gitmoot::engine::pending(&h.store.conn()).unwrap();
        assert_eq!(pending.len(), 1, "{decision:?}");
        assert_eq!(
            pending[0].questions[0].prompt, "Which database?",
            "{decision:?}"
        );
        let ev = h.events("delegation_escalation_requested");
        assert_eq!(ev.len(), 1, "{decision:?}");
        assert!(
            ev[0].data.as_ref().unwrap()["question"]
                .as_str()
                .unwrap()
                .contains("q1: Which database?"),
            "{decision:?}"
        );
        let next = h.answer("", "q1: sqlite").unwrap();
        assert_eq!(next, Some(h.id("continuation")), "{decision:?}");
        assert!(
            h.job("continuation").prompt.contains("answer: sqlite"),
            "{decision:?}"
        );
        assert_eq!(h.run().state, RunState::Running, "{decision:?}");
    }
}

#[test]
fn a_blocked_leg_with_questions_asks_its_coordinator_human() {
    let mut h = H::new();
    h.ok("", fan(vec![d("a", "rev")]));
    h.ok("a", asking(res(Decision::Blocked), &[("q1", "Go on?")]));
    assert_eq!(h.run().state, RunState::AwaitingHuman);
    let rounds = h.open_rounds();
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0].job_id, h.root);
    assert!(h.answer("", "q1: yes").is_ok());
}

/// Fan out one escalate_human leg, fail it, and resolve the failure round with `verb`; then
/// the continuation (a finalize for abort) approves.
fn resolve_failure(verb: ResumeVerb) -> H {
    let mut h = H::new();
    h.ok(
        "",
        fan(vec![d("a", "rev").policy(FailurePolicy::EscalateHuman)]),
    );
    h.fail("a", "x");
    h.resume("", verb, None).unwrap();
    h.start("continuation");
    h.ok("continuation", approved());
    h
}

#[test]
fn an_aborted_run_ends_aborted_after_its_finalize() {
    let h = resolve_failure(ResumeVerb::Abort);
    assert_eq!(h.job("continuation").kind, JobKind::Finalize);
    assert_eq!(h.run().state, RunState::Aborted);
    let finished = h.events("run_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].message, "run aborted");
}

#[test]
fn a_continued_run_still_ends_done() {
    let h = resolve_failure(ResumeVerb::Continue);
    assert_eq!(h.job("continuation").kind, JobKind::Continuation);
    assert_eq!(h.run().state, RunState::Done);
}
