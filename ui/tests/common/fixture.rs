//! A fixed, realistic snapshot for the ui tests: snapshots, screenshots and the bench.
//!
//! Owns fixture data only: a paused fan-out with an ask-gate and a failure escalation, a
//! finished review, a fresh root, a killed root, a chat thread with mentions and inboxes.
//! The clock is [`NOW`]; nothing here reads the real time. Hostile escape sequences are
//! planted in agent text so every rendering proves the sanitizer runs.

use gitmoot_ui::view::*;

/// The fixed "now" of every fixture (2026-12-02 17:00:00 UTC).
pub const NOW: i64 = 1_796_230_800_000;
const MIN: i64 = 60_000;

fn node(id: &str, kind: JobKind, agent: &str, action: &str, state: JobState) -> JobNode {
    JobNode {
        id: id.to_string(),
        parent_id: id.rsplit_once('/').map(|(p, _)| p.to_string()),
        kind,
        delegation_id: match kind {
            JobKind::Leg => id.rsplit('/').next().map(str::to_string),
            _ => None,
        },
        agent: agent.to_string(),
        action: action.to_string(),
        state,
        decision: None,
        summary: None,
        depth: id.matches('/').count() as u32,
        deps: Vec::new(),
        created_ms: NOW - 2 * MIN,
        started_ms: None,
        finished_ms: None,
        tokens: 0,
        attempt: 1,
        unreadable: None,
        children: Vec::new(),
    }
}

fn timed(
    mut n: JobNode,
    started_ago_min: i64,
    finished_ago_min: Option<i64>,
    tokens: u64,
) -> JobNode {
    n.started_ms = Some(NOW - started_ago_min * MIN);
    n.finished_ms = finished_ago_min.map(|m| NOW - m * MIN);
    n.tokens = tokens;
    n
}

fn decided(mut n: JobNode, decision: &str, summary: &str) -> JobNode {
    n.decision = Some(decision.to_string());
    n.summary = Some(summary.to_string());
    n
}

fn deps(mut n: JobNode, d: &[&str]) -> JobNode {
    n.deps = d.iter().map(|s| s.to_string()).collect();
    n
}

/// The paused fan-out: coordinator → schema (asking), api (done), db (running, after
/// schema), tests (queued, after api and db), docs (failed, escalated).
fn payments_root() -> RootView {
    let r = "job-k3v7q2ma";
    let mut root = decided(
        timed(
            node(r, JobKind::Root, "lead", "implement", JobState::Succeeded),
            25,
            Some(23),
            8_420,
        ),
        "delegated",
        "Split the payments refactor into schema, api, db, tests and docs legs.",
    );
    root.children = vec![
        decided(
            timed(
                node(
                    &format!("{r}/schema"),
                    JobKind::Leg,
                    "codex",
                    "ask",
                    JobState::Blocked,
                ),
                23,
                Some(12),
                15_870,
            ),
            "blocked",
            "Need a decision on the ledger migration before writing it.",
        ),
        decided(
            timed(
                node(
                    &format!("{r}/api"),
                    JobKind::Leg,
                    "claude-rev",
                    "review",
                    JobState::Succeeded,
                ),
                23,
                Some(15),
                21_300,
            ),
            "approved",
            "Handlers are consistent; two naming nits.",
        ),
        deps(
            timed(
                node(
                    &format!("{r}/db"),
                    JobKind::Leg,
                    "codex",
                    "review",
                    JobState::Running,
                ),
                4,
                None,
                6_100,
            ),
            &["schema"],
        ),
        deps(
            node(
                &format!("{r}/tests"),
                JobKind::Leg,
                "kimi",
                "ask",
                JobState::Queued,
            ),
            &["api", "db"],
        ),
        decided(
            timed(
                node(
                    &format!("{r}/docs"),
                    JobKind::Leg,
                    "scribe",
                    "ask",
                    JobState::Failed,
                ),
                23,
                Some(20),
                900,
            ),
            "failed",
            "docs generator crashed\x1b]0;pwned\x07",
        ),
    ];
    RootView {
        id: r.to_string(),
        title: "Refactor payments API onto the new ledger".to_string(),
        state: RunState::AwaitingHuman,
        repo: Some("acme/payments".to_string()),
        created_ms: NOW - 25 * MIN,
        finished_ms: None,
        tokens: 52_590,
        cost_usd: 0.84,
        tree: root,
    }
}

