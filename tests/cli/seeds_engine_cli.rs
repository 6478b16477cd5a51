//! Issue 15's contract and engine rules through the real binary: `result check`, a daemon
//! running scripted shell agents, and `job show` (text and `--json`).

use gitmoot_test_support::daemon as daemon_support;

use daemon_support::{TestHome, shell_agent_args};
use gitmoot::domain::JobState;
use gitmoot_test_support::texts;

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
        text.contains("note:      learning ci-cache (repo): The CI cache is keyed on Cargo.lock."),
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

/// A shell agent that may implement, printing `first` on its first run and `repaired` on
/// a repair run.
fn implementer(h: &TestHome, name: &str, first: &str, repaired: &str) {
    let a = h.file(&format!("{name}.first.json"));
    let b = h.file(&format!("{name}.repair.json"));
    std::fs::write(&a, first).unwrap();
    std::fs::write(&b, repaired).unwrap();
    let script = h.file(&format!("{name}.sh"));
    std::fs::write(
        &script,
        format!(
            "cat >/dev/null\nif [ \"$GITMOOT_REPAIR\" = 0 ]; then cat {}; else cat {}; fi\n",
            a.display(),
            b.display()
        ),
    )
    .unwrap();
    let command = format!("sh {}", script.display());
    h.ok(&shell_agent_args(
        name,
        &command,
        &[
            "--capability",
            "implement",
            "--capability",
            "ask",
            "--capability",
            "review",
            "--policy",
            "workspace-write",
        ],
    ));
}

const BARE_IMPLEMENTED: &str =
    r#"{"gitmoot_result":{"decision":"implemented","summary":"done, trust me"}}"#;
const LISTED_IMPLEMENTED: &str = r#"{"gitmoot_result":{"decision":"implemented","summary":"done","changes_made":["src/lib.rs: the parser"],"tests_run":["cargo test"]}}"#;

fn show_json(h: &TestHome, id: &str) -> serde_json::Value {
    serde_json::from_str(&h.ok(&["job", "show", id, "--json"])).unwrap()
}

/// The ids of the failed result checks `job show --json` lists, in order.
fn check_ids(v: &serde_json::Value) -> Vec<&str> {
    texts(&v["result_checks"], "id")
}

#[test]
fn result_checks_warn_by_default_with_an_event_and_a_mark() {
    let h = TestHome::new();
    implementer(&h, "impl", BARE_IMPLEMENTED, BARE_IMPLEMENTED);
    let root = h.submit("impl", "build it", &["--action", "implement"]);
    h.daemon_until_idle(1);
    assert_eq!(
        h.job(&root).state,
        JobState::Succeeded,
        "warn keeps the result"
    );
    let events = h.ok(&["job", "events", &root]);
    assert!(
        events.contains("result_checks_failed") && events.contains("2 result check(s) failed"),
        "{events}"
    );
    let text = h.ok(&["job", "show", &root]);
    assert!(
        text.contains("note:      ⚠ result check implement-changes-listed: implemented but changes_made lists no change"),
        "{text}"
    );
    let v = show_json(&h, &root);
    let ids = check_ids(&v);
    assert_eq!(ids, ["implement-changes-listed", "implement-tests-listed"]);

    // A review claiming execution with nothing run, and a bare changes_requested.
    agent(
        &h,
        "rev",
        r#"{"gitmoot_result":{"decision":"changes_requested","severity":"P1","summary":"fix it","evidence":"executed"}}"#,
    );
    let root = h.submit("rev", "review it", &["--action", "review"]);
    h.daemon_until_idle(1);
    let v = show_json(&h, &root);
    let ids = check_ids(&v);
    assert_eq!(
        ids,
        [
            "review-verdict-has-evidence",
            "review-executed-claim-is-substantiated"
        ]
    );
}

