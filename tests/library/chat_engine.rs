//! Chat against the engine on a real SQLite file: promotion records a queued job with the
//! back-link, settling it through `ChatHooks` posts one job_result, an ask pause creates
//! the job thread with the questions, `chat answer` resumes the tree and the
//! continuation's result lands in the same thread; the auto-respond sweep's switches,
//! cap, cooldown and moot exclusion.

use super::pg;

use gitmoot::chat::answer::{Answered, answer_message, resolve_target};
use gitmoot::chat::messages::{SendOptions, send_message};
use gitmoot::chat::moot::{Convened, MootRequest, convene};
use gitmoot::chat::promote::{Promoted, task_message};
use gitmoot::chat::slug::job_thread_slug;
use gitmoot::chat::threads::{self, NewThread};
use gitmoot::chat::{ChatError, ChatHooks, autorespond_sweep, inbox, write_retry};
use gitmoot::clock::ManualClock;
use gitmoot::config::Config;
use gitmoot::contract::GitmootResult;
use gitmoot::domain::{Action, AutonomyPolicy, Capability, JobKind, JobState, RuntimeKind};
use gitmoot::engine::{self, Env, Hooks, Outcome, Settlement};
use gitmoot::store::Store;
use gitmoot::store::agents::{self, Agent};
use gitmoot::store::chat::{self as rows, AuthorKind, MessageKind, Thread};
use gitmoot::store::jobs::{self, Job};
use serde_json::json;

const REPO: &str = "owner/repo";

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    /// The PostgreSQL database under `store`, when the suite runs on one.
    _db: Option<pg::Database>,
    clock: ManualClock,
    cfg: Config,
}

fn agent(name: &str, autorespond: bool) -> Agent {
    Agent {
        name: name.into(),
        runtime: RuntimeKind::Shell,
        command: Some("cat".into()),
        model: None,
        effort: None,
        capabilities: vec![Capability::Ask, Capability::Review],
        policy: AutonomyPolicy::ReadOnly,
        repos: vec![REPO.into()],
        chat_autorespond: autorespond,
        created_ms: 0,
    }
}

fn fixture(agents_: &[(&str, bool)]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, db) = pg::test_store(dir.path());
    store
        .write(|tx| {
            for (a, auto) in agents_ {
                agents::insert(tx, &agent(a, *auto))?;
            }
            Ok::<_, gitmoot::store::StoreError>(())
        })
        .unwrap();
    Fixture {
        _dir: dir,
        store,
        _db: db,
        clock: ManualClock::new(1_800_000_000_000),
        cfg: Config::default(),
    }
}

impl Fixture {
    fn thread(&mut self, name: &str) -> Thread {
        let clock = &self.clock;
        write_retry(&mut self.store, |tx| {
            threads::create(
                tx,
                clock,
                NewThread {
                    name,
                    repo: REPO,
                    title: None,
                    created_by: "human",
                },
            )
        })
        .unwrap()
    }

    fn send(&mut self, thread: &str, body: &str, as_agent: Option<&str>) -> Result<i64, ChatError> {
        let opts = SendOptions {
            as_agent: as_agent.map(String::from),
            ..SendOptions::default()
        };
        send_message(&mut self.store, &self.clock, thread, None, body, &opts).map(|s| s.message.seq)
    }

    fn settle(&mut self, job_id: &str, result: serde_json::Value) -> JobState {
        let r: GitmootResult = serde_json::from_value(result).unwrap();
        let env = Env {
            clock: &self.clock,
            cfg: &self.cfg.orchestrate,
            hooks: &ChatHooks,
        };
        self.store
            .write(|tx| engine::settle(tx, env, job_id, Settlement::of(Outcome::Parsed(r))))
            .unwrap()
    }

    /// A root ask job for `coord` on the fixture's repo, submitted from the CLI.
    fn ask_root(&mut self, prompt: &str) -> String {
        let clock = &self.clock;
        self.store
            .write(|tx| {
                engine::submit_root(
                    tx,
                    clock,
                    engine::SubmitRoot {
                        repo: Some(REPO.into()),
                        ..engine::SubmitRoot::new("coord", Action::Ask, prompt, "cli")
                    },
                )
            })
            .unwrap()
    }

