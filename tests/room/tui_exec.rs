//! The control room's executor performs each write action through the CLI's functions, on a
//! real store: what it does is what the matching verb does.

use gitmoot_test_support as support;

use gitmoot::clock::SystemClock;
use gitmoot::config::Config;
use gitmoot::domain::{Action as JobAction, JobState};
use gitmoot::home::Home;
use gitmoot::store::agents;
use gitmoot::store::{Store, jobs};
use gitmoot::tui::exec::Executor;
use gitmoot_ui::{Action, PromoteAction, Term, ToastLevel, Write};

fn setup() -> (tempfile::TempDir, Home, Store, Executor) {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::resolve(Some(&dir.path().join("h"))).unwrap();
    let mut store = Store::open_home(&home).unwrap();
    let agent = support::ask_agent("scout");
    store.write(|tx| agents::insert(tx, &agent)).unwrap();
    store
        .write(|tx| {
            gitmoot::chat::threads::create(
                tx,
                &SystemClock,
                gitmoot::chat::threads::NewThread {
                    name: "room",
                    repo: "acme/api",
                    title: None,
                    created_by: "human",
                },
            )
        })
        .unwrap();
    let exec = Executor::new(
        home.clone(),
        Store::open_home(&home).unwrap(),
        Config::default(),
    )
    .binary(assert_cmd::cargo::cargo_bin("gitmoot"));
    (dir, home, store, exec)
}

#[test]
fn send_then_promote_then_mark_read_go_through_chat() {
    let (_d, _home, store, mut exec) = setup();
    let out = exec.run(&Write::SendChat {
        thread_id: "room".into(),
        body: "@scout where is the config?".into(),
        reply_to: None,
    });
    assert!(out.level == ToastLevel::Success, "{out:?}");
    let thread = gitmoot::chat::threads::resolve(&store.conn(), "room", None).unwrap();
    assert_eq!(
        gitmoot::chat::inbox::inbox(&store.conn(), "scout", true, None)
            .unwrap()
            .len(),
        1
    );

    let out = exec.run(&Write::Promote {
        thread_id: thread.id.clone(),
        seq: 1,
        action: PromoteAction::Ask,
    });
    assert!(
        out.level == ToastLevel::Success && out.text.contains("promoted #1"),
        "{out:?}"
    );
    let queued = jobs::list(
        store.conn(),
        &jobs::JobFilter {
            state: Some(JobState::Queued),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].dispatched_by, format!("chat:{}", thread.id));

    let out = exec.run(&Write::MarkRead {
        agent: "scout".into(),
        thread_id: thread.id.clone(),
        seqs: vec![1],
    });
    assert!(out.level == ToastLevel::Success, "{out:?}");
    assert!(
        gitmoot::chat::inbox::inbox(&store.conn(), "scout", true, None)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_message_naming_an_unregistered_agent_lands_with_a_warning() {
    let (_d, _home, store, mut exec) = setup();
    let out = exec.run(&Write::SendChat {
        thread_id: "room".into(),
        body: "@ghost are you there?".into(),
        reply_to: None,
    });
    assert_eq!(out.level, ToastLevel::Warning, "{out:?}");
    assert!(out.text.contains("not registered: @ghost"), "{out:?}");
    let thread = gitmoot::chat::threads::resolve(&store.conn(), "room", None).unwrap();
    assert_eq!(
        gitmoot::store::chat::last_seq(store.conn(), &thread.id).unwrap(),
        1,
        "the message was sent"
    );
}

#[test]
fn cancel_and_kill_reach_the_engine_and_refusals_come_back_as_errors() {
    let (_d, _home, mut store, mut exec) = setup();
    let root = store
        .write(|tx| {
            gitmoot::engine::submit_root(
                tx,
                &SystemClock,
                gitmoot::engine::SubmitRoot::new("scout", JobAction::Ask, "look around", "test"),
            )
        })
        .unwrap();
    let out = exec.run(&Write::KillRoot {
        root_id: root.clone(),
        force: false,
    });
    assert!(out.level == ToastLevel::Success, "{out:?}");
    let run = gitmoot::store::runs::require(store.conn(), &root).unwrap();
    assert!(run.killed);
    let out = exec.run(&Write::AnswerAsk {
        job_id: root.clone(),
        answers: vec![("q".into(), "x".into())],
    });
    assert!(
        out.level == ToastLevel::Error && out.text.contains("no pending human question"),
        "{out:?}"
    );
    // UI-thread actions are not the executor's: `Executor::run` takes only a `Write`, so
    // handing it `Term::Quit` no longer compiles; what is left to check is the routing.
    assert!(
        matches!(Action::from(Term::Quit), Action::Term(_)) && !Action::from(Term::Quit).is_write(),
        "UI-thread actions are not the executor's"
    );
}

#[test]
fn the_command_line_runs_the_cli_itself() {
    let (_d, _home, _store, mut exec) = setup();
    let out = exec.run(&Write::RunCommand("agent show scout".into()));
    assert!(
        out.level == ToastLevel::Info && out.text.contains("scout"),
        "{out:?}"
    );
    let out = exec.run(&Write::RunCommand("job show job-missing".into()));
    assert!(
        out.level == ToastLevel::Error && out.text.contains("job \"job-missing\" not found"),
        "{out:?}"
    );
    let out = exec.run(&Write::RunCommand("tui".into()));
    assert!(out.level == ToastLevel::Error, "{out:?}");
}

#[test]
fn command_lines_persist_in_the_home_once_each_newest_last() {
    let (_d, home, _store, mut exec) = setup();
    assert!(gitmoot::tui::exec::load_history(&home).is_empty());
    for line in ["agent list", "job list", "agent list"] {
        let out = exec.run(&Write::RunCommand(line.into()));
        assert!(out.level == ToastLevel::Info, "{out:?}");
    }
    // A control room opened later on this home starts its ↑ history from here.
    assert_eq!(
        gitmoot::tui::exec::load_history(&home),
        ["job list", "agent list"]
    );
}

#[test]
fn marking_a_thread_seen_clears_the_humans_count_without_a_message() {
    let (_d, home, store, mut exec) = setup();
    let mut cli = support::gitmoot(home.root());
    cli.args(["chat", "send", "room", "--as", "scout", "found it"])
        .assert()
        .success();
    let unseen = || {
        gitmoot::chat::threads::unseen(&store.conn())
            .unwrap()
            .values()
            .sum::<i64>()
    };
    assert_eq!(unseen(), 1);
    let thread = gitmoot::chat::threads::resolve(&store.conn(), "room", None).unwrap();
    let out = exec.run(&Write::MarkSeen {
        thread_id: thread.id,
        seq: 1,
    });
    assert!(
        out.level == ToastLevel::Success && out.text.is_empty(),
        "{out:?}"
    );
    assert_eq!(unseen(), 0);
}
