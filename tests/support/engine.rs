//! Shared harness of the engine scenario tests: a store on the backend the suite's module
//! names (`on_sqlite::H` a real SQLite file in a temp dir, `on_postgres::H` a database on
//! a throwaway PostgreSQL cluster), a manual clock, registered agents, and builders for
//! scripted results.

use std::marker::PhantomData;

pub use crate::pg;
use crate::pg::OnBackend;

use gitmoot::clock::ManualClock;
use gitmoot::config::OrchestrateConfig;
use gitmoot::contract::{
    Decision, Delegation, EphemeralSpec, FailurePolicy, GitmootResult, HumanQuestion, SynthesisRule,
};
use gitmoot::domain::{Action, AutonomyPolicy, Capability, JobState, RuntimeKind};
use gitmoot::engine::{self, Env, NoHooks, Outcome, Settlement, SubmitRoot, Usage};
use gitmoot::store::agents::{self, Agent};
use gitmoot::store::events::{self, Event};
use gitmoot::store::jobs::{self, Job};
use gitmoot::store::runs::{self, Run};
use gitmoot::store::{Store, escalations};

pub const T0: i64 = 1_700_000_000_000;

pub struct Harness<B> {
    pub store: Store,
    pub clock: ManualClock,
    pub cfg: OrchestrateConfig,
    pub root: String,
    /// The PostgreSQL database under `store`, when the suite runs on one.
    _db: Option<pg::Database>,
    _dir: tempfile::TempDir,
    _backend: PhantomData<B>,
}

/// The harness on a SQLite file: a suite imports `on_sqlite` as its `engine_support`.
pub mod on_sqlite {
    pub use super::*;
    pub type H = Harness<crate::pg::Sqlite>;
}

/// The harness on PostgreSQL: a suite imports `on_postgres` as its `engine_support`.
pub mod on_postgres {
    pub use super::*;
    pub type H = Harness<crate::pg::Postgres>;
}

pub fn agent(name: &str, caps: &[Capability], repos: &[&str]) -> Agent {
    Agent {
        name: name.into(),
        runtime: RuntimeKind::Claude,
        command: None,
        model: Some("claude-sonnet".into()),
        effort: None,
        capabilities: caps.to_vec(),
        policy: AutonomyPolicy::ReadOnly,
        repos: repos.iter().map(|s| s.to_string()).collect(),
        chat_autorespond: false,
        created_ms: 0,
    }
}

impl<B: OnBackend> Default for Harness<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<B: OnBackend> Harness<B> {
    pub fn new() -> Self {
        Self::with_cfg(OrchestrateConfig::default())
    }

    /// A fresh home whose root has already fanned out into `legs`.
    pub fn fanned(legs: Vec<Delegation>) -> Self {
        Self::fanned_with(OrchestrateConfig::default(), legs)
    }

    /// `fanned` under `cfg`.
    pub fn fanned_with(cfg: OrchestrateConfig, legs: Vec<Delegation>) -> Self {
        let mut h = Self::with_cfg(cfg);
        h.ok("", fan(legs));
        h
    }