    /// Runs the chat hook for an ask round `esc` opened on `job`.
    fn ask_round_opened(&mut self, job: &Job, esc: i64) {
        let clock = &self.clock;
        self.store
            .write(|tx| ChatHooks.ask_round_opened(tx, clock, job, esc))
            .unwrap();
    }

    /// Convenes `alice` and `bob` in a moot capped at `cap` messages.
    fn moot(&mut self, name: &str, topic: &str, cap: u32) -> Convened {
        let (clock, cfg) = (&self.clock, &self.cfg);
        write_retry(&mut self.store, |tx| {
            convene(
                tx,
                clock,
                cfg,
                MootRequest {
                    name,
                    topic,
                    agents: vec!["alice".into(), "bob".into()],
                    repo: REPO,
                    max_messages: Some(cap),
                },
            )
        })
        .unwrap()
    }

    /// Promotes `body` in `thread` to a job, as `chat task` does.
    fn task(&mut self, thread: &str, body: &str, action: Action) -> Result<Promoted, ChatError> {
        task_message(&mut self.store, &self.clock, thread, None, body, action)
    }

    /// Answers the open round of `thread` in chat, as a human would.
    fn answer(&mut self, thread: &str, text: &str) -> Result<Answered, ChatError> {
        let env = Env {
            clock: &self.clock,
            cfg: &self.cfg.orchestrate,
            hooks: &ChatHooks,
        };
        answer_message(&mut self.store, env, thread, None, text)
    }

    fn messages(&self, t: &Thread) -> Vec<rows::Message> {
        rows::messages(self.store.conn(), &t.id, 0, None).unwrap()
    }

    fn sweep(&mut self) -> Vec<String> {
        let (clock, cfg) = (&self.clock, &self.cfg);
        write_retry(&mut self.store, |tx| autorespond_sweep(tx, clock, cfg)).unwrap()
    }
}

#[test]
fn promotion_records_a_queued_job_and_its_result_posts_back_once() {
    let mut f = fixture(&[("codex-b", false)]);
    let t = f.thread("release-room");
    f.send(
        "release-room",
        "@codex-b can you inspect the adapter?",
        None,
    )
    .unwrap();
    let p = f
        .task(
            "release-room",
            "@codex-b review the adapter manifest",
            Action::Review,
        )
        .unwrap();
    let job = jobs::require(f.store.conn(), &p.job_id).unwrap();
    assert_eq!(job.state, JobState::Queued);
    assert_eq!(job.kind, JobKind::Root);
    assert_eq!(job.action, Action::Review);
    assert_eq!(job.repo.as_deref(), Some(REPO));
    assert_eq!(job.dispatched_by, format!("chat:{}", t.id));
    assert!(
        job.prompt
            .contains("Task promoted from the chat thread below")
    );
    assert!(
        job.prompt
            .contains("[chat] human: @codex-b can you inspect the adapter?")
    );
    let msgs = f.messages(&t);
    assert_eq!(msgs[1].kind, MessageKind::PromotionRequest);
    assert_eq!(msgs[1].promoted_job_id.as_deref(), Some(p.job_id.as_str()));
    // A promotion request delivers nothing to an inbox.
    assert_eq!(
        inbox::inbox(&f.store.conn(), "codex-b", true, None)
            .unwrap()
            .len(),
        1
    );

    let state = f.settle(&p.job_id, json!({"decision": "approved", "summary": "manifest is fine @codex-b", "findings": ["one nit"]}));
    assert_eq!(state, JobState::Succeeded);
    let msgs = f.messages(&t);
    assert_eq!(msgs.len(), 3);
    let r = &msgs[2];
    assert_eq!(r.kind, MessageKind::JobResult);
    assert_eq!(r.author_kind, AuthorKind::Agent);
    assert_eq!(r.author_name, "codex-b");
    assert_eq!(r.reply_to, Some(msgs[1].seq));
    assert!(r.body.contains("manifest is fine"), "{}", r.body);
    assert!(r.body.contains("- one nit"), "{}", r.body);
    assert_eq!(r.refs[0].kind, "job");
    assert_eq!(r.refs[0].id, p.job_id);
    assert!(
        r.mentions.is_empty(),
        "a job_result is never mention-scanned"
    );
    // Hooks are idempotent per job: a second call posts nothing.
    let job = jobs::require(f.store.conn(), &p.job_id).unwrap();
    let clock = &f.clock;
    f.store
        .write(|tx| ChatHooks.job_finished(tx, clock, &job))
        .unwrap();
    assert_eq!(f.messages(&t).len(), 3);
    // The result's text never makes a body promotable.
    let err = f
        .task("release-room", "follow up on that", Action::Ask)
        .unwrap_err();
    assert!(err.to_string().contains("exactly one @agent"), "{err}");
}

