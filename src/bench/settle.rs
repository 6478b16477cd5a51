//! `bench_settle`: the store work of settling one leg in a tree of 64 jobs, measured on a
//! real SQLite file, for `gitmoot bench`.

use std::time::Instant;

use crate::clock::ManualClock;
use crate::config::OrchestrateConfig;
use crate::contract::{Decision, Delegation, FailurePolicy, GitmootResult};
use crate::domain::{Action, JobState};
use crate::engine::{
    EngineError, Env, NoHooks, Outcome, Settlement, SubmitRoot, Usage, settle, submit_root,
};
use crate::store::agents;
use crate::store::{Store, jobs};

fn result(decision: Decision, delegations: Vec<Delegation>) -> GitmootResult {
    GitmootResult {
        delegations,
        ..GitmootResult::new(decision, "bench")
    }
}

fn leg(id: String) -> Delegation {
    Delegation {
        failure_policy: FailurePolicy::Continue,
        ..Delegation::to_agent(id, "bench", Action::Ask, "work")
    }
}

/// Median, p90 and worst time to settle one leg of a 64-job tree (4 coordinators × 15 legs).
pub fn bench_settle() -> super::Measured {
    super::in_scratch("settle", |dir| run(&dir.join("bench.db")))
        .map_err(|e| super::Failure::new("settle_in_tree_of_64", format!("error: {e}")))
}

fn run(path: &std::path::Path) -> Result<Vec<(String, String)>, EngineError> {
    let mut store = Store::open(path)?;
    let clock = ManualClock::new(1_000_000);
    let cfg = OrchestrateConfig {
        max_delegation_width: 16,
        // The tree of 64 plus the one job the budget keeps for its finalize.
        max_delegation_total_jobs: 65,
        ..OrchestrateConfig::default()
    };
    store
        .write(|tx| agents::insert(tx, &super::seeded_agent("bench")).map_err(EngineError::from))?;
    let root = store.write(|tx| {
        submit_root(
            tx,
            &clock,
            SubmitRoot::new("bench", Action::Ask, "bench goal", "bench"),
        )
    })?;
    let settle_one = |store: &mut Store, id: &str, r: GitmootResult| {
        store.write(|tx| {
            let env = Env {
                clock: &clock,
                cfg: &cfg,
                hooks: &NoHooks,
            };
            let usage = Usage {
                tokens_in: 100,
                tokens_out: 50,
                cost_usd: 0.0,
            };
            settle(
                tx,
                env,
                id,
                Settlement {
                    usage,
                    ..Settlement::of(Outcome::Parsed(r))
                },
            )
        })
    };
    // Root fans out to 3 coordinators; each fans out to 15 legs: 1 + 3 + 45 = 49 jobs,
    // then one more coordinator of 14 legs brings the tree to 64.
    let coords: Vec<Delegation> = (0..4).map(|i| leg(format!("c{i}"))).collect();
    settle_one(&mut store, &root, result(Decision::Approved, coords))?;
    for i in 0..4 {
        let width = if i == 3 { 14 } else { 15 };
        let legs = (0..width).map(|k| leg(format!("l{k}"))).collect();
        settle_one(
            &mut store,
            &format!("{root}/c{i}"),
            result(Decision::Approved, legs),
        )?;
    }
    let queued: Vec<String> = jobs::by_root_in_state(store.conn(), &root, JobState::Queued)?
        .into_iter()
        .map(|j| j.id)
        .collect();
    let total = jobs::by_root(store.conn(), &root)?.len();
    let mut times = Vec::new();
    for id in queued.iter().filter(|id| !id.ends_with("/l0")) {
        let t = Instant::now();
        settle_one(&mut store, id, result(Decision::Approved, vec![]))?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let p90 = times.get(times.len() * 9 / 10).copied().unwrap_or(0.0);
    let worst = times.last().copied().unwrap_or(0.0);
    Ok(vec![
        ("settle_tree_jobs".into(), total.to_string()),
        ("settle_one_job_median_ms".into(), format!("{median:.3}")),
        ("settle_one_job_p90_ms".into(), format!("{p90:.3}")),
        // The worst sample includes SQLite's WAL auto-checkpoint, which is disk I/O.
        ("settle_one_job_max_ms".into(), format!("{worst:.3}")),
        ("settle_samples".into(), times.len().to_string()),
    ])
}