fn release_root() -> RootView {
    let r = "job-m2x9b4rt";
    let mut root = decided(
        timed(
            node(r, JobKind::Root, "lead", "review", JobState::Succeeded),
            190,
            Some(188),
            4_100,
        ),
        "delegated",
        "Two reviewers, then a summary.",
    );
    root.children = vec![
        decided(
            timed(
                node(
                    &format!("{r}/wording"),
                    JobKind::Leg,
                    "claude-rev",
                    "review",
                    JobState::Succeeded,
                ),
                188,
                Some(184),
                9_800,
            ),
            "approved",
            "Wording is clear.",
        ),
        decided(
            timed(
                node(
                    &format!("{r}/links"),
                    JobKind::Leg,
                    "codex",
                    "review",
                    JobState::Succeeded,
                ),
                188,
                Some(181),
                7_250,
            ),
            "approved",
            "All links resolve.",
        ),
        decided(
            timed(
                node(
                    &format!("{r}/continuation"),
                    JobKind::Continuation,
                    "lead",
                    "review",
                    JobState::Succeeded,
                ),
                181,
                Some(179),
                3_900,
            ),
            "approved",
            "Release notes approved by both reviewers.",
        ),
    ];
    RootView {
        id: r.to_string(),
        title: "Review the 2.4 release notes".to_string(),
        state: RunState::Done,
        repo: Some("acme/site".to_string()),
        created_ms: NOW - 190 * MIN,
        finished_ms: Some(NOW - 179 * MIN),
        tokens: 25_050,
        cost_usd: 0.31,
        tree: root,
    }
}

fn audit_root() -> RootView {
    let r = "job-p8c3d1wz";
    RootView {
        id: r.to_string(),
        title: "Nightly dependency audit".to_string(),
        state: RunState::Running,
        repo: Some("acme/payments".to_string()),
        created_ms: NOW - 2 * MIN,
        finished_ms: None,
        tokens: 1_200,
        cost_usd: 0.02,
        tree: timed(
            node(r, JobKind::Root, "auditor", "ask", JobState::Running),
            2,
            None,
            1_200,
        ),
    }
}

fn killed_root() -> RootView {
    let r = "job-a5f6g7h8";
    let mut root = timed(
        node(r, JobKind::Root, "lead", "ask", JobState::Succeeded),
        70,
        Some(68),
        2_000,
    );
    root.children = vec![
        timed(
            node(
                &format!("{r}/scan"),
                JobKind::Leg,
                "codex",
                "ask",
                JobState::Cancelled,
            ),
            68,
            Some(50),
            0,
        ),
        decided(
            timed(
                node(
                    &format!("{r}/finalize"),
                    JobKind::Finalize,
                    "lead",
                    "ask",
                    JobState::Succeeded,
                ),
                50,
                Some(49),
                1_100,
            ),
            "answered",
            "Stopped by operator; nothing was scanned.",
        ),
    ];
    RootView {
        id: r.to_string(),
        title: "Scan for leaked credentials".to_string(),
        state: RunState::Killed,
        repo: None,
        created_ms: NOW - 70 * MIN,
        finished_ms: Some(NOW - 49 * MIN),
        tokens: 3_100,
        cost_usd: 0.04,
        tree: root,
    }
}

fn attention() -> Vec<AttentionItem> {
    vec![
        AttentionItem {
            job_id: "job-k3v7q2ma/schema".to_string(),
            root_id: "job-k3v7q2ma".to_string(),
            agent: "codex".to_string(),
            why: Some("Need a decision on the ledger migration before writing it.".to_string()),
            opened_ms: NOW - 12 * MIN,
            thread: Some("job-3f2a9c1b7e4d".to_string()),
            kind: AttentionKind::Ask {
                questions: vec![
                    Question {
                        id: "migration".to_string(),
                        prompt: "Migrate the ledger table in place or via a shadow table?"
                            .to_string(),
                        choices: vec!["in place".to_string(), "shadow table".to_string()],
                    },
                    Question {
                        id: "window".to_string(),
                        prompt: "Which maintenance window may the migration use?".to_string(),
                        choices: Vec::new(),
                    },
                ],
            },
        },
        AttentionItem {
            job_id: "job-k3v7q2ma".to_string(),
            root_id: "job-k3v7q2ma".to_string(),
            agent: "lead".to_string(),
            why: None,
            opened_ms: NOW - 20 * MIN,
            thread: None,
            kind: AttentionKind::Failure {
                failed_leg: "job-k3v7q2ma/docs".to_string(),
                reason: "exit status 1: docgen: template not found\x1b[2J".to_string(),
            },
        },
    ]
}