#[test]
fn a_refused_dispatch_writes_nothing_and_does_not_poison_the_dedupe() {
    let mut f = fixture(&[("codex-b", false)]);
    let t = f.thread("room");
    let err = f
        .task("room", "@codex-b build it", Action::Implement)
        .unwrap_err();
    assert!(err.to_string().contains("implement"), "{err}");
    // A validation refusal exits 2, so it changes nothing: not even the request (issue 14).
    assert!(f.messages(&t).is_empty(), "a refused promotion was posted");
    assert!(
        jobs::list(f.store.conn(), &Default::default())
            .unwrap()
            .is_empty()
    );
    let p = f.task("room", "@codex-b build it", Action::Ask).unwrap();
    let err = f
        .task("room", "@codex-b build it", Action::Ask)
        .unwrap_err();
    assert!(err.to_string().contains("identical promotion"), "{err}");
    f.clock.advance(61_000);
    let again = f.task("room", "@codex-b build it", Action::Ask).unwrap();
    assert_ne!(again.job_id, p.job_id);
}

fn escalation_row(f: &mut Fixture, job_id: &str, root_id: &str) -> i64 {
    f.store
        .write(|tx| {
            tx.one(
                "INSERT INTO escalations(root_id, job_id, kind, questions, reason, opened_ms) VALUES (?1, ?2, 'ask', ?3, '', 1) RETURNING id",
                gitmoot::store::tx::params![root_id, job_id, json!([{"id": "q1", "prompt": "Which port?", "choices": ["8080", "9090"]}, {"id": "q2", "prompt": "Why?"}]).to_string()],
            )
        })
        .unwrap()
}

#[test]
fn the_ask_gate_hook_creates_the_job_thread_with_the_questions() {
    let mut f = fixture(&[("coord", false)]);
    let root = f.ask_root("plan it");
    let esc = escalation_row(&mut f, &root, &root);
    let job = jobs::require(f.store.conn(), &root).unwrap();
    f.ask_round_opened(&job, esc);
    let slug = job_thread_slug(&root);
    let t = threads::resolve(&f.store.conn(), &slug, Some(REPO)).unwrap();
    assert_eq!(t.repo, REPO);
    assert!(t.title.ends_with("— awaiting answer"), "{}", t.title);
    let msgs = f.messages(&t);
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].kind, MessageKind::System);
    assert_eq!(
        msgs[0].body,
        "- q1: Which port? (choices: 8080, 9090)\n- q2: Why?"
    );
    assert_eq!(msgs[0].refs[0].id, root);
    let stamped: String = f
        .store
        .conn()
        .one(
            "SELECT thread_id FROM escalations WHERE id = ?1",
            gitmoot::store::tx::params![esc],
        )
        .unwrap();
    assert_eq!(stamped, t.id);
    assert_eq!(resolve_target(&f.store.conn(), &t).unwrap(), root);
    let inbox = inbox::inbox(&f.store.conn(), "coord", true, None).unwrap();
    assert_eq!(
        inbox.len(),
        1,
        "the asking agent sees the round in its inbox"
    );
    // A second round on the same job reuses the thread.
    let esc2 = escalation_row(&mut f, &root, &root);
    f.ask_round_opened(&job, esc2);
    assert_eq!(threads::list(&f.store.conn(), None, true).unwrap().len(), 1);
    assert_eq!(f.messages(&t).len(), 2);
}

