//! `bench_tui`: the control room's figures for `gitmoot bench` on a real SQLite file — the
//! first frame (open, first load, update, render at 120×36) and the refresh after one job
//! changes — over a seeded store of 100,000 jobs in 5,000 roots and 200,000 chat messages.
//!
//! Owns the seed (written through the store's own write paths in one transaction) and the
//! timing; measures the real loader and renderer and must not reimplement either.

use std::path::Path;
use std::time::{Duration, Instant};

use gitmoot_ui::view::DaemonStatus;
use gitmoot_ui::{Event, Keymap, Snapshot, State, Theme, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use crate::chat::inbox::{self, ReadSelection};
use crate::chat::messages::{self, Post};
use crate::chat::threads::{self, NewThread};
use crate::clock::{ManualClock, Millis};
use crate::contract::{Delegation, FailurePolicy};
use crate::domain::{Action, AutonomyPolicy, Capability, JobKind, JobState, RunState, RuntimeKind};
use crate::store::agents::{self, Agent};
use crate::store::chat::{AuthorKind, MessageKind};
use crate::store::delegations::{self, Leg, LegState};
use crate::store::escalations::{self, Round, RoundKind};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};
use crate::store::runs::{self, Run};
use crate::store::{Store, StoreError};
use crate::tui::load::{LoadError, Loader};

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
/// Terminal size of the figures (the screenshots' size).
const WIDTH: u16 = 120;
const HEIGHT: u16 = 36;
const FIRST_FRAME_RUNS: usize = 7;
const REFRESH_CHANGES: usize = 50;
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

fn agent(name: &str) -> Agent {
    Agent {
        name: name.into(),
        runtime: RuntimeKind::Shell,
        command: Some("true".into()),
        model: None,
        effort: None,
        capabilities: vec![Capability::Ask, Capability::Review],
        policy: AutonomyPolicy::ReadOnly,
        repos: vec![],
        chat_autorespond: false,
        created_ms: 0,
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
                agents::insert(tx, &agent(a))?;
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
                .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
                .map_err(StoreError::from)?;
            Ok(out)
        })
}

