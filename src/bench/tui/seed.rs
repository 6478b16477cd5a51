//! The seeded history the control room benches read: agents, trees of every state, chat
//! threads with a mostly read inbox, and the one-leg settle a refresh shows. Writes only
//! through the store's and chat's own write paths; measures nothing.

use serde_json::json;

use crate::bench::seeded_agent;
use crate::chat::inbox::{self, ReadSelection};
use crate::chat::messages::{self, Post};
use crate::chat::threads::{self, NewThread};
use crate::clock::{ManualClock, Millis};
use crate::contract::{Delegation, FailurePolicy};
use crate::domain::{Action, EventKind, JobKind, JobState, RunState};
use crate::store::agents;
use crate::store::chat::{AuthorKind, MessageKind};
use crate::store::delegations::{self, Leg, LegState};
use crate::store::escalations::{self, Round, RoundKind};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};
use crate::store::runs::{self, Run};
use crate::store::{Store, StoreError, Tx};
use crate::tui::load::LoadError;

const AGENTS: [&str; 8] = [
    "coordinator",
    "reviewer",
    "builder",
    "tester",
    "docs",
    "security",
    "perf",
    "triage",
];
/// One mention in this many is still unread after seeding.
const UNREAD_SHARE: usize = 50;

/// How much to seed. Every root is a coordinator with `jobs_per_root - 2` legs and one
/// continuation; with `live` some trees are still running or await a human.
#[derive(Debug, Clone, Copy)]
pub struct SeedSize {
    pub roots: usize,
    pub jobs_per_root: usize,
    pub threads: usize,
    pub messages: usize,
    pub live: bool,
}

impl SeedSize {
    /// The SPEC §11 figure: 100,000 jobs in 5,000 roots, 200,000 messages.
    pub const SPEC: SeedSize = SeedSize {
        roots: 5_000,
        jobs_per_root: 20,
        threads: 40,
        messages: 200_000,
        live: true,
    };
}

/// What the seed wrote: every root id, and the running legs a refresh can settle.
#[derive(Debug, Clone, Default)]
pub struct Seeded {
    pub roots: Vec<String>,
    pub jobs: usize,
    pub messages: usize,
    pub running: Vec<String>,
}

/// One tree's shape: which state the run and each of its jobs is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Done,
    Running,
    Awaiting,
    Failed,
    Killed,
}

impl Shape {
    fn of(i: usize, live: bool) -> Shape {
        match i % 50 {
            _ if !live => Shape::Done,
            0 | 25 => Shape::Running,
            7 => Shape::Awaiting,
            13 => Shape::Failed,
            31 => Shape::Killed,
            _ => Shape::Done,
        }
    }

    fn run_state(self) -> RunState {
        match self {
            Shape::Done => RunState::Done,
            Shape::Running => RunState::Running,
            Shape::Awaiting => RunState::AwaitingHuman,
            Shape::Failed => RunState::Failed,
            Shape::Killed => RunState::Killed,
        }
    }

    /// The state of leg `k` of `legs`.
    fn leg_state(self, k: usize, legs: usize) -> JobState {
        match self {
            Shape::Done | Shape::Awaiting => JobState::Succeeded,
            Shape::Running if k < legs / 2 => JobState::Succeeded,
            Shape::Running if k < legs / 2 + 3 => JobState::Running,
            Shape::Running => JobState::Queued,
            Shape::Failed if k == 1 => JobState::Failed,
            Shape::Failed if k > legs / 2 => JobState::Blocked,
            Shape::Failed => JobState::Succeeded,
            Shape::Killed if k < 3 => JobState::Succeeded,
            Shape::Killed => JobState::Cancelled,
        }
    }
}

fn delegation(id: &str, agent: &str, deps: Vec<String>) -> Delegation {
    Delegation {
        deps,
        failure_policy: FailurePolicy::Continue,
        ..Delegation::to_agent(
            id,
            agent,
            Action::Review,
            format!("review part {id} of the change"),
        )
    }
}