#[test]
fn an_ask_pause_is_answered_in_chat_and_the_continuation_posts_back() {
    let mut f = fixture(&[("coord", false)]);
    let root = f.ask_root("pick a port");
    f.settle(
        &root,
        json!({"decision": "approved", "summary": "need input", "human_questions": [{"id": "q1", "prompt": "Which port?"}]}),
    );
    let slug = job_thread_slug(&root);
    let t = threads::resolve(&f.store.conn(), &slug, None).unwrap();
    let msgs = f.messages(&t);
    assert_eq!(msgs.len(), 1, "a pause is not an ending: no job_result yet");
    assert_eq!(msgs[0].body, "- q1: Which port?");

    let a = f.answer(&slug, "q1: use port 8080").unwrap();
    assert_eq!(a.job_id, root);
    let cont = a
        .continuation
        .clone()
        .expect("an answer continuation is enqueued");
    let cjob = jobs::require(f.store.conn(), &cont).unwrap();
    assert_eq!(cjob.kind, JobKind::Continuation);
    assert!(cjob.prompt.contains("8080"), "{}", cjob.prompt);
    let msgs = f.messages(&t);
    assert_eq!(msgs[1].kind, MessageKind::Chat);
    assert_eq!(msgs[1].body, "q1: use port 8080");
    assert_eq!(msgs[1].reply_to, Some(1));
    // Answering twice is refused and records nothing.
    let err = f.answer(&slug, "q1: 9090").unwrap_err();
    assert!(err.to_string().contains("no pending question"), "{err}");
    assert_eq!(f.messages(&t).len(), 2);

    f.settle(
        &cont,
        json!({"decision": "approved", "summary": "using 8080"}),
    );
    let msgs = f.messages(&t);
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[2].kind, MessageKind::JobResult);
    assert_eq!(msgs[2].reply_to, Some(1));
    assert!(msgs[2].body.contains("using 8080"));
    let run = gitmoot::store::runs::require(f.store.conn(), &root).unwrap();
    assert!(run.state.is_terminal(), "{:?}", run.state);
}

#[test]
fn answer_without_a_linked_job_is_refused() {
    let mut f = fixture(&[]);
    f.thread("plain");
    let err = f.answer("plain", "q1: x").unwrap_err();
    assert!(
        err.to_string().contains("not linked to a paused job"),
        "{err}"
    );
}

#[test]
fn the_sweep_is_off_unless_both_switches_are_set() {
    let mut f = fixture(&[("responder", true), ("quiet", false)]);
    f.thread("room");
    f.send("room", "@responder @quiet thoughts?", None).unwrap();
    assert!(f.sweep().is_empty(), "global switch off");
    f.cfg.chat.auto_respond = true;
    let jobs_ = f.sweep();
    assert_eq!(jobs_.len(), 1, "only the enrolled agent");
    let job = jobs::require(f.store.conn(), &jobs_[0]).unwrap();
    assert_eq!(job.agent, "responder");
    assert_eq!(job.action, Action::Ask);
    assert!(job.prompt.contains("Reply conversationally"));
    assert!(
        inbox::inbox(&f.store.conn(), "responder", true, None)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        inbox::inbox(&f.store.conn(), "quiet", true, None)
            .unwrap()
            .len(),
        1
    );
    assert!(f.sweep().is_empty(), "the mention was marked read");
}

#[test]
fn the_sweep_defers_in_flight_and_cooldown_and_parks_at_the_cap() {
    let mut f = fixture(&[("responder", true)]);
    f.cfg.chat.auto_respond = true;
    let t = f.thread("room");
    for i in 1..=4 {
        f.send("room", &format!("@responder round {i}"), None)
            .unwrap();
        let ids = f.sweep();
        assert_eq!(ids.len(), 1, "round {i}");
        // Another mention while the ask is in flight is deferred, not stacked.
        f.send("room", "@responder and also", None).unwrap();
        assert!(f.sweep().is_empty());
        f.settle(
            &ids[0],
            json!({"decision": "approved", "summary": format!("reply {i}")}),
        );
        if i < 4 {
            // Inside the cooldown the trigger waits (left unread), then fires.
            assert!(f.sweep().is_empty());
            assert_eq!(
                inbox::inbox(&f.store.conn(), "responder", true, None)
                    .unwrap()
                    .len(),
                1
            );
            f.clock.advance(121_000);
        }
    }
    let results = rows::count_kind(
        f.store.conn(),
        &t.id,
        MessageKind::JobResult,
        Some("responder"),
    )
    .unwrap();
    assert_eq!(results, 4);
    f.send("room", "@responder one more", None).unwrap();
    assert!(f.sweep().is_empty(), "at the cap nothing is dispatched");
    let notice = "auto-respond cap reached for @responder; needs a human";
    let notices = f.messages(&t).iter().filter(|m| m.body == notice).count();
    assert_eq!(notices, 1);
    assert!(
        inbox::inbox(&f.store.conn(), "responder", true, None)
            .unwrap()
            .is_empty(),
        "parked"
    );
    f.send("room", "@responder again", None).unwrap();
    assert!(f.sweep().is_empty());
    assert_eq!(
        f.messages(&t).iter().filter(|m| m.body == notice).count(),
        1,
        "posted once"
    );
}