    /// A home with agents `coord`, `rev`, `alt` (ask+review) and `asker` (ask only),
    /// and a root submitted to `coord` on acme/api.
    pub fn with_cfg(cfg: OrchestrateConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, db) = pg::test_store(dir.path(), B::BACKEND);
        let clock = ManualClock::new(T0);
        store
            .write(|tx| -> Result<(), gitmoot::store::StoreError> {
                let both = [Capability::Ask, Capability::Review];
                agents::insert(tx, &agent("coord", &both, &[]))?;
                agents::insert(tx, &agent("rev", &both, &["acme/api"]))?;
                agents::insert(tx, &agent("alt", &both, &[]))?;
                agents::insert(tx, &agent("asker", &[Capability::Ask], &[]))?;
                agents::insert(tx, &agent("elsewhere", &both, &["acme/web"]))?;
                Ok(())
            })
            .unwrap();
        let root = store
            .write(|tx| {
                engine::submit_root(
                    tx,
                    &clock,
                    SubmitRoot {
                        repo: Some("acme/api".into()),
                        ..SubmitRoot::new("coord", Action::Ask, "Ship the release notes", "test")
                    },
                )
            })
            .unwrap();
        Self {
            store,
            clock,
            cfg,
            root,
            _db: db,
            _dir: dir,
            _backend: PhantomData,
        }
    }

    pub fn id(&self, rest: &str) -> String {
        if rest.is_empty() {
            self.root.clone()
        } else {
            format!("{}/{rest}", self.root)
        }
    }

    pub fn settle_usage(&mut self, id: &str, outcome: Outcome, usage: Usage) -> JobState {
        let env = env(&self.clock, &self.cfg);
        let s = Settlement {
            raw_output: Some("raw".into()),
            usage,
            ..Settlement::of(outcome)
        };
        self.store
            .write(|tx| engine::settle(tx, env, id, s))
            .unwrap()
    }

    /// Settles `rest` (a path under the root; "" is the root) with a parsed result.
    pub fn ok(&mut self, rest: &str, r: GitmootResult) -> JobState {
        let id = self.id(rest);
        self.settle_usage(&id, Outcome::Parsed(r), Usage::default())
    }

    /// Settles `rest` with `r`, reporting this much usage.
    pub fn ok_usage(
        &mut self,
        rest: &str,
        r: GitmootResult,
        tokens_in: u64,
        tokens_out: u64,
        cost_usd: f64,
    ) -> JobState {
        let id = self.id(rest);
        let usage = Usage {
            tokens_in,
            tokens_out,
            cost_usd,
        };
        self.settle_usage(&id, Outcome::Parsed(r), usage)
    }

    pub fn fail(&mut self, rest: &str, reason: &str) -> JobState {
        let id = self.id(rest);
        self.settle_usage(&id, Outcome::Failed(reason.into()), Usage::default())
    }

    pub fn job(&self, rest: &str) -> Job {
        jobs::require(self.store.conn(), &self.id(rest)).unwrap()
    }

    pub fn try_job(&self, rest: &str) -> Option<Job> {
        jobs::get(self.store.conn(), &self.id(rest)).unwrap()
    }

    pub fn run(&self) -> Run {
        runs::require(self.store.conn(), &self.root).unwrap()
    }

    pub fn all(&self) -> Vec<Job> {
        jobs::by_root(self.store.conn(), &self.root).unwrap()
    }

    /// Ids of queued jobs, relative to the root.
    pub fn queued(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .all()
            .into_iter()
            .filter(|j| j.state == JobState::Queued)
            .map(|j| self.rel(&j.id))
            .collect();
        v.sort();
        v
    }

    pub fn rel(&self, id: &str) -> String {
        id.strip_prefix(&format!("{}/", self.root))
            .unwrap_or(if id == self.root { "" } else { id })
            .to_string()
    }

    pub fn events(&self, kind: &str) -> Vec<Event> {
        events::for_job_or_root(self.store.conn(), &self.root, 0)
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == kind)
            .collect()
    }

    /// Asserts that the first `kind` event of the tree says `text`.
    pub fn assert_first_event(&self, kind: &str, text: &str) {
        let events = self.events(kind);
        assert!(events[0].message.contains(text), "{}", events[0].message);
    }

    pub fn open_rounds(&self) -> Vec<escalations::Round> {
        escalations::open_for_root(self.store.conn(), &self.root).unwrap()
    }

    pub fn kill(&mut self, force: bool) -> engine::KillReport {
        let root = self.root.clone();
        let env = env(&self.clock, &self.cfg);
        self.store
            .write(|tx| engine::kill_root(tx, env, &root, force))
            .unwrap()
    }

    pub fn sweep(&mut self) -> engine::SweepReport {
        let env = env(&self.clock, &self.cfg);
        self.store.write(|tx| engine::sweep(tx, env)).unwrap()
    }

    pub fn answer(&mut self, rest: &str, text: &str) -> Result<Option<String>, String> {
        let id = self.id(rest);
        let env = env(&self.clock, &self.cfg);
        self.store
            .write(|tx| engine::answer(tx, env, &id, text))
            .map_err(|e| e.to_string())
    }

    pub fn resume(
        &mut self,
        rest: &str,
        verb: engine::ResumeVerb,
        instr: Option<&str>,
    ) -> Result<(), String> {
        let id = self.id(rest);
        let env = env(&self.clock, &self.cfg);
        self.store
            .write(|tx| engine::resume(tx, env, &id, verb, instr))
            .map_err(|e| e.to_string())
    }

    /// Marks a queued job running, as the daemon's claim would.
    pub fn start(&mut self, rest: &str) {
        let mut j = self.job(rest);
        j.state = JobState::Running;
        j.started_ms = Some(self.clock_now());
        j.runtime_pid = Some(4242);
        self.store.write(|tx| jobs::put(tx, &j)).unwrap();
    }

    pub fn clock_now(&self) -> i64 {
        use gitmoot::clock::Clock;
        self.clock.now_ms()
    }
}