fn threads() -> Vec<ThreadView> {
    let t = |id: &str, slug: &str, title: &str, repo: &str, state, ago: i64, unread| ThreadView {
        id: id.to_string(),
        slug: slug.to_string(),
        title: title.to_string(),
        repo: Some(repo.to_string()),
        state,
        last_activity_ms: NOW - ago * MIN,
        unread,
    };
    vec![
        t(
            "th-payments",
            "payments-refactor",
            "Payments refactor",
            "acme/payments",
            ThreadState::Open,
            3,
            2,
        ),
        t(
            "job-3f2a9c1b7e4d",
            "job-3f2a9c1b7e4d",
            "Questions from job-k3v7q2ma/schema",
            "acme/payments",
            ThreadState::Open,
            12,
            0,
        ),
        t(
            "th-release",
            "release-2-4",
            "Release 2.4",
            "acme/site",
            ThreadState::Archived,
            178,
            0,
        ),
    ]
}

fn transcript() -> Transcript {
    let m = |seq, kind, author: &str, body: &str, ago: i64| Message {
        seq,
        kind,
        author: author.to_string(),
        body: body.to_string(),
        mentions: Vec::new(),
        reply_to: None,
        promoted_job_id: None,
        ts_ms: NOW - ago * MIN,
    };
    let mut ask = m(
        2,
        MessageKind::Chat,
        "ana",
        "@claude-rev can you review the refund handler before we merge?",
        9,
    );
    ask.mentions = vec!["claude-rev".to_string()];
    let mut promo = m(
        3,
        MessageKind::PromotionRequest,
        "ana",
        "promoted #2 to review",
        8,
    );
    promo.promoted_job_id = Some("job-r4n8s2kd".to_string());
    promo.reply_to = Some(2);
    let mut reply = m(
        5,
        MessageKind::Chat,
        "ben",
        "@claude-rev @codex also check the idempotency keys",
        3,
    );
    reply.mentions = vec!["claude-rev".to_string(), "codex".to_string()];
    reply.reply_to = Some(2);
    Transcript {
        thread_id: "th-payments".to_string(),
        messages: vec![
            m(
                1,
                MessageKind::System,
                "gitmoot",
                "thread created by ana",
                30,
            ),
            ask,
            promo,
            m(
                4,
                MessageKind::JobResult,
                "claude-rev",
                "approved: refund handler is fine\x1b[31m; one nit on logging",
                5,
            ),
            reply,
        ],
    }
}

/// Both inboxes hold unread mentions from the payments thread's transcript.
fn inboxes() -> Vec<Inbox> {
    let item = |seq, author: &str, body: &str, ago: i64| InboxItem {
        thread_id: "th-payments".to_string(),
        seq,
        author: author.to_string(),
        body: body.to_string(),
        read: false,
        ts_ms: NOW - ago * MIN,
    };
    let ask = || {
        item(
            2,
            "ana",
            "@claude-rev can you review the refund handler before we merge?",
            9,
        )
    };
    let keys = || {
        item(
            5,
            "ben",
            "@claude-rev @codex also check the idempotency keys",
            3,
        )
    };
    vec![
        Inbox {
            agent: "claude-rev".to_string(),
            unread: 2,
            items: vec![ask(), keys()],
        },
        Inbox {
            agent: "codex".to_string(),
            unread: 1,
            items: vec![keys()],
        },
    ]
}

