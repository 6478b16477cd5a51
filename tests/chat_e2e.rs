//! Chat end to end with the real daemon and scripted shell agents (no LLM): a promotion
//! runs and its result lands in the thread; an ask pause creates the job thread, `chat
//! answer` (the real binary) resumes it and the continuation posts back; a 3-seat moot
//! whose seats run real `gitmoot chat send --as` subprocesses hits its cap, posts the
//! overrun once, and every seat's conclusions arrive as job_results.

use std::sync::Arc;

use assert_cmd::Command;
use gitmoot::chat::ChatHooks;
use gitmoot::chat::slug::job_thread_slug;
use gitmoot::daemon::Daemon;
use gitmoot::home::Home;
use gitmoot::store::Store;
use gitmoot::store::chat::{self as rows, MessageKind};
use serde_json::Value;

fn bin() -> String {
    assert_cmd::cargo::cargo_bin("gitmoot")
        .display()
        .to_string()
}

fn cli(home: &std::path::Path, args: &[&str]) -> String {
    let out = Command::cargo_bin("gitmoot")
        .unwrap()
        .arg("--home")
        .arg(home)
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn add_shell_agent(home: &std::path::Path, name: &str, script: &str) {
    cli(
        home,
        &[
            "agent",
            "add",
            name,
            "--runtime",
            "shell",
            "--command",
            script,
            "--repo",
            "owner/repo",
        ],
    );
}

/// Runs the daemon with chat's hooks until nothing is queued or running.
fn run_until_idle(home: &std::path::Path) {
    let home = Home::resolve(Some(home)).unwrap();
    let daemon = Daemon::new(home)
        .parallel(Some(3))
        .until_idle(true)
        .hooks(Arc::new(ChatHooks))
        .spawn()
        .unwrap();
    daemon.join().unwrap();
}

fn transcript(home: &std::path::Path, thread: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(&cli(home, &["chat", "show", thread, "--json"])).unwrap();
    v["messages"].as_array().unwrap().clone()
}

const RESULT: &str = r#"{"gitmoot_result":{"decision":"approved","summary":"SUMMARY"}}"#;

#[test]
fn a_promoted_job_runs_and_its_result_lands_in_the_thread() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    add_shell_agent(
        h,
        "codex-b",
        &format!(
            "cat >/dev/null; echo '{}'",
            RESULT.replace("SUMMARY", "adapter manifest written")
        ),
    );
    cli(
        h,
        &["chat", "create", "release-room", "--repo", "owner/repo"],
    );
    cli(
        h,
        &[
            "chat",
            "send",
            "release-room",
            "@codex-b can you inspect the runtime adapter?",
        ],
    );
    let task: Value = serde_json::from_str(&cli(
        h,
        &[
            "chat",
            "task",
            "release-room",
            "@codex-b write the adapter manifest",
            "--json",
        ],
    ))
    .unwrap();
    let job_id = task["job_id"].as_str().unwrap().to_string();
    run_until_idle(h);
    let msgs = transcript(h, "release-room");
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert_eq!(msgs[2]["kind"], "job_result");
    assert_eq!(msgs[2]["author"], "codex-b");
    assert_eq!(msgs[2]["reply_to"], msgs[1]["seq"]);
    assert!(
        msgs[2]["body"]
            .as_str()
            .unwrap()
            .contains("adapter manifest written")
    );
    let job: Value = serde_json::from_str(&cli(h, &["job", "show", &job_id, "--json"])).unwrap();
    assert_eq!(job["state"], "succeeded");
    // Running the daemon again adds nothing.
    run_until_idle(h);
    assert_eq!(transcript(h, "release-room").len(), 3);
}

#[test]
fn an_ask_pause_is_answered_from_chat_and_the_tree_completes() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let asks = r#"{"gitmoot_result":{"decision":"approved","summary":"need a port","human_questions":[{"id":"q1","prompt":"Which port?"}]}}"#;
    let script = format!(
        "if [ \"$GITMOOT_JOB_KIND\" = root ]; then cat >/dev/null; echo '{asks}'; \
         else port=$(grep -o 'port [0-9]*' | head -1); echo \"{{\\\"gitmoot_result\\\":{{\\\"decision\\\":\\\"approved\\\",\\\"summary\\\":\\\"using $port\\\"}}}}\"; fi"
    );
    add_shell_agent(h, "coord", &script);
    let root = cli(
        h,
        &[
            "job",
            "run",
            "--agent",
            "coord",
            "--repo",
            "owner/repo",
            "pick a port",
        ],
    )
    .trim()
    .to_string();
    run_until_idle(h);
    let slug = job_thread_slug(&root);
    let msgs = transcript(h, &slug);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["kind"], "system");
    assert_eq!(msgs[0]["body"], "- q1: Which port?");
    let list: Value =
        serde_json::from_str(&cli(h, &["chat", "list", "--repo", "owner/repo", "--json"])).unwrap();
    assert_eq!(list[0]["slug"], slug.as_str());
    let out = cli(
        h,
        &[
            "chat",
            "answer",
            &slug,
            "q1: use port 8080",
            "--repo",
            "owner/repo",
        ],
    );
    assert!(
        out.starts_with(&format!("answered job: {root}\nthread: {slug}\n")),
        "{out}"
    );
    run_until_idle(h);
    let msgs = transcript(h, &slug);
    let last = msgs.last().unwrap();
    assert_eq!(last["kind"], "job_result", "{msgs:?}");
    assert!(
        last["body"].as_str().unwrap().contains("using port 8080"),
        "{last}"
    );
    let tree: Value = serde_json::from_str(&cli(h, &["job", "tree", &root, "--json"])).unwrap();
    assert_eq!(tree["run"]["state"], "done");
}

#[test]
fn a_three_seat_moot_reaches_its_cap_and_every_seat_returns() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let bin = bin();
    for seat in ["alice", "bob", "carol"] {
        let script = format!(
            "cat >/dev/null; i=0; while [ $i -lt 3 ]; do \
             '{bin}' --home \"$GITMOOT_HOME\" chat send duo \"turn $i from {seat}\" --as {seat} >/dev/null 2>&1 || break; i=$((i+1)); done; \
             echo '{}'",
            RESULT.replace("SUMMARY", &format!("{seat}: KNOW x; UNSURE y; ASK z"))
        );
        add_shell_agent(h, seat, &script);
    }
    let out = cli(
        h,
        &[
            "moot",
            "duo",
            "compare protocol options",
            "--agents",
            "alice,bob,carol",
            "--repo",
            "owner/repo",
            "--max-messages",
            "4",
        ],
    );
    assert!(out.contains("message cap: 4"), "{out}");
    run_until_idle(h);
    let store = Store::open(&dir.path().join("gitmoot.db")).unwrap();
    let t = gitmoot::chat::threads::resolve(store.conn(), "duo", None).unwrap();
    assert_eq!(rows::count_agent_turns(store.conn(), &t.id).unwrap(), 4);
    let msgs = rows::messages(store.conn(), &t.id, 0, None).unwrap();
    let overruns = msgs
        .iter()
        .filter(|m| m.body.starts_with("MOOT CAP REACHED"))
        .count();
    assert_eq!(overruns, 1);
    let results: Vec<&str> = msgs
        .iter()
        .filter(|m| m.kind == MessageKind::JobResult)
        .map(|m| m.author_name.as_str())
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    for seat in ["alice", "bob", "carol"] {
        assert!(results.contains(&seat), "{seat} returned");
    }
}
