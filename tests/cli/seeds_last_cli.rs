//! Issue 27's rules of the two seeds through the real binary on scratch homes: the human's
//! `continue` text reaching the continuation, the observation of a path that is not a git
//! repository, a TTL-finalized ask thread's title, findings rendered, the inline-artifact
//! brief, a result that both fans out and asks.

use gitmoot_test_support::daemon as daemon_support;

use daemon_support::TestHome;
use gitmoot::domain::{JobKind, JobState};

/// Registers `coord`: its root prints `first` (a result line), every later round wraps
/// up; each prompt it is handed is written to `<kind>.prompt` in the test's folder.
fn recording_coordinator(h: &TestHome, first: &str) {
    let dir = h.file("");
    h.shell_agent(
        "coord",
        &format!(
            "cat > {dir}/$GITMOOT_JOB_KIND.prompt\nif [ \"$GITMOOT_JOB_KIND\" = root ]; then\necho '{first}'\nelse\necho '{}'\nfi\n",
            daemon_support::result("approved", "wrapped up"),
            dir = dir.display()
        ),
    );
}

/// A recording coordinator that fans out one `escalate_human` leg to `flaky` (which fails).
fn escalating_coordinator(h: &TestHome) {
    recording_coordinator(
        h,
        r#"{"gitmoot_result": {"decision": "approved", "summary": "fan out", "delegations": [{"id": "risky", "agent": "flaky", "action": "ask", "prompt": "try it", "failure_policy": "escalate_human"}]}}"#,
    );
    h.shell_agent("flaky", "cat >/dev/null\nexit 3\n");
}

#[test]
fn continue_carries_the_humans_instructions_and_approval_to_the_continuation() {
    let h = TestHome::new();
    escalating_coordinator(&h);
    let root = h.submit("coord", "Risky plan", &[]);
    h.daemon_until_idle(2);
    assert_eq!(h.run(&root).state.as_str(), "awaiting_human");
    h.ok(&[
        "job",
        "resume",
        &root,
        "continue",
        "use the cached numbers instead",
    ]);
    h.daemon_until_idle(2);
    let cont = h
        .tree(&root)
        .into_iter()
        .find(|j| j.kind == JobKind::Continuation)
        .expect("a continuation");
    assert_eq!(cont.state, JobState::Succeeded);
    let prompt = std::fs::read_to_string(h.file("continuation.prompt")).unwrap();
    assert!(
        prompt.contains("use the cached numbers instead"),
        "{prompt}"
    );
    assert!(prompt.contains("Human-approved continuation"), "{prompt}");
    assert!(prompt.contains("delegation \"risky\""), "{prompt}");
}

#[test]
fn an_observation_of_a_path_that_is_not_a_git_repository_says_why_in_one_line() {
    let h = TestHome::new();
    let plain = h.file("plain");
    std::fs::create_dir_all(&plain).unwrap();
    h.config(&format!(
        "[repos.\"acme/api\"]\npath = \"{}\"\n",
        plain.display()
    ));
    let root = h.implement_once(
        "obs",
        "cat >/dev/null\necho new > notes.md\necho '{\"gitmoot_result\":{\"decision\":\"implemented\",\"summary\":\"done\",\"changes_made\":[\"notes.md: added\"],\"tests_run\":[\"none\"]}}'\n",
        "acme/api"
    );
    assert_eq!(h.job(&root).state, JobState::Succeeded);
    let v: serde_json::Value =
        serde_json::from_str(&h.ok(&["job", "show", &root, "--json"])).unwrap();
    let why = v["result_observation"]["indeterminate"].as_str().unwrap();
    assert_eq!(
        why,
        format!(
            "{} is not a git repository, so no change could be observed",
            plain.display()
        )
    );
    assert_eq!(v["result_observation"]["claims"][0]["grade"], "reported");
}

/// Starts `daemon run --parallel N` on the home and waits until the store lists it live.
fn running_daemon(h: &TestHome, parallel: &str) -> std::process::Child {
    let d = gitmoot_test_support::spawn_daemon(&h.path(), &["--parallel", parallel]);
    gitmoot_test_support::wait_until(
        "the daemon to register",
        std::time::Duration::from_secs(30),
        || {
            let s: serde_json::Value =
                serde_json::from_str(&h.ok(&["daemon", "status", "--json"])).unwrap();
            s["daemons"].as_array().is_some_and(|d| !d.is_empty())
        },
    );
    d
}