#[test]
fn moot_threads_and_non_chat_kinds_never_trigger_the_sweep() {
    let mut f = fixture(&[("alice", true), ("bob", true)]);
    f.cfg.chat.auto_respond = true;
    let c = f.moot("paper-review", "compare options", 3);
    assert_eq!(c.seats.len(), 2);
    f.send("paper-review", "@bob what do you think?", Some("alice"))
        .unwrap();
    assert!(f.sweep().is_empty(), "moot threads are excluded");
    // The announcement's system mentions are in the inbox but never trigger.
    f.thread("room");
    let clock = &f.clock;
    let t = threads::resolve(&f.store.conn(), "room", None).unwrap();
    write_retry(&mut f.store, |tx| {
        let mut post = gitmoot::chat::messages::Post::system("@alice note");
        post.deliver = vec![("alice".into(), true)];
        gitmoot::chat::messages::append(tx, clock, &t, post)
    })
    .unwrap();
    assert!(f.sweep().is_empty());
}

#[test]
fn a_moot_hard_stops_at_its_cap_and_posts_the_overrun_once() {
    let mut f = fixture(&[("alice", false), ("bob", false)]);
    let c = f.moot("triage", "which bug first?", 2);
    let ann = &f.messages(&c.thread)[0];
    assert!(
        ann.body
            .starts_with("MOOT convened: which bug first?. Seats: @alice, @bob. Message cap: 2")
    );
    for s in &c.seats {
        let job = jobs::require(f.store.conn(), &s.job_id).unwrap();
        assert_eq!(job.action, Action::Ask);
        assert!(job.prompt.contains("--as ") && !job.prompt.contains("--home"));
        let seat = gitmoot::chat::moot::seat_for_job(&f.store.conn(), &job)
            .unwrap()
            .unwrap();
        assert_eq!(seat.agent, s.agent);
        assert_eq!(seat.thread_id, c.thread.id);
    }
    f.send("triage", "first", Some("alice")).unwrap();
    f.send("triage", "second", Some("bob")).unwrap();
    for _ in 0..2 {
        let err = f.send("triage", "third", Some("alice")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("moot cap reached: thread \"triage\" hit its 2-message cap"),
            "{err}"
        );
    }
    let overruns = f
        .messages(&c.thread)
        .iter()
        .filter(|m| m.body.starts_with("MOOT CAP REACHED"))
        .count();
    assert_eq!(overruns, 1);
    f.send("triage", "humans are never capped", None).unwrap();
    // Seat results still arrive past the cap.
    f.settle(
        &c.seats[0].job_id,
        json!({"decision": "approved", "summary": "KNOW a; UNSURE b; ASK c"}),
    );
    let last = f.messages(&c.thread).pop().unwrap();
    assert_eq!(last.kind, MessageKind::JobResult);
    assert_eq!(last.reply_to, Some(ann.seq));
}