fn result_json(decision: &str, summary: String) -> serde_json::Value {
    json!({
        "decision": decision,
        "summary": summary,
        "findings": [{"title": "naming nit", "severity": "P3"}],
        "changes_made": [],
        "tests_run": [{"name": "unit", "command": "cargo test", "result": "pass"}],
        "needs": [],
        "delegations": [],
        "human_questions": [],
        "evidence": "executed"
    })
}

/// Seeds `size` into `store` in one transaction through the store's own write paths,
/// with timestamps ending at `now`, then checkpoints the WAL.
pub fn seed(store: &mut Store, size: SeedSize, now: Millis) -> Result<Seeded, LoadError> {
    let total_ms = (size.roots as i64 + size.messages as i64).max(1) * 10;
    let start = now - total_ms;
    store
        .write(|tx| {
            for a in AGENTS {
                agents::insert(tx, &seeded_agent(a))?;
            }
            let mut out = Seeded::default();
            for i in 0..size.roots {
                seed_root(tx, i, size, start + i as i64 * 10, &mut out)?;
            }
            let clock = ManualClock::new(start + size.roots as i64 * 10);
            let threads = (0..size.threads.max(1))
                .map(|t| {
                    threads::create(
                        tx,
                        &clock,
                        NewThread {
                            name: &format!("topic-{t}"),
                            repo: "bench/tui",
                            title: Some(&format!("Design topic {t}")),
                            created_by: "human",
                        },
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            // A long history mostly read: agents and the human have read all but the newest
            // `UNREAD_SHARE` of their mentions, as the auto-respond sweep and `chat read` leave it.
            let read_before = size.messages - size.messages / UNREAD_SHARE;
            for m in 0..size.messages {
                if m == read_before {
                    for a in AGENTS {
                        inbox::mark_read(tx, a, None, &ReadSelection::All)?;
                    }
                    for t in &threads {
                        let seq = crate::store::chat::last_seq(tx, &t.id)?;
                        crate::store::chat::mark_seen(tx, &t.id, seq)?;
                    }
                }
                clock.advance(10);
                let to = AGENTS[m % AGENTS.len()];
                let cc = AGENTS[(m / 3 + 1) % AGENTS.len()];
                let mentioned = if m % 3 == 0 {
                    vec![to.to_string(), cc.to_string()]
                } else {
                    vec![to.to_string()]
                };
                let body = format!(
                    "@{} {} item {m} of the rollout",
                    mentioned.join(" @"),
                    if m % 2 == 0 {
                        "please look at"
                    } else {
                        "I finished"
                    }
                );
                let (author_kind, author) = if m % 4 == 0 {
                    (AuthorKind::Human, "human")
                } else {
                    (AuthorKind::Agent, AGENTS[(m + 3) % AGENTS.len()])
                };
                messages::append(
                    tx,
                    &clock,
                    &threads[m % threads.len()],
                    Post {
                        kind: MessageKind::Chat,
                        author_kind,
                        author,
                        body: &body,
                        deliver: mentioned.iter().map(|a| (a.clone(), true)).collect(),
                        mentions: mentioned,
                        refs: vec![],
                        reply_to: None,
                        job_id: None,
                    },
                )?;
            }
            out.messages = size.messages;
            Ok::<_, LoadError>(out)
        })
        .and_then(|out| {
            // Fold the seed's one huge transaction into the database file, as a long-lived
            // home's WAL is: readers would otherwise search a WAL as large as the history.
            store
                .conn()
                .sqlite()?
                .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
                .map_err(StoreError::from)?;
            Ok(out)
        })
}

/// One tree: root coordinator, its legs (each with its delegation row), a continuation,
/// the run row, two or three events per job, and an open ask round when awaiting.
pub(in crate::bench) fn seed_root(
    tx: &Tx<'_>,
    i: usize,
    size: SeedSize,
    t0: Millis,
    out: &mut Seeded,
) -> Result<(), StoreError> {
    let tree = Tree {
        i,
        root_id: format!("job-b{i:07}"),
        shape: Shape::of(i, size.live),
        legs: size.jobs_per_root.saturating_sub(2).max(1),
        repo: Some("bench/tui".into()),
        t0,
    };
    seed_run(tx, &tree)?;
    seed_coordinator(tx, &tree)?;
    for k in 0..tree.legs {
        seed_leg(tx, &tree, k, out)?;
    }
    seed_continuation(tx, &tree)?;
    out.roots.push(tree.root_id);
    out.jobs += tree.legs + 2;
    Ok(())
}

/// What every row of one seeded tree is built from.
struct Tree {
    i: usize,
    root_id: String,
    shape: Shape,
    legs: usize,
    repo: Option<String>,
    t0: Millis,
}

/// The job's `kind` event at `ts`.
fn event(tx: &Tx<'_>, job: &Job, kind: EventKind, ts: Millis) -> Result<(), StoreError> {
    events::append(
        tx,
        NewEvent::job(ts, &job.root_id, &job.id, kind).message(format!("job {} {kind}", job.id)),
    )
    .map(|_| ())
}

/// The tree's run row, in the state its shape gives it.
fn seed_run(tx: &Tx<'_>, tree: &Tree) -> Result<(), StoreError> {
    let (i, t0, legs) = (tree.i, tree.t0, tree.legs);
    let mut run = Run::new(
        tree.root_id.clone(),
        format!("Review change #{i}: tighten the settle path"),
        tree.repo.clone(),
        t0,
    );
    run.state = tree.shape.run_state();
    run.jobs = (legs + 2) as u32;
    run.tokens = 1_000 * (legs as u64 + 2);
    run.cost_usd = 0.01 * (legs as f64 + 2.0);
    run.killed = tree.shape == Shape::Killed;
    if !matches!(tree.shape, Shape::Running | Shape::Awaiting) {
        run.finished_ms = Some(t0 + 9);
    }
    runs::put(tx, &run)
}

/// The root coordinator, succeeded with the legs it split the change into.
fn seed_coordinator(tx: &Tx<'_>, tree: &Tree) -> Result<(), StoreError> {
    let (i, t0, root_id) = (tree.i, tree.t0, &tree.root_id);
    let mut root = Job::queued(
        root_id.clone(),
        root_id.clone(),
        JobKind::Root,
        "coordinator".into(),
        Action::Review,
        format!("Coordinate the review of change #{i}"),
        t0,
    );
    root.repo = tree.repo.clone();
    root.state = JobState::Succeeded;
    root.started_ms = Some(t0 + 1);
    root.finished_ms = Some(t0 + 2);
    root.tokens_in = 800;
    root.tokens_out = 200;
    root.followup = jobs::FollowUp::Continued;
    root.continuation_id = Some(format!("{root_id}/continuation"));
    root.result = Some(result_json(
        "approved",
        format!("Split change #{i} into {} review legs", tree.legs),
    ));
    jobs::put(tx, &root)?;
    event(tx, &root, EventKind::Queued, t0)?;
    event(tx, &root, EventKind::Succeeded, t0 + 2)
}

/// Leg `k`: its job in the state the tree's shape gives it, and its delegation row.
fn seed_leg(tx: &Tx<'_>, tree: &Tree, k: usize, out: &mut Seeded) -> Result<(), StoreError> {
    let (i, t0, root_id) = (tree.i, tree.t0, &tree.root_id);
    let lid = format!("l{k}");
    let deps = if k % 4 == 3 {
        vec![format!("l{}", k - 1)]
    } else {
        vec![]
    };
    let who = AGENTS[1 + k % (AGENTS.len() - 1)];
    let mut job = Job::queued(
        format!("{root_id}/{lid}"),
        root_id.clone(),
        JobKind::Leg,
        who.into(),
        Action::Review,
        format!("Review part {k} of change #{i}"),
        t0 + 3,
    );
    job.parent_id = Some(root_id.clone());
    job.delegation_id = Some(lid.clone());
    job.repo = tree.repo.clone();
    job.depth = 1;
    job.state = tree.shape.leg_state(k, tree.legs);
    event(tx, &job, EventKind::Queued, t0 + 3)?;
    if job.state != JobState::Queued {
        job.started_ms = Some(t0 + 4);
        event(tx, &job, EventKind::Running, t0 + 4)?;
    }
    match job.state {
        JobState::Succeeded => {
            job.finished_ms = Some(t0 + 5);
            job.tokens_in = 600;
            job.tokens_out = 150;
            job.result = Some(result_json(
                if k % 5 == 4 {
                    "changes_requested"
                } else {
                    "approved"
                },
                format!("Part {k} of change #{i} reviewed; {} findings", k % 3),
            ));
            event(tx, &job, EventKind::Succeeded, t0 + 5)?;
        }
        JobState::Failed | JobState::Blocked | JobState::Cancelled => {
            job.finished_ms = Some(t0 + 5);
            job.error = Some(format!("leg {lid} {}", job.state));
            event(tx, &job, EventKind::entered(job.state), t0 + 5)?;
        }
        JobState::Running => out.running.push(job.id.clone()),
        // The bench seeds no interrupted legs.
        JobState::Queued | JobState::Interrupted => {}
    }
    jobs::put(tx, &job)?;
    delegations::put(
        tx,
        &Leg {
            parent_id: root_id.clone(),
            delegation_id: lid.clone(),
            root_id: root_id.clone(),
            position: k as u32,
            spec: delegation(&lid, who, deps),
            state: LegState::Dispatched,
            job_id: Some(job.id.clone()),
            attempts: 1,
            dedup_of: None,
            accepted: false,
            note: None,
            created_ms: t0 + 3,
            updated_ms: t0 + 5,
        },
    )
}

/// The continuation that synthesizes the legs, and the ask round a tree awaiting a
/// human has open on it.
fn seed_continuation(tx: &Tx<'_>, tree: &Tree) -> Result<(), StoreError> {
    let (i, t0, root_id) = (tree.i, tree.t0, &tree.root_id);
    let mut cont = Job::queued(
        format!("{root_id}/continuation"),
        root_id.clone(),
        JobKind::Continuation,
        "coordinator".into(),
        Action::Ask,
        format!("Synthesize the legs of change #{i}"),
        t0 + 6,
    );
    cont.parent_id = Some(root_id.clone());
    cont.repo = tree.repo.clone();
    cont.depth = 1;
    event(tx, &cont, EventKind::Queued, t0 + 6)?;
    match tree.shape {
        Shape::Done | Shape::Awaiting => {
            cont.state = JobState::Succeeded;
            cont.started_ms = Some(t0 + 7);
            cont.finished_ms = Some(t0 + 8);
            cont.result = Some(result_json(
                "approved",
                format!("Change #{i} is ready to merge"),
            ));
            event(tx, &cont, EventKind::Succeeded, t0 + 8)?;
        }
        Shape::Failed | Shape::Killed => {
            cont.state = JobState::Cancelled;
            cont.finished_ms = Some(t0 + 8);
            event(tx, &cont, EventKind::Cancelled, t0 + 8)?;
        }
        Shape::Running => {}
    }
    jobs::put(tx, &cont)?;
    if tree.shape != Shape::Awaiting {
        return Ok(());
    }
    escalations::insert(
        tx,
        &Round {
            id: 0,
            root_id: root_id.clone(),
            job_id: cont.id.clone(),
            kind: RoundKind::Ask,
            questions: json!([{"id": "q1", "prompt": format!("Ship change #{i} behind a flag?"),
                               "choices": ["yes", "no"]}]),
            reason: String::new(),
            failed_job_id: Some(cont.id.clone()),
            delegation_id: None,
            opened_ms: t0 + 8,
            resolved_ms: None,
            verb: None,
            answers: None,
            instructions: None,
            thread_id: None,
        },
    )
    .map(|_| ())
}

/// A settle-like change of one running leg on another connection: the job row succeeds
/// and its event is appended in the same transaction.
pub(in crate::bench) fn settle_one(
    writer: &mut Store,
    job_id: &str,
    now: Millis,
) -> Result<(), StoreError> {
    writer.write(|tx| {
        let mut job = jobs::require(tx, job_id)?;
        job.state = JobState::Succeeded;
        job.finished_ms = Some(now);
        job.updated_ms = now;
        job.tokens_in = 500;
        job.tokens_out = 120;
        job.result = Some(result_json("approved", format!("{job_id} settled")));
        jobs::put(tx, &job)?;
        events::append(
            tx,
            NewEvent::job(now, &job.root_id, &job.id, EventKind::Succeeded)
                .message(format!("job {job_id} succeeded")),
        )?;
        Ok(())
    })
}