/// `moot` over two seats; returns its stderr.
fn moot_stderr(h: &TestHome, name: &str) -> String {
    let out = daemon_support::succeed(&mut h.cmd(&[
        "moot",
        name,
        "which bug first?",
        "--agents",
        "alice,bob",
        "--repo",
        "owner/repo",
        "--max-messages",
        "2",
    ]));
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn the_moot_warns_from_the_running_daemons_parallelism_not_the_config() {
    let h = TestHome::new();
    for seat in ["alice", "bob"] {
        h.shell_agent(seat, "cat >/dev/null\necho '{\"gitmoot_result\":{\"decision\":\"approved\",\"summary\":\"ok\"}}'\n");
    }
    // The default config has more than one worker; the running daemon has one.
    let d = running_daemon(&h, "1");
    let err = moot_stderr(&h, "one");
    gitmoot_test_support::stop_daemon(d);
    assert!(err.contains("runs a single worker (workers=1)"), "{err}");
    // The config says one worker; the running daemon has four.
    h.config("[daemon]\nparallel = 1\n");
    let d = running_daemon(&h, "4");
    let err = moot_stderr(&h, "four");
    gitmoot_test_support::stop_daemon(d);
    assert!(!err.contains("single worker"), "{err}");
}

/// The findings block every surface shows for `FINDINGS` (000:107-114).
const FINDINGS: &str = r#"{"gitmoot_result":{"decision":"changes_requested","severity":"P1","summary":"two issues","findings":["plain words stay as they are",{"title":"Token leak","severity":"high","status":"open","url":"https://example.test/42","files":["src/a.rs","src/b.rs"],"detail":{"why":"logged at debug"}},[1,2]]}}"#;
const RENDERED: &[&str] = &[
    "- plain words stay as they are",
    "- **Token leak** (high)",
    "  - detail:",
    "    - why: logged at debug",
    "  - files:",
    "    - src/a.rs",
    "    - src/b.rs",
    "  - status: open",
    "  - url: [https://example.test/42](https://example.test/42)",
    "```json",
    "[",
    "  1,",
    "  2",
    "]",
    "```",
];

/// `RENDERED` as the detail drawer lays it out.
const DRAWN: &[&str] = &[
    "  • plain words stay as they are",
    "  • Token leak (high)",
    "    • detail:",
    "      • why: logged at debug",
    "    • files:",
    "      • src/a.rs",
    "      • src/b.rs",
    "    • status: open",
    "    • url: https://example.test/42",
    "  ── json",
    "    [",
    "      1,",
    "      2",
    "    ]",
];

#[test]
fn findings_render_alike_in_the_chat_result_job_show_and_the_detail_drawer() {
    let h = TestHome::new();
    let body = h.file("findings.json");
    std::fs::write(&body, FINDINGS).unwrap();
    h.ok(&daemon_support::shell_agent_args(
        "finder",
        &format!("cat >/dev/null; cat {}", body.display()),
        &["--capability", "review", "--capability", "ask"],
    ));
    h.ok(&["chat", "create", "room", "--repo", "owner/repo"]);
    h.ok(&["chat", "task", "room", "@finder look at the auth change"]);
    h.daemon_until_idle(1);
    let want = RENDERED.join("\n");

    let thread: serde_json::Value =
        serde_json::from_str(&h.ok(&["chat", "show", "room", "--json"])).unwrap();
    let posted = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["kind"] == "job_result")
        .expect("a job_result message");
    let text = posted["body"].as_str().unwrap();
    assert!(text.contains(&format!("**Findings**\n{want}\n")), "{text}");
    let list: serde_json::Value = serde_json::from_str(&h.ok(&["job", "list", "--json"])).unwrap();
    let root = list[0]["id"].as_str().unwrap().to_string();

    let shown = h.ok(&["job", "show", &root]);
    let indented: Vec<String> = RENDERED.iter().map(|l| format!("  {l}")).collect();
    assert!(
        shown.contains(&format!("findings:\n{}\n", indented.join("\n"))),
        "{shown}"
    );

    // The drawer lays that same Markdown out: bullets, bold and links without their markers,
    // the fence's language as a label over its code.
    let drawn = h.drawer(&root);
    assert!(drawn.contains(&DRAWN.join("\n")), "{drawn}");
}