/// One tree: root coordinator, its legs (each with its delegation row), a continuation,
/// the run row, two or three events per job, and an open ask round when awaiting.
pub(super) fn seed_root(
    tx: &rusqlite::Transaction<'_>,
    i: usize,
    size: SeedSize,
    t0: Millis,
    out: &mut Seeded,
) -> Result<(), StoreError> {
    let shape = Shape::of(i, size.live);
    let root_id = format!("job-b{i:07}");
    let legs = size.jobs_per_root.saturating_sub(2).max(1);
    let mut run = Run::new(
        root_id.clone(),
        format!("Review change #{i}: tighten the settle path"),
        Some("bench/tui".into()),
        t0,
    );
    run.state = shape.run_state();
    run.jobs = (legs + 2) as u32;
    run.tokens = 1_000 * (legs as u64 + 2);
    run.cost_usd = 0.01 * (legs as f64 + 2.0);
    run.killed = shape == Shape::Killed;
    if !matches!(shape, Shape::Running | Shape::Awaiting) {
        run.finished_ms = Some(t0 + 9);
    }
    runs::put(tx, &run)?;
    let ev = |job: &Job, kind: &str, ts: Millis| {
        events::append(
            tx,
            NewEvent {
                ts_ms: ts,
                root_id: Some(&root_id),
                job_id: Some(&job.id),
                kind,
                message: format!("job {} {kind}", job.id),
                data: None,
            },
        )
    };
    let mut root = Job::queued(
        root_id.clone(),
        root_id.clone(),
        JobKind::Root,
        "coordinator".into(),
        Action::Review,
        format!("Coordinate the review of change #{i}"),
        t0,
    );
    root.repo = run.repo.clone();
    root.state = JobState::Succeeded;
    root.started_ms = Some(t0 + 1);
    root.finished_ms = Some(t0 + 2);
    root.tokens_in = 800;
    root.tokens_out = 200;
    root.followup = jobs::FollowUp::Continued;
    root.continuation_id = Some(format!("{root_id}/continuation"));
    root.result = Some(result_json(
        "approved",
        format!("Split change #{i} into {legs} review legs"),
    ));
    jobs::put(tx, &root)?;
    ev(&root, "queued", t0)?;
    ev(&root, "succeeded", t0 + 2)?;
    for k in 0..legs {
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
        job.repo = run.repo.clone();
        job.depth = 1;
        job.state = shape.leg_state(k, legs);
        ev(&job, "queued", t0 + 3)?;
        if job.state != JobState::Queued {
            job.started_ms = Some(t0 + 4);
            ev(&job, "started", t0 + 4)?;
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
                ev(&job, "succeeded", t0 + 5)?;
            }
            JobState::Failed | JobState::Blocked | JobState::Cancelled => {
                job.finished_ms = Some(t0 + 5);
                job.error = Some(format!("leg {lid} {}", job.state));
                ev(&job, job.state.as_str(), t0 + 5)?;
            }
            JobState::Running => out.running.push(job.id.clone()),
            JobState::Queued => {}
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
        )?;
    }
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
    cont.repo = run.repo.clone();
    cont.depth = 1;
    ev(&cont, "queued", t0 + 6)?;
    match shape {
        Shape::Done | Shape::Awaiting => {
            cont.state = JobState::Succeeded;
            cont.started_ms = Some(t0 + 7);
            cont.finished_ms = Some(t0 + 8);
            cont.result = Some(result_json(
                "approved",
                format!("Change #{i} is ready to merge"),
            ));
            ev(&cont, "succeeded", t0 + 8)?;
        }
        Shape::Failed | Shape::Killed => {
            cont.state = JobState::Cancelled;
            cont.finished_ms = Some(t0 + 8);
            ev(&cont, "cancelled", t0 + 8)?;
        }
        Shape::Running => {}
    }
    jobs::put(tx, &cont)?;
    if shape == Shape::Awaiting {
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
        )?;
    }
    out.roots.push(root_id);
    out.jobs += legs + 2;
    Ok(())
}

/// The control room's state after a snapshot arrived at 120×36, as the event loop has it.
pub fn view_state(snap: &Snapshot) -> State {
    let mut state = State::new(Keymap::builtin(), false, snap.now_ms);
    update(&mut state, snap, Event::SnapshotArrived);
    update(&mut state, snap, Event::Resize(WIDTH, HEIGHT));
    state
}