#[test]
fn result_checks_block_repairs_then_fails_with_the_reason() {
    let h = TestHome::new();
    h.config("[orchestrate]\nresult_checks = \"block\"\n");
    implementer(&h, "fixer", BARE_IMPLEMENTED, LISTED_IMPLEMENTED);
    implementer(&h, "stubborn", BARE_IMPLEMENTED, BARE_IMPLEMENTED);
    let fixed = h.submit("fixer", "build it", &["--action", "implement"]);
    let failed = h.submit("stubborn", "build it", &["--action", "implement"]);
    h.daemon_until_idle(1);
    let j = h.job(&fixed);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    assert_eq!(
        j.result.unwrap()["changes_made"][0],
        "src/lib.rs: the parser"
    );
    let j = h.job(&failed);
    assert_eq!(j.state, JobState::Failed);
    assert_eq!(
        j.error.as_deref(),
        Some(
            "result checks failed: implement-changes-listed (implemented but changes_made lists no change); implement-tests-listed (implemented but tests_run lists no test)"
        )
    );
    let events = h.ok(&["job", "events", &failed]);
    assert!(events.contains("repair_retry"), "{events}");
    let out = h.cmd(&["config", "show"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("result_checks = \"block\""));
}

#[test]
fn a_bad_result_checks_value_is_one_error_naming_the_key() {
    let h = TestHome::new();
    h.config("[orchestrate]\nresult_checks = \"loud\"\n");
    let out = h.cmd(&["config", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("result_checks"), "{err}");
}

#[test]
fn result_observation_grades_an_implement_jobs_claims_against_its_own_worktree() {
    let h = TestHome::new();
    let repo = h.file("repo");
    daemon_support::git_checkout(
        &repo,
        &[("src/lib.rs", "fn a() {}\n"), ("README.md", "hi\n")],
    );
    h.config(&format!(
        "[repos.\"acme/api\"]\npath = \"{}\"\n",
        repo.display()
    ));
    let result = r#"{"gitmoot_result":{"decision":"implemented","summary":"done","changes_made":["src/lib.rs: new fn","notes.md: added","src/main.rs: wired it"],"tests_run":["cargo test"]}}"#;
    let body = h.file("obs.json");
    std::fs::write(&body, result).unwrap();
    let root = h.implement_once(
        "obs",
        &format!(
            "cat >/dev/null\necho 'fn b() {{}}' >> src/lib.rs\necho new > notes.md\necho extra > extra.txt\ncat {}\n",
            body.display()),
        "acme/api"
    );
    assert_eq!(h.job(&root).state, JobState::Succeeded);
    let v = show_json(&h, &root);
    let o = &v["result_observation"];
    // An implement job on a git checkout works in its own worktree; the checkout is as it was.
    assert_eq!(o["source"], "worktree", "{o}");
    assert_eq!(daemon_support::git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(
        o["touched_files"],
        serde_json::json!(["extra.txt", "notes.md", "src/lib.rs"])
    );
    assert_eq!(
        texts(&o["claims"], "grade"),
        ["observed", "observed", "reported"]
    );
    assert_eq!(o["claimed_only"], serde_json::json!(["src/main.rs"]));
    assert_eq!(o["unclaimed_diff_files"], serde_json::json!(["extra.txt"]));
    let text = h.ok(&["job", "show", &root]);
    assert!(
        text.contains("observation (worktree): 2/3 claim(s) observed, 1 claimed-only, 1 unclaimed diff file(s)"),
        "{text}"
    );
}

#[test]
fn session_review_jobs_open_note_close_and_record() {
    let h = TestHome::new();
    let id = h
        .ok(&[
            "job",
            "open",
            "--type",
            "review",
            "--agent",
            "alice",
            "--pr",
            "7",
            "--head-sha",
            "abc123",
            "--workflow",
            "ci",
        ])
        .trim()
        .to_string();
    assert_eq!(h.job(&id).state, JobState::Running);
    h.ok(&["job", "note", &id, "read the diff"]);
    // The daemon neither runs, recovers nor waits for an open session job.
    h.daemon_until_idle(1);
    assert_eq!(h.job(&id).state, JobState::Running);

    // The same close, first without the severity a changes_requested needs, then with it.
    let close = [
        "job",
        "close",
        &id,
        "--decision",
        "changes_requested",
        "--summary",
        "fix it",
    ];
    let out = h.cmd(&close).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("requires severity"),
        "{err}"
    );
    assert_eq!(h.job(&id).state, JobState::Running, "nothing changed");

    h.ok(&[
        &close[..],
        &["--severity", "P1", "--finding", "the retry loop never ends"],
    ]
    .concat());
    let v = show_json(&h, &id);
    assert_eq!(v["state"], "succeeded");
    assert_eq!(v["result"]["severity"], "P1");
    assert!(
        v["resolution"].is_null(),
        "P1 blocks under the default threshold P3"
    );
    let text = h.ok(&["job", "show", &id]);
    assert!(
        text.contains("session review: graded reported, non_authoritative"),
        "{text}"
    );
    let events = h.ok(&["job", "events", &id]);
    assert!(
        events.contains("session_note") && events.contains("read the diff"),
        "{events}"
    );

    let again = h
        .cmd(&[
            "job",
            "close",
            &id,
            "--decision",
            "approved",
            "--summary",
            "ok",
        ])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already succeeded"));

    let rec = h
        .ok(&[
            "job",
            "record",
            "--agent",
            "bob",
            "--decision",
            "approved",
            "--summary",
            "looks right",
            "--evidence",
            "executed",
            "--test",
            "cargo test",
        ])
        .trim()
        .to_string();
    let v = show_json(&h, &rec);
    assert_eq!(v["state"], "succeeded");
    assert_eq!(v["agent"], "bob");
    assert_eq!(v["result"]["tests_run"][0], "cargo test");
}

#[test]
fn blocking_severity_resolves_milder_reviews_as_approved_with_notes() {
    let h = TestHome::new();
    h.config("[orchestrate]\nblocking_severity = \"P1\"\n");
    let record = |sev: &str| {
        h.ok(&[
            "job",
            "record",
            "--decision",
            "changes_requested",
            "--summary",
            "nits",
            "--severity",
            sev,
            "--finding",
            "naming",
        ])
        .trim()
        .to_string()
    };
    let mild = record("P2");
    let v = show_json(&h, &mild);
    assert_eq!(v["resolution"], "approved_with_notes");
    assert_eq!(
        v["result"]["decision"], "changes_requested",
        "the original is kept"
    );
    assert!(
        h.ok(&["job", "show", &mild])
            .contains("resolution: approved-with-notes"),
    );
    assert!(
        h.ok(&["job", "events", &mild])
            .contains("review_approved_with_notes")
    );
    let severe = record("P1");
    assert!(show_json(&h, &severe)["resolution"].is_null());

    h.config("[orchestrate]\nblocking_severity = \"P9\"\n");
    let out = h.cmd(&["config", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("blocking_severity"));
}

#[test]
fn the_memory_prefilter_drops_two_letter_replies_and_job_result_bodies() {
    let h = TestHome::new();
    agent(
        &h,
        "scout",
        r#"{"gitmoot_result":{"decision":"approved","summary":"limits live in gateway/limits.toml"}}"#,
    );
    h.ok(&["chat", "create", "planning", "--repo", "acme/api"]);
    h.ok(&["chat", "send", "planning", "ok"]);
    h.ok(&[
        "chat",
        "task",
        "planning",
        "@scout where do the rate limits live?",
    ]);
    h.daemon_until_idle(1);
    let thread: serde_json::Value =
        serde_json::from_str(&h.ok(&["chat", "show", "planning", "--json"])).unwrap();
    let seq_of = |kind: &str| {
        thread["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} message: {thread}"))["seq"]
            .to_string()
    };
    assert_eq!(
        h.ok(&["chat", "remember", "planning", "1"]),
        "message #1 rejected for memory: too_short\n"
    );
    let result = seq_of("job_result");
    assert_eq!(
        h.ok(&["chat", "remember", "planning", &result]),
        format!("message #{result} rejected for memory: job_result\n")
    );
    let list: serde_json::Value =
        serde_json::from_str(&h.ok(&["memory", "list", "--json"])).unwrap();
    assert_eq!(list, serde_json::json!([]));
}

#[test]
fn the_detail_drawer_shows_failed_checks_and_learnings() {
    let h = TestHome::new();
    implementer(
        &h,
        "impl",
        r#"{"gitmoot_result":{"decision":"implemented","summary":"done","learnings":[{"key":"ci","content":"CI caches on Cargo.lock."}]}}"#,
        BARE_IMPLEMENTED,
    );
    let root = h.submit("impl", "build it", &["--action", "implement"]);
    h.daemon_until_idle(1);
    let text = h.drawer(&root);
    assert!(
        text.contains("learning ci (repo): CI caches on Cargo.lock."),
        "{text}"
    );
    assert!(
        text.contains(
            "⚠ result check implement-changes-listed: implemented but changes_made lists no change"
        ),
        "{text}"
    );
}