#[test]
fn a_truncated_artifact_body_points_at_its_on_disk_brief_removed_when_the_run_ends() {
    let h = TestHome::new();
    h.config("[orchestrate]\ninline_artifact_max_bytes = 16\n");
    let body = "0123456789abcdef-the-rest-of-the-spec-END";
    h.shell_agent(
        "coord",
        &format!(
            r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{{"gitmoot_result": {{"decision": "approved", "summary": "fan out", "artifact_body": "{body}", "delegations": [{{"id": "d1", "agent": "reader", "action": "ask", "prompt": "read the spec", "artifacts": ["spec"]}}]}}}}'
else
echo '{{"gitmoot_result": {{"decision": "approved", "summary": "done"}}}}'
fi
"#
        ),
    );
    let dir = h.file("");
    h.shell_agent(
        "reader",
        &format!(
            r#"cat > {dir}/leg.prompt
brief=$(grep -o 'on-disk brief at [^)]*' {dir}/leg.prompt | sed 's/on-disk brief at //')
cp "$brief" {dir}/leg.brief
echo '{{"gitmoot_result": {{"decision": "approved", "summary": "read it"}}}}'
"#,
            dir = dir.display()
        ),
    );
    // A brief whose job the store does not hold (its run long gone) is swept away.
    let stale = h.path().join("artifacts/delegations/job-gone");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("brief.md"), "old").unwrap();
    let root = h.submit("coord", "Plan", &[]);
    h.daemon_until_idle(2);
    assert_eq!(h.run(&root).state.as_str(), "done");
    assert!(!stale.exists(), "a stale brief outlived the sweep");
    let brief = h
        .path()
        .join("artifacts/delegations")
        .join(&root)
        .join("brief.md");
    let prompt = std::fs::read_to_string(h.file("leg.prompt")).unwrap();
    assert!(
        prompt.contains(&format!(
            "0123456789abcdef\n[... (25 bytes truncated; the full body is in the on-disk brief at {})]",
            brief.display()
        )),
        "{prompt}"
    );
    assert_eq!(std::fs::read_to_string(h.file("leg.brief")).unwrap(), body);
    assert!(
        !brief.parent().unwrap().exists(),
        "the brief outlived its run"
    );
}

/// A coordinator whose first result both asks (`region`) and fans out one leg (`probe` to
/// `helper`), each prompt it is handed written to `<kind>.prompt`; submitted and run to
/// its pause. Returns the root.
fn asking_fan_out(h: &TestHome) -> String {
    recording_coordinator(
        h,
        r#"{"gitmoot_result": {"decision": "approved", "summary": "ask and fan out", "human_questions": [{"id": "region", "prompt": "Which region?"}], "delegations": [{"id": "probe", "agent": "helper", "action": "ask", "prompt": "probe the region"}]}}"#,
    );
    let dir = h.file("");
    h.shell_agent(
        "helper",
        &format!(
            "cat > {}/leg.prompt\necho '{}'\n",
            dir.display(),
            daemon_support::result("approved", "probed eu-west")
        ),
    );
    let root = h.submit("coord", "Pick a region", &[]);
    h.daemon_until_idle(2);
    assert_eq!(h.run(&root).state.as_str(), "awaiting_human");
    root
}

#[test]
fn a_result_that_fans_out_and_asks_runs_its_delegations_after_the_answer() {
    let h = TestHome::new();
    let root = asking_fan_out(&h);
    assert_eq!(
        h.tree(&root).len(),
        1,
        "nothing dispatched before the answer"
    );
    let events = h.ok(&["job", "events", &root]);
    assert!(
        events.contains("result asks 1 question(s); dispatching after the answer 1 delegation(s)"),
        "{events}"
    );
    h.ok(&["job", "answer", &root, "region: eu-west"]);
    h.daemon_until_idle(2);
    assert_eq!(h.run(&root).state.as_str(), "done");
    let leg = std::fs::read_to_string(h.file("leg.prompt")).unwrap();
    assert!(leg.starts_with("probe the region"), "{leg}");
    let cont = std::fs::read_to_string(h.file("continuation.prompt")).unwrap();
    assert!(cont.contains("answer: eu-west"), "{cont}");
    assert!(
        cont.contains("delegation \"probe\"") && cont.contains("probed eu-west"),
        "{cont}"
    );
}

#[test]
fn a_held_fan_out_whose_ask_expires_is_listed_as_not_dispatched() {
    let h = TestHome::new();
    h.config("[orchestrate]\nescalation_ttl = \"1s\"\n");
    let root = asking_fan_out(&h);
    std::thread::sleep(std::time::Duration::from_millis(1_200));
    h.daemon_until_idle(2);
    assert_eq!(h.run(&root).state.as_str(), "done");
    assert!(!h.file("leg.prompt").exists(), "the held leg never runs");
    let fin = std::fs::read_to_string(h.file("finalize.prompt")).unwrap();
    assert!(
        fin.contains("Delegations that were NOT dispatched:\n- delegation \"probe\" (agent helper, action ask)"),
        "{fin}"
    );
}