/// Renders one frame of `snap` into a 120×36 test terminal; returns the screen text.
pub fn render_frame(state: &State, snap: &Snapshot, theme: &Theme) -> String {
    let Ok(mut term) = Terminal::new(TestBackend::new(WIDTH, HEIGHT));
    let Ok(frame) = term.draw(|f| gitmoot_ui::render(f, state, snap, theme));
    frame
        .buffer
        .content()
        .chunks(WIDTH as usize)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the benchmark on a scratch file in the temp folder (removed afterwards).
pub fn bench_tui() -> Vec<(String, String)> {
    super::in_scratch("tui", |dir| {
        measure(&dir.join("gitmoot.db"), SeedSize::SPEC)
    })
    .unwrap_or_else(|e| vec![("tui.error".into(), e)])
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn measure(path: &Path, size: SeedSize) -> Result<Vec<(String, String)>, String> {
    let err = |e: LoadError| e.to_string();
    let now = crate::clock::now_ms();
    let started = Instant::now();
    let seeded = {
        let mut store = Store::open(path).map_err(|e| e.to_string())?;
        seed(&mut store, size, now).map_err(err)?
    };
    let seed_s = started.elapsed().as_secs_f64();
    let theme = Theme::default_dark();
    let mut first = Vec::new();
    let mut first_load = Vec::new();
    for _ in 0..FIRST_FRAME_RUNS {
        let t = Instant::now();
        let store = Store::open(path).map_err(|e| e.to_string())?;
        let mut loader = Loader::new(store, DaemonStatus::Embedded);
        let snap = loader.load(now).map_err(err)?;
        first_load.push(ms(t.elapsed()));
        let state = view_state(&snap);
        std::hint::black_box(render_frame(&state, &snap, &theme));
        first.push(ms(t.elapsed()));
    }
    let mut loader = Loader::new(
        Store::open(path).map_err(|e| e.to_string())?,
        DaemonStatus::Embedded,
    );
    let snap = loader.load(now).map_err(err)?;
    let mut state = view_state(&snap);
    let mut writer = Store::open(path).map_err(|e| e.to_string())?;
    let mut store_work = Vec::new();
    let mut view_work = Vec::new();
    let mut render_work = Vec::new();
    let mut full = Vec::new();
    for (n, id) in seeded.running.iter().take(REFRESH_CHANGES).enumerate() {
        settle_one(&mut writer, id, now + n as i64).map_err(|e| e.to_string())?;
        let t = Instant::now();
        let mut snap = loader.read_store(now + n as i64).map_err(err)?;
        let stored = t.elapsed();
        snap.roots = loader.roots_view();
        update(&mut state, &snap, Event::SnapshotArrived);
        let viewed = t.elapsed();
        std::hint::black_box(render_frame(&state, &snap, &theme));
        let rendered = t.elapsed();
        store_work.push(ms(stored));
        view_work.push(ms(viewed - stored));
        render_work.push(ms(rendered - viewed));
        full.push(ms(rendered));
    }
    let bare = bare_frame_ms();
    Ok(vec![
        (
            "tui.seed".into(),
            format!(
                "{} jobs in {} roots, {} messages ({seed_s:.1} s)",
                seeded.jobs,
                seeded.roots.len(),
                seeded.messages
            ),
        ),
        (
            "tui.first_frame_ms".into(),
            format!("{:.1} (median of {FIRST_FRAME_RUNS})", median(first)),
        ),
        (
            "tui.first_load_ms".into(),
            format!("{:.1}", median(first_load)),
        ),
        (
            "tui.refresh_store_ms".into(),
            format!(
                "{:.2} (median of {})",
                median(store_work.clone()),
                store_work.len()
            ),
        ),
        (
            "tui.refresh_store_max_ms".into(),
            format!("{:.2}", store_work.iter().copied().fold(0.0, f64::max)),
        ),
        (
            "tui.refresh_view_model_ms".into(),
            format!("{:.2}", median(view_work)),
        ),
        (
            "tui.refresh_render_ms".into(),
            format!("{:.2}", median(render_work)),
        ),
        ("tui.anchor.bare_frame_ms".into(), format!("{bare:.3}")),
        (
            "tui.refresh_with_render_ms".into(),
            format!("{:.2}", median(full)),
        ),
    ])
}

/// The machine's own limit for a frame: three bordered panes of plain text lines (a tree,
/// a detail, a transcript) drawn into a 120×36 test terminal with the same crates and the
/// same buffer-to-text step as `render_frame`; the median of 200.
pub fn bare_frame_ms() -> f64 {
    use ratatui::layout::{Constraint, Layout};
    use ratatui::widgets::{Block, Borders, Paragraph};
    let lines: Vec<String> = (0..HEIGHT)
        .map(|i| format!("job-b{i:07}/l{i} [succeeded] reviewer (leg) → approved"))
        .collect();
    let text = lines.join("\n");
    let mut times = Vec::with_capacity(200);
    for _ in 0..200 {
        let t = Instant::now();
        let Ok(mut term) = Terminal::new(TestBackend::new(WIDTH, HEIGHT));
        let Ok(frame) = term.draw(|f| {
            let [left, mid, right] = Layout::horizontal([
                Constraint::Percentage(40),
                Constraint::Percentage(30),
                Constraint::Percentage(30),
            ])
            .areas(f.area());
            for (area, title) in [(left, "Roots"), (mid, "Detail"), (right, "Chat")] {
                f.render_widget(
                    Paragraph::new(text.as_str())
                        .block(Block::default().borders(Borders::ALL).title(title)),
                    area,
                );
            }
        });
        let screen: String = frame
            .buffer
            .content()
            .chunks(WIDTH as usize)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n");
        std::hint::black_box(screen);
        times.push(ms(t.elapsed()));
    }
    median(times)
}

/// A settle-like change of one running leg on another connection: the job row succeeds
/// and its event is appended in the same transaction.
pub(super) fn settle_one(writer: &mut Store, job_id: &str, now: Millis) -> Result<(), StoreError> {
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
            NewEvent {
                ts_ms: now,
                root_id: Some(&job.root_id),
                job_id: Some(&job.id),
                kind: "succeeded",
                message: format!("job {job_id} succeeded"),
                data: None,
            },
        )?;
        Ok(())
    })
}

