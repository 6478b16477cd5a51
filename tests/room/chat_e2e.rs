//! Chat end to end through the real binary and the daemon: a promoted message runs and
//! posts its result back; an ask-gate pause opens the job thread and `chat answer` finishes
//! the tree; a three-seat moot talks through the relay until the cap.

use gitmoot_test_support as support;

use std::path::Path;

use serde_json::Value;
use support::{bin, gitmoot, json, shell_agent, stdout};

fn agent(home: &Path, name: &str, script: &str) {
    shell_agent(home, name, script, &["--repo", "acme/api"]);
}

fn drain(home: &Path) {
    stdout(home, &["daemon", "run", "--until-idle", "--parallel", "3"]);
}

fn messages(home: &Path, thread: &str) -> Vec<Value> {
    json(home, &["chat", "show", thread, "--json"])["messages"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_promoted_message_runs_and_its_result_comes_back_to_the_thread() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    agent(
        h,
        "scout",
        r#"cat >/dev/null; echo 'Found it. {"gitmoot_result": {"decision": "approved", "summary": "limits live in gateway/limits.toml"}}'"#,
    );
    stdout(h, &["chat", "create", "planning", "--repo", "acme/api"]);
    stdout(
        h,
        &[
            "chat",
            "task",
            "planning",
            "@scout where do the rate limits live?",
        ],
    );
    drain(h);
    let msgs = messages(h, "planning");
    let promotion = msgs
        .iter()
        .find(|m| m["kind"] == "promotion_request")
        .expect("promotion recorded");
    let job = promotion["promoted_job_id"].as_str().expect("back-link");
    assert_eq!(
        json(h, &["job", "show", job, "--json"])["state"],
        "succeeded"
    );
    let result = msgs
        .iter()
        .find(|m| m["kind"] == "job_result")
        .expect("result posted back");
    assert_eq!(result["author"], "scout");
    assert_eq!(result["reply_to"], promotion["seq"]);
    assert!(
        result["body"]
            .as_str()
            .unwrap()
            .contains("limits live in gateway/limits.toml"),
        "{result}"
    );
    drain(h);
    let again = messages(h, "planning");
    assert_eq!(
        again.iter().filter(|m| m["kind"] == "job_result").count(),
        1,
        "posted once: {again:?}"
    );
}

#[test]
fn an_ask_gate_opens_the_job_thread_and_chat_answer_finishes_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    agent(
        h,
        "lead",
        r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
  echo '{"gitmoot_result": {"decision": "approved", "summary": "need a call", "human_questions": [{"id": "db", "prompt": "Postgres or SQLite?", "choices": ["postgres", "sqlite"]}]}}'
else
  printf '{"gitmoot_result": {"decision": "approved", "summary": "going with %s"}}\n' "$(grep -o 'postgres\|sqlite' "$GITMOOT_PROMPT_FILE" | tail -1)"
fi"#,
    );
    let out = gitmoot(h)
        .args([
            "job",
            "run",
            "--agent",
            "lead",
            "--repo",
            "acme/api",
            "Pick a database",
        ])
        .output()
        .unwrap();
    let root = String::from_utf8(out.stdout).unwrap().trim().to_string();
    drain(h);
    assert_eq!(
        json(h, &["job", "tree", &root, "--json"])["run"]["state"],
        "awaiting_human"
    );
    let thread = format!("job-{}", &gitmoot::ids::sha256_hex(root.as_bytes())[..12]);
    let listed = json(h, &["chat", "list", "--json"]);
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["slug"] == thread.as_str()),
        "{listed}"
    );
    let system = messages(h, &thread)
        .into_iter()
        .find(|m| m["kind"] == "system")
        .expect("questions posted");
    assert!(
        system["body"]
            .as_str()
            .unwrap()
            .contains("Postgres or SQLite?"),
        "{system}"
    );

    stdout(h, &["chat", "answer", &thread, "db: sqlite"]);
    drain(h);
    let tree = json(h, &["job", "tree", &root, "--json"]);
    assert_eq!(tree["run"]["state"], "done", "{tree}");
    let posted = messages(h, &thread);
    let result = posted
        .iter()
        .rev()
        .find(|m| m["kind"] == "job_result")
        .expect("continuation result posted");
    assert!(
        result["body"]
            .as_str()
            .unwrap()
            .contains("going with sqlite"),
        "{posted:?}"
    );
}

