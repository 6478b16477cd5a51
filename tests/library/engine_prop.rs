//! Property: random batches (random deps DAGs, outcomes, policies, rules, retries, human
//! actions and kills) always reach a terminal run state, never enqueue two continuations
//! for one coordinator, and never exceed the job, depth or width bounds.
#![allow(clippy::field_reassign_with_default)] // configs read best as "default, then this knob"

use super::engine_support;

use engine_support::*;
use gitmoot::contract::{Decision, Delegation, FailurePolicy, SynthesisRule};
use gitmoot::domain::{JobKind, JobState};
use gitmoot::engine::{Outcome, ResumeVerb, Usage};
use gitmoot::store::escalations::RoundKind;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct LegSpec {
    deps: u8,
    policy: u8,
    rule: u8,
    retry: u32,
}

fn batch(specs: &[LegSpec]) -> Vec<Delegation> {
    let n = specs.len();
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let deps: Vec<String> = (0..i)
                .filter(|j| s.deps & (1 << j) != 0)
                .map(|j| format!("l{j}"))
                .collect();
            let mut leg = d(&format!("l{i}"), "rev")
                .retry(s.retry)
                .policy(match s.policy % 4 {
                    0 => FailurePolicy::BlockParent,
                    1 => FailurePolicy::Continue,
                    2 => FailurePolicy::Escalate,
                    _ => FailurePolicy::EscalateHuman,
                });
            leg.deps = deps;
            match s.rule % 5 {
                1 => leg.rule(SynthesisRule::Vote),
                2 => leg.quorum(1 + (s.deps as u32 % n as u32)),
                3 => leg.rule(SynthesisRule::Verify),
                _ => leg,
            }
        })
        .collect()
}

fn leg_spec() -> impl Strategy<Value = LegSpec> {
    (any::<u8>(), 0u8..4, 0u8..5, 0u32..2).prop_map(|(deps, policy, rule, retry)| LegSpec {
        deps,
        policy,
        rule,
        retry,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_trees_always_end_within_bounds(
        specs in prop::collection::vec(leg_spec(), 1..6),
        choices in prop::collection::vec(any::<u8>(), 64),
        kill_at in prop::option::of(0usize..40),
        max_jobs in 6u32..20,
    ) {
        let mut cfg = gitmoot::config::OrchestrateConfig::default();
        cfg.max_delegation_total_jobs = max_jobs;
        cfg.max_delegation_depth = 3;
        let mut h = H::with_cfg(cfg);
        let set = batch(&specs);
        let mut k = 0usize;
        let mut next = || { k += 1; choices[k % choices.len()] };
        h.ok("", fan(set.clone()));
        let mut ended = false;
        for step in 0..400 {
            if Some(step) == kill_at && !h.run().state.is_terminal() {
                h.kill(next() % 2 == 0);
            }
            if h.run().state.is_terminal() {
                ended = true;
                break;
            }
            let queued: Vec<_> = h.all().into_iter().filter(|j| j.state == JobState::Queued).collect();
            let Some(job) = queued.first() else {
                let rounds = h.open_rounds();
                match rounds.first() {
                    Some(_) if next() % 5 == 0 => {
                        h.clock.advance(24 * 3_600_000);
                        h.sweep();
                    }
                    Some(r) if r.kind == RoundKind::Ask => {
                        let rel = h.rel(&r.job_id);
                        h.answer(&rel, "q1: go").unwrap();
                    }
                    Some(r) => {
                        let rel = h.rel(&r.job_id);
                        let verb = [ResumeVerb::Retry, ResumeVerb::Continue, ResumeVerb::Abort][next() as usize % 3];
                        if h.resume(&rel, verb, None).is_err() {
                            h.resume(&rel, ResumeVerb::Continue, None).unwrap();
                        }
                    }
                    None => {
                        h.sweep();
                        prop_assert!(h.run().state.is_terminal(), "stalled: nothing queued, no round, run {}", h.run().state);
                    }
                }
                continue;
            };
            let rel = h.rel(&job.id);
            let c = next();
            let outcome = match c % 9 {
                0 | 1 => Outcome::Parsed(approved()),
                2 => Outcome::Parsed(res(Decision::ChangesRequested)),
                3 => Outcome::Parsed(res(Decision::Skipped)),
                4 => Outcome::Parsed(res(Decision::Failed)),
                5 => Outcome::Parsed(res(Decision::Blocked)),
                6 => Outcome::Failed("runtime error".into()),
                7 => Outcome::Parsed(asking(approved(), &[("q1", "?")])),
                _ if job.kind == JobKind::Leg => Outcome::Parsed(fan(vec![d("x", "rev")])),
                _ => Outcome::Parsed(fan(set.clone())),
            };
            let id = h.id(&rel);
            h.settle_usage(&id, outcome, Usage { tokens_in: 10, tokens_out: 10, cost_usd: 0.0 });
        }
        prop_assert!(ended, "run did not end: {}", h.run().state);
        let all = h.all();
        for j in &all {
            let conts = all.iter().filter(|c| c.parent_id.as_deref() == Some(j.id.as_str()) && matches!(c.kind, JobKind::Continuation | JobKind::Finalize)).count();
            prop_assert!(conts <= 1, "{} has {conts} continuations", j.id);
            prop_assert!(j.kind != JobKind::Leg || j.depth <= 3, "{} at depth {}", j.id, j.depth);
            let width = all.iter().filter(|c| c.parent_id.as_deref() == Some(j.id.as_str()) && c.kind == JobKind::Leg && c.attempt == 1).count();
            prop_assert!(width <= 16);
        }
        let counted = all.iter().filter(|j| matches!(j.kind, JobKind::Root | JobKind::Leg)).count() as u32;
        prop_assert!(counted <= max_jobs, "{counted} root+leg jobs over a budget of {max_jobs}");
        prop_assert!(all.len() as u32 <= max_jobs, "{} jobs (continuations and finalizes included) over a budget of {max_jobs}: {:?}", all.len(), all.iter().map(|j| (h.rel(&j.id), j.kind, j.state)).collect::<Vec<_>>());
        prop_assert_eq!(h.run().jobs as usize, all.len());
        prop_assert!(all.iter().all(|j| j.state.is_terminal()), "a job is left live in an ended run");
    }
}