/// The coordinator's detail, as `LoadDetail("job-k3v7q2ma")` would load it.
pub fn detail() -> JobDetail {
    let ev = |ago: i64, kind: &str, message: &str| EventRow {
        ts_ms: NOW - ago * MIN,
        kind: kind.to_string(),
        message: message.to_string(),
    };
    let row = |id: &str, agent: &str, action: &str, deps: &[&str], state| DelegationRow {
        id: id.to_string(),
        agent: agent.to_string(),
        action: action.to_string(),
        deps: deps.iter().map(|s| s.to_string()).collect(),
        state: Some(state),
    };
    JobDetail {
        job_id: "job-k3v7q2ma".to_string(),
        agent: "lead".to_string(),
        kind: JobKind::Root,
        action: "implement".to_string(),
        state: JobState::Succeeded,
        attempt: 1,
        prompt: "Refactor the payments API onto the new ledger.\nKeep the public endpoints stable."
            .to_string(),
        result: Some(ResultView {
            decision: "delegated".to_string(),
            summary: "Split the payments refactor into schema, api, db, tests and docs legs."
                .to_string(),
            findings: vec!["- ledger writes are not idempotent today".to_string()],
            delegations: vec![
                row("schema", "codex", "ask", &[], JobState::Blocked),
                row("api", "claude-rev", "review", &[], JobState::Succeeded),
                row("db", "codex", "review", &["schema"], JobState::Running),
                row("tests", "kimi", "ask", &["api", "db"], JobState::Queued),
                row("docs", "scribe", "ask", &[], JobState::Failed),
            ],
            notes: vec![],
        }),
        events: vec![
            ev(25, "queued", "root ask queued for claude"),
            ev(25, "running", "running on claude (attempt 1)"),
            ev(23, "delegation_batch", "5 legs dispatched"),
            ev(
                20,
                "delegation_escalation_requested",
                "docs failed under escalate_human",
            ),
            ev(
                12,
                "delegation_escalation_requested",
                "schema asked 2 questions",
            ),
        ],
        error: None,
        raw_output: Some(
            "thinking…\x1b[1A\x1b[2K{\"gitmoot_result\": {\"decision\": \"approved\"}}".to_string(),
        ),
        activity: Vec::new(),
    }
}

/// The whole fixture snapshot.
pub fn snapshot() -> Snapshot {
    Snapshot {
        now_ms: NOW,
        as_of_ms: NOW - 2_000,
        daemon: DaemonStatus::Embedded,
        counts: Counts {
            running: 2,
            queued: 1,
            awaiting: 2,
            daemons: 1,
            agents: 4,
        },
        roots: vec![release_root(), payments_root(), killed_root(), audit_root()],
        attention: attention(),
        threads: threads(),
        transcript: Some(transcript()),
        inboxes: inboxes(),
        detail: Some(detail()),
        live: gitmoot_ui::live::Live::default(),
        work: gitmoot_ui::work::Work::default(),
        agents: agents(),
        watching: "~/.gitmoot".into(),
        search: Vec::new(),
        usage: None,
    }
}

/// The fleet's agents: one working, one waiting on a human, one idle with an error.
pub fn agents() -> Vec<AgentLive> {
    use gitmoot_types::{AutonomyPolicy, RuntimeKind};
    let agent = |name: &str, runtime, state, running, waiting| AgentLive {
        name: name.into(),
        runtime,
        model: None,
        policy: AutonomyPolicy::ReadOnly,
        state,
        running,
        waiting,
        now: None,
        now_job: None,
        unread: 0,
        tokens_today: 0,
        usd_today: 0.0,
        last_error: None,
        last_error_job: None,
    };
    vec![
        AgentLive {
            model: Some("sonnet".into()),
            now: Some("$ cargo test -p payments".into()),
            now_job: Some("job-k3v7q2ma/db".into()),
            unread: 2,
            tokens_today: 48_200,
            usd_today: 0.42,
            ..agent("claude", RuntimeKind::Claude, AgentState::Working, 1, 0)
        },
        agent("kimi", RuntimeKind::Kimi, AgentState::Waiting, 0, 1),
        AgentLive {
            last_error: Some("codex exited with code 1: rate limited".into()),
            last_error_job: Some("job-m2x9b4rt".into()),
            ..agent("scribe", RuntimeKind::Codex, AgentState::Idle, 0, 0)
        },
    ]
}

/// A large snapshot for benchmarks: `roots` roots of `legs` legs each.
pub fn large(roots: usize, legs: usize) -> Snapshot {
    let mut s = snapshot();
    s.roots = (0..roots)
        .map(|i| {
            let mut r = release_root();
            r.id = format!("job-bench{i:04}");
            r.created_ms = NOW - i as i64 * MIN;
            r.tree.id = r.id.clone();
            r.tree.children = (0..legs)
                .map(|l| {
                    let state = JobState::ALL[l % JobState::ALL.len()];
                    node(
                        &format!("{}/leg{l}", r.id),
                        JobKind::Leg,
                        "codex",
                        "review",
                        state,
                    )
                })
                .collect();
            r
        })
        .collect();
    s
}