#[test]
fn a_three_seat_moot_talks_through_the_relay_until_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    for seat in ["ada", "bob", "cy"] {
        let script = format!(
            r#"cat >/dev/null
[ -n "$GITMOOT_RELAY_TOKEN" ] && [ -S "$GITMOOT_RELAY_SOCKET" ] && echo yes > {home}/{seat}.relay
n=0
while {bin} --home {home} chat send design "{seat} turn $n" --as {seat} >/dev/null 2>&1; do n=$((n+1)); done
echo '{{"gitmoot_result": {{"decision": "approved", "summary": "{seat} posted '$n' turns"}}}}'"#,
            bin = bin(),
            home = h.display(),
        );
        agent(h, seat, &script);
    }
    stdout(
        h,
        &[
            "moot",
            "design",
            "Cache invalidation strategy",
            "--agents",
            "ada,bob,cy",
            "--repo",
            "acme/api",
            "--max-messages",
            "9",
        ],
    );
    drain(h);
    let msgs = messages(h, "design");
    let turns = msgs
        .iter()
        .filter(|m| {
            m["kind"] == "chat" && ["ada", "bob", "cy"].contains(&m["author"].as_str().unwrap())
        })
        .count();
    assert_eq!(turns, 9, "{msgs:?}");
    let overruns = msgs
        .iter()
        .filter(|m| {
            m["kind"] == "system" && m["body"].as_str().unwrap().contains("MOOT CAP REACHED")
        })
        .count();
    assert_eq!(overruns, 1, "{msgs:?}");
    for seat in ["ada", "bob", "cy"] {
        assert!(
            h.join(format!("{seat}.relay")).exists(),
            "{seat} ran without the relay"
        );
    }
    let jobs = json(h, &["job", "list", "--json"]);
    let seats: Vec<&Value> = jobs
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["kind"] == "root")
        .collect();
    assert_eq!(seats.len(), 3);
    assert!(
        seats.iter().all(|j| j["state"] == "succeeded"),
        "every seat returns: {jobs}"
    );
}

#[test]
fn the_daemon_tick_answers_mentions_only_when_both_switches_are_on() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let script = r#"cat >/dev/null; echo '{"gitmoot_result": {"decision": "approved", "summary": "the flag lives in config/flags.toml"}}'"#;
    shell_agent(
        h,
        "scout",
        script,
        &["--repo", "acme/api", "--chat-autorespond"],
    );
    stdout(h, &["chat", "create", "help", "--repo", "acme/api"]);
    stdout(
        h,
        &["chat", "send", "help", "@scout where is the feature flag?"],
    );
    drain(h);
    assert_eq!(
        json(h, &["job", "list", "--json"]),
        serde_json::json!([]),
        "auto-respond is off by default"
    );

    std::fs::write(h.join("config.toml"), "[chat]\nauto_respond = true\n").unwrap();
    drain(h);
    let jobs = json(h, &["job", "list", "--json"]);
    let jobs = jobs.as_array().unwrap();
    assert_eq!(jobs.len(), 1, "one ask per unread mention: {jobs:?}");
    assert_eq!(jobs[0]["action"], "ask");
    assert_eq!(jobs[0]["state"], "succeeded");
    let msgs = messages(h, "help");
    assert!(
        msgs.iter().any(|m| m["kind"] == "job_result"
            && m["body"].as_str().unwrap().contains("config/flags.toml")),
        "{msgs:?}"
    );
    drain(h);
    assert_eq!(
        json(h, &["job", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1,
        "never twice for one mention"
    );
}