/// How long `bench_idle` lets the control room settle, then watches it.
const IDLE_SETTLE: Duration = Duration::from_secs(2);
const IDLE_WINDOW: Duration = Duration::from_secs(30);

/// A private tmux server (its own socket) running one 120×36 pane; killed on drop.
pub(super) struct Pane {
    socket: String,
}

impl Pane {
    pub(super) fn start(command: &[String]) -> Result<Self, String> {
        let pane = Self {
            socket: format!("gitmoot-bench-{}", crate::ids::random_hex(6)),
        };
        let mut args: Vec<String> = ["new-session", "-d", "-x", "120", "-y", "36"]
            .map(String::from)
            .to_vec();
        args.extend(command.iter().cloned());
        pane.tmux(&args)?;
        Ok(pane)
    }

    fn tmux<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Result<String, String> {
        let out = std::process::Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .map_err(|e| format!("tmux: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tmux: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    pub(super) fn pid(&self) -> Result<u32, String> {
        let text = self.tmux(&["display-message", "-p", "#{pane_pid}"])?;
        text.parse()
            .map_err(|_| format!("tmux gave no pane pid: {text:?}"))
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// utime + stime of a process, in clock ticks (fields 14 and 15 of /proc/PID/stat,
/// counted after the parenthesised command name, which may contain spaces).
fn cpu_ticks(pid: u32) -> Result<u64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("process {pid} is gone: {e}"))?;
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or("unreadable /proc stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| -> Result<u64, String> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| "unreadable /proc stat".to_string())
    };
    // After `)` the state is field 3, so utime (14) and stime (15) are at 11 and 12.
    Ok(tick(11)? + tick(12)?)
}

/// CPU of an idle `gitmoot tui` (embedded daemon, a few finished trees): `binary` runs in
/// a private tmux pane; after it settles, its utime+stime over 30 s as a percentage of
/// one core.
pub fn bench_idle(binary: &Path) -> Vec<(String, String)> {
    super::in_scratch("idle", |dir| idle(binary, dir))
        .unwrap_or_else(|e| vec![("tui.idle.error".into(), e)])
}

fn idle(binary: &Path, dir: &Path) -> Result<Vec<(String, String)>, String> {
    let home = crate::home::Home::resolve(Some(dir)).map_err(|e| e.to_string())?;
    {
        let mut store = Store::open_home(&home).map_err(|e| e.to_string())?;
        let size = SeedSize {
            roots: 5,
            jobs_per_root: 8,
            threads: 2,
            messages: 40,
            live: false,
        };
        seed(&mut store, size, crate::clock::now_ms()).map_err(|e| e.to_string())?;
    }
    let pane = Pane::start(&[
        binary.display().to_string(),
        "--home".into(),
        dir.display().to_string(),
        "tui".into(),
    ])?;
    std::thread::sleep(IDLE_SETTLE);
    let pid = pane.pid()?;
    // The embedded daemon is the control room's own `daemon run` child: count it too.
    let daemon: Option<u32> =
        crate::daemon::lock::holder(&home.daemon_lock_path()).and_then(|p| p.parse().ok());
    let ticks = || -> Result<u64, String> {
        Ok(cpu_ticks(pid)? + daemon.map(cpu_ticks).transpose()?.unwrap_or(0))
    };
    let before = ticks()?;
    let t = Instant::now();
    std::thread::sleep(IDLE_WINDOW);
    let after = ticks()?;
    if let Some(d) = daemon {
        // SAFETY: a plain signal to the daemon this bench's control room started.
        unsafe {
            libc::kill(d as i32, libc::SIGTERM);
        }
    }
    let secs = t.elapsed().as_secs_f64();
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let cpu_s = (after - before) as f64 / hz;
    Ok(vec![
        ("tui.idle.window_s".into(), format!("{secs:.0}")),
        ("tui.idle.cpu_ms".into(), format!("{:.0}", cpu_s * 1_000.0)),
        (
            "tui.idle.cpu_percent".into(),
            format!("{:.2}", cpu_s / secs * 100.0),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loader_sees_every_seeded_root_and_the_snapshot_renders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gitmoot.db");
        let size = SeedSize {
            roots: 10,
            jobs_per_root: 20,
            threads: 3,
            messages: 300,
            live: true,
        };
        let now = 1_800_000_000_000;
        let seeded = {
            let mut store = Store::open(&path).unwrap();
            seed(&mut store, size, now).unwrap()
        };
        assert_eq!(seeded.jobs, 200);
        let mut loader = Loader::new(Store::open(&path).unwrap(), DaemonStatus::Embedded);
        let snap = loader.load(now).unwrap();
        let mut loaded: Vec<&str> = snap.roots.iter().map(|r| r.id.as_str()).collect();
        loaded.sort();
        assert_eq!(
            loaded,
            seeded.roots.iter().map(String::as_str).collect::<Vec<_>>()
        );
        let jobs: usize = snap.roots.iter().map(|r| count(&r.tree)).sum();
        assert_eq!(jobs, 200);
        assert_eq!(snap.attention.len(), 1, "tree 7 awaits a human");
        assert_eq!(snap.threads.len(), 3);
        // Only the newest 6 of 300 messages stay unread: 8 mentions (two carry a cc).
        assert_eq!(snap.inboxes.iter().map(|i| i.unread).sum::<u32>(), 8);
        assert_eq!(snap.threads.iter().map(|t| t.unread).sum::<u32>(), 8);
        let screen = render_frame(&view_state(&snap), &snap, &Theme::default_dark());
        assert!(screen.contains("Review change #"), "{screen}");

        let mut writer = Store::open(&path).unwrap();
        settle_one(&mut writer, &seeded.running[0], now + 1).unwrap();
        let snap = loader.load(now + 1).unwrap();
        let settled = snap
            .roots
            .iter()
            .flat_map(|r| r.tree.children.iter())
            .find(|n| n.id == seeded.running[0])
            .unwrap();
        assert_eq!(settled.state, gitmoot_ui::view::JobState::Succeeded);

        // The loader reuses its chat panes only while chat is unchanged: a mark-read (which
        // appends no event) and a new message both show on the next load.
        let agent = snap.inboxes[0].agent.clone();
        let before = snap.inboxes[0].unread;
        writer
            .write(|tx| inbox::mark_read(tx, &agent, None, &ReadSelection::All))
            .unwrap();
        let snap = loader.load(now + 2).unwrap();
        let total: u32 = snap.inboxes.iter().map(|i| i.unread).sum();
        assert_eq!(total, 8 - before);
        assert!(snap.inboxes.iter().all(|i| i.agent != agent));
        let open = snap.transcript.as_ref().unwrap();
        let (thread_id, seqs) = (open.thread_id.clone(), open.messages.len());
        let thread = crate::store::chat::thread(writer.conn(), &thread_id)
            .unwrap()
            .unwrap();
        writer
            .write(|tx| {
                messages::append(
                    tx,
                    &ManualClock::new(now + 3),
                    &thread,
                    Post::system("a fresh notice"),
                )
            })
            .unwrap();
        let snap = loader.load(now + 3).unwrap();
        let open = snap.transcript.as_ref().unwrap();
        assert_eq!(open.messages.len(), seqs + 1);
        assert_eq!(open.messages.last().unwrap().body, "a fresh notice");
    }

    fn count(n: &gitmoot_ui::view::JobNode) -> usize {
        1 + n.children.iter().map(count).sum::<usize>()
    }
}
