//! Issue 15's contract and engine rules through the real binary: `result check`, a daemon
//! running scripted shell agents, and `job show` (text and `--json`).

mod daemon_support;

use daemon_support::TestHome;
use gitmoot::domain::JobState;

fn check(h: &TestHome, output: &str) -> std::process::Output {
    let file = h.file("out.txt");
    std::fs::write(&file, output).unwrap();
    h.cmd(&["result", "check", file.to_str().unwrap()])
        .output()
        .unwrap()
}

/// A shell agent that prints `json` (one line) as its whole output.
fn agent(h: &TestHome, name: &str, json: &str) {
    let body = h.file(&format!("{name}.json"));
    std::fs::write(&body, json).unwrap();
    h.shell_agent(name, &format!("cat >/dev/null\ncat {}\n", body.display()));
}

#[test]
fn learnings_are_accepted_stored_and_shown() {
    let h = TestHome::new();
    let out = check(
        &h,
        r#"{"gitmoot_result":{"decision":"approved","summary":"done","learnings":[{"key":"ci-cache","content":"The CI cache is keyed on Cargo.lock."},{"key":"style","scope":"General","content":"Prefer small commits."}]}}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gitmoot_result"]["learnings"][1]["scope"], "general");

    let bad = check(
        &h,
        r#"{"gitmoot_result":{"decision":"approved","summary":"done","learnings":[{"content":"x"},{"key":"k","scope":"team","content":"y"}]}}"#,
    );
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("error: learnings[0] key is required"), "{err}");
    assert!(
        err.contains(
            r#"error: learnings[1] (key "k") scope "team" is invalid; expected repo or general"#
        ),
        "{err}"
    );

    agent(
        &h,
        "learner",
        r#"{"gitmoot_result":{"decision":"approved","summary":"done","learnings":[{"key":"ci-cache","content":"The CI cache is keyed on Cargo.lock."}]}}"#,
    );
    let root = h.submit("learner", "look around", &[]);
    h.daemon_until_idle(1);
    assert_eq!(h.job(&root).state, JobState::Succeeded);
    let text = h.ok(&["job", "show", &root]);
    assert!(
        text.contains("learning:  ci-cache (repo): The CI cache is keyed on Cargo.lock."),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&h.ok(&["job", "show", &root, "--json"])).unwrap();
    assert_eq!(v["result"]["learnings"][0]["key"], "ci-cache");
}

#[test]
fn every_field_error_of_a_result_is_reported_together() {
    let h = TestHome::new();
    // delegation 0 has a field error; it still counts for the artifacts and quorum rules.
    let out = check(
        &h,
        r#"{"gitmoot_result":{"decision":"approved","summary":"plan","delegations":[
            {"id":"a","agent":"rev","action":"review","prompt":"","artifacts":["brief"],"synthesis_rule":"quorum","quorum":3},
            {"id":"b","agent":"rev","action":"review","prompt":"check"}]}}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            r#"error: delegations[0] (id "a"): prompt is required"#,
            "error: synthesis_rule quorum requires quorum (3) to be <= the number of delegations (2)",
            "error: artifact_body is required when delegations request artifacts",
        ],
        "{err}"
    );
}

#[test]
fn a_duplicated_result_key_keeps_its_last_value() {
    let h = TestHome::new();
    let out = check(
        &h,
        r#"{"gitmoot_result":{"decision":"failed","summary":"first","decision":"approved","summary":"second"}}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gitmoot_result"]["decision"], "approved");
    assert_eq!(v["gitmoot_result"]["summary"], "second");
    // Inside a narrative list element a duplicate still names the key (the seed's rule).
    let out = check(
        &h,
        r#"{"gitmoot_result":{"decision":"approved","summary":"s","tests_run":[{"name":"a","name":"b"}]}}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(r#"tests_run[0] has duplicate key "name""#)
    );
}