#[test]
fn a_promoted_message_is_tagged_not_copied_and_only_chat_messages_are_promotable_once() {
    let mut f = fixture(&[("codex-b", false)]);
    let t = f.thread("room");
    f.send("room", "@codex-b look into the flaky test", None)
        .unwrap();
    let promote = |f: &mut Fixture, seq| {
        gitmoot::chat::promote::promote_message(
            &mut f.store,
            &f.clock,
            "room",
            None,
            seq,
            Action::Ask,
        )
    };
    let p = promote(&mut f, 1).unwrap();
    assert_eq!(p.agent, "codex-b");
    assert_eq!(
        p.message.seq, 1,
        "the original message is the promoting one"
    );
    let msgs = f.messages(&t);
    assert_eq!(msgs.len(), 1, "no copy was posted: {msgs:?}");
    assert_eq!(msgs[0].kind, MessageKind::Chat);
    assert_eq!(msgs[0].promoted_job_id.as_deref(), Some(p.job_id.as_str()));
    let again = promote(&mut f, 1).unwrap_err().to_string();
    assert!(
        again.contains("already promoted") && again.contains(&p.job_id),
        "{again}"
    );
    f.settle(
        &p.job_id,
        json!({"decision": "approved", "summary": "ask @codex-b again later"}),
    );
    let result = f.messages(&t).pop().unwrap();
    assert_eq!(result.kind, MessageKind::JobResult);
    assert_eq!(result.reply_to, Some(1), "the result answers the original");
    let err = promote(&mut f, result.seq).unwrap_err().to_string();
    assert!(err.contains("only chat messages can be promoted"), "{err}");
    let s = &threads::summaries(&f.store.conn(), None, false).unwrap()[0];
    assert_eq!(s.messages, 2);
    assert_eq!(s.last_kind.as_deref(), Some("job_result"));
    assert_eq!(s.last_author.as_deref(), Some("codex-b"));
    assert_eq!(s.unread_mentions, 1);
    assert_eq!(s.last_snippet.as_deref(), Some("> Agent: `codex-b`"));
}

#[test]
fn a_switched_off_sweep_runs_no_chat_query() {
    let mut f = fixture(&[("responder", true)]);
    f.thread("room");
    f.send("room", "@responder hi", None).unwrap();
    // With the chat tables out of reach, only a sweep that queries them can fail.
    f.store
        .conn()
        .batch("ALTER TABLE chat_mentions RENAME TO hidden_mentions")
        .unwrap();
    assert!(f.sweep().is_empty());
    f.cfg.chat.auto_respond = true;
    let (clock, cfg) = (&f.clock, &f.cfg);
    let err = write_retry(&mut f.store, |tx| autorespond_sweep(tx, clock, cfg)).unwrap_err();
    assert!(err.to_string().contains("chat_mentions"), "{err}");
}

#[test]
fn the_humans_unread_count_rises_with_others_posts_and_clears_when_the_thread_is_read() {
    let mut f = fixture(&[("codex-b", false)]);
    let t = f.thread("room");
    let unseen = |f: &Fixture| {
        threads::unseen(&f.store.conn())
            .unwrap()
            .get(&t.id)
            .copied()
            .unwrap_or(0)
    };
    f.send("room", "@codex-b can you look?", None).unwrap();
    assert_eq!(unseen(&f), 0, "the human's own post is no news to them");
    f.send("room", "on it", Some("codex-b")).unwrap();
    let p = gitmoot::chat::promote::promote_message(
        &mut f.store,
        &f.clock,
        "room",
        None,
        1,
        Action::Ask,
    )
    .unwrap();
    f.settle(
        &p.job_id,
        json!({"decision": "approved", "summary": "done"}),
    );
    assert_eq!(unseen(&f), 2, "an agent's post and a job result");
    let (_, left) = threads::mark_seen(&mut f.store, "room", None, Some(2)).unwrap();
    assert_eq!(
        (left, unseen(&f)),
        (1, 1),
        "the result after #2 is still unread"
    );
    let (_, left) = threads::mark_seen(&mut f.store, "room", None, None).unwrap();
    assert_eq!((left, unseen(&f)), (0, 0));
    threads::mark_seen(&mut f.store, "room", None, Some(1)).unwrap();
    assert_eq!(unseen(&f), 0, "a read position never moves back");
    f.send("room", "one more thing", Some("codex-b")).unwrap();
    assert_eq!(unseen(&f), 1);
    let counted: i64 = f
        .store
        .conn()
        .one(
            "SELECT COUNT(*) FROM chat_messages m JOIN chat_seen s ON s.thread_id = m.thread_id
             WHERE m.seq > s.seq AND m.author_kind != 'human'",
            gitmoot::store::tx::params![],
        )
        .unwrap();
    assert_eq!(counted, 1, "the counter agrees with a full count");
}