/// The engine's surroundings in these tests: the harness's clock and knobs, no hooks.
pub fn env<'a>(clock: &'a ManualClock, cfg: &'a OrchestrateConfig) -> Env<'a> {
    Env {
        clock,
        cfg,
        hooks: &NoHooks,
    }
}

/// The six decisions a result may carry, for the suites that try each one.
pub const EVERY_DECISION: &[Decision] = &[
    Decision::Approved,
    Decision::ChangesRequested,
    Decision::Blocked,
    Decision::Implemented,
    Decision::Failed,
    Decision::Skipped,
];

pub fn res(decision: Decision) -> GitmootResult {
    GitmootResult::new(decision, format!("{} summary", decision.as_str()))
}

pub fn approved() -> GitmootResult {
    res(Decision::Approved)
}

pub fn with(mut r: GitmootResult, ds: Vec<Delegation>) -> GitmootResult {
    r.delegations = ds;
    r
}

/// The path of job `name` below the job at `path` (`""` is the root), as `H::id` reads it.
pub fn under(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}/{name}")
    }
}

pub fn fan(ds: Vec<Delegation>) -> GitmootResult {
    with(approved(), ds)
}

pub fn summary(mut r: GitmootResult, s: &str) -> GitmootResult {
    r.summary = s.into();
    r
}

pub fn asking(mut r: GitmootResult, qs: &[(&str, &str)]) -> GitmootResult {
    r.human_questions = qs
        .iter()
        .map(|(id, p)| HumanQuestion {
            id: id.to_string(),
            prompt: p.to_string(),
            choices: vec![],
        })
        .collect();
    r
}

pub fn d(id: &str, agent: &str) -> Delegation {
    Delegation {
        id: id.into(),
        agent: Some(agent.into()),
        ephemeral: None,
        action: Action::Review,
        prompt: format!("do {id}"),
        deps: vec![],
        failure_policy: FailurePolicy::BlockParent,
        synthesis_rule: None,
        quorum: None,
        timeout_ms: None,
        retry: 0,
        worktree: None,
        artifacts: vec![],
        fingerprint: None,
        model: None,
        effort: None,
        phase: None,
    }
}

pub trait DelegationExt {
    fn deps(self, deps: &[&str]) -> Self;
    fn policy(self, p: FailurePolicy) -> Self;
    fn rule(self, r: SynthesisRule) -> Self;
    fn quorum(self, k: u32) -> Self;
    fn retry(self, n: u32) -> Self;
    fn fp(self, f: &str) -> Self;
    fn prompt(self, p: &str) -> Self;
    fn ephemeral(self) -> Self;
}

impl DelegationExt for Delegation {
    fn deps(mut self, deps: &[&str]) -> Self {
        self.deps = deps.iter().map(|s| s.to_string()).collect();
        self
    }
    fn policy(mut self, p: FailurePolicy) -> Self {
        self.failure_policy = p;
        self
    }
    fn rule(mut self, r: SynthesisRule) -> Self {
        self.synthesis_rule = Some(r);
        self
    }
    fn quorum(mut self, k: u32) -> Self {
        self.synthesis_rule = Some(SynthesisRule::Quorum);
        self.quorum = Some(k);
        self
    }
    fn retry(mut self, n: u32) -> Self {
        self.retry = n;
        self
    }
    fn fp(mut self, f: &str) -> Self {
        self.fingerprint = Some(f.into());
        self
    }
    fn prompt(mut self, p: &str) -> Self {
        self.prompt = p.into();
        self
    }
    fn ephemeral(mut self) -> Self {
        self.agent = None;
        self.ephemeral = Some(EphemeralSpec {
            runtime: RuntimeKind::Codex,
            model: Some("gpt-5".into()),
            effort: Some("high".into()),
            template: None,
            role: None,
            capabilities: vec![],
            autonomy_policy: AutonomyPolicy::ReadOnly,
        });
        self
    }
}
