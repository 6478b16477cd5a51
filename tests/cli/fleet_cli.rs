//! Issue 28's fleet verbs through the real binary: acting on many jobs by query
//! (`job cancel|kill|retry --where … [--dry-run]`).

use gitmoot_test_support as support;

use std::path::Path;

use support::{gitmoot, job_state, json, shell_agent, stdout};

const QUIET: &str = "cat >/dev/null\necho '{\"gitmoot_result\": {\"decision\": \"approved\", \"summary\": \"ok\"}}'";

/// Submits a root for `agent` (no daemon runs, so it stays queued); returns its id.
fn submit(h: &Path, agent: &str, prompt: &str) -> String {
    stdout(h, &["job", "run", "--agent", agent, prompt])
        .trim()
        .to_string()
}

#[test]
fn a_bulk_cancel_by_query_previews_with_dry_run_then_cancels_only_what_it_selects() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    shell_agent(h, "scout", QUIET, &[]);
    shell_agent(h, "other", QUIET, &[]);
    let a = submit(h, "scout", "one");
    let b = submit(h, "scout", "two");
    let keep = submit(h, "other", "three");

    // A fresh job is not two hours old, so `older=2h` selects nothing and changes nothing.
    let none = stdout(
        h,
        &[
            "job",
            "cancel",
            "--where",
            "state=queued agent=scout older=2h",
        ],
    );
    assert!(none.contains("of 0 selected"), "{none}");

    let dry = stdout(
        h,
        &[
            "job",
            "cancel",
            "--where",
            "state=queued agent=scout newer=2h",
            "--dry-run",
        ],
    );
    assert!(dry.contains(&format!("would cancel {a} (queued")), "{dry}");
    assert!(dry.contains(&format!("would cancel {b} (queued")), "{dry}");
    assert!(!dry.contains(&keep), "{dry}");
    assert!(dry.contains("dry run: nothing changed"), "{dry}");
    for id in [&a, &b, &keep] {
        assert_eq!(job_state(h, id), "queued", "the dry run changed {id}");
    }

    let done = json(
        h,
        &[
            "job",
            "cancel",
            "--where",
            "state=queued agent=scout",
            "--json",
        ],
    );
    let items = done["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{done}");
    assert!(items.iter().all(|i| i["refused"].is_null()), "{done}");
    assert_eq!(job_state(h, &a), "cancelled");
    assert_eq!(job_state(h, &b), "cancelled");
    assert_eq!(job_state(h, &keep), "queued");
}

#[test]
fn a_refused_item_is_reported_with_its_reason_and_the_rest_proceed() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    shell_agent(h, "scout", QUIET, &[]);
    let gone = submit(h, "scout", "one");
    stdout(h, &["job", "cancel", &gone]);
    let live = submit(h, "scout", "two");

    let out = gitmoot(h)
        .args(["job", "kill", "--where", "agent=scout"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("refused {gone}: run {gone} is already")),
        "{text}"
    );
    assert!(text.contains(&format!("kill tree {live}")), "{text}");
    assert_eq!(job_state(h, &live), "cancelled");
}

#[test]
fn a_bad_query_is_one_line_exit_2_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    shell_agent(h, "scout", QUIET, &[]);
    let a = submit(h, "scout", "one");
    for q in ["", "state=sleeping", "colour=red", "agent", "older=soon"] {
        let out = gitmoot(h)
            .args(["job", "cancel", "--where", q])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{q:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{q:?}: {err}");
    }
    let out = gitmoot(h).args(["job", "retry", &a]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no pending human escalation"),
        "{out:?}"
    );
    assert_eq!(job_state(h, &a), "queued");
}

#[test]
fn agent_list_live_shows_who_works_on_what_who_waits_and_the_last_error() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let go = h.join("go");
    shell_agent(
        h,
        "busy",
        &format!(
            "cat >/dev/null\necho 'reading the schema'\nwhile [ ! -f {} ]; do sleep 0.1; done\n\
             echo '{{\"gitmoot_result\": {{\"decision\": \"approved\", \"summary\": \"ok\"}}}}'",
            go.display()
        ),
        &[],
    );
    shell_agent(h, "broken", "cat >/dev/null\necho oops >&2\nexit 3", &[]);
    shell_agent(h, "asker", support::ASKER, &[]);
    shell_agent(h, "spare", QUIET, &[]);
    submit(h, "broken", "fail");
    submit(h, "asker", "ask");
    stdout(h, &["daemon", "run", "--until-idle"]);
    let busy_job = submit(h, "busy", "work");
    let d = support::spawn_daemon(h, &[]);
    let row = |rows: &serde_json::Value, name: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap()
    };
    support::wait_until(
        "busy's step to show",
        std::time::Duration::from_secs(60),
        || {
            row(&json(h, &["agent", "list", "--live", "--json"]), "busy")["now"]
                == "reading the schema"
        },
    );
    let rows = json(h, &["agent", "list", "--live", "--json"]);
    let busy = row(&rows, "busy");
    assert_eq!(busy["state"], "working", "{busy}");
    assert_eq!(busy["running"], 1, "{busy}");
    assert_eq!(busy["now_job"], busy_job.as_str(), "{busy}");
    assert_eq!(busy["runtime"], "shell");
    assert_eq!(busy["policy"], "danger-full-access");
    let asker = row(&rows, "asker");
    assert_eq!(asker["state"], "waiting", "{asker}");
    let broken = row(&rows, "broken");
    assert_eq!(broken["state"], "idle", "{broken}");
    assert!(
        broken["last_error"]
            .as_str()
            .unwrap()
            .contains("exited with code 3"),
        "{broken}"
    );
    let spare = row(&rows, "spare");
    assert_eq!(
        (
            spare["state"].as_str(),
            spare["last_error"].is_null(),
            spare["unread"].as_u64()
        ),
        (Some("idle"), true, Some(0))
    );
    let text = stdout(h, &["agent", "list", "--live"]);
    assert!(text.contains("working on 1"), "{text}");
    assert!(text.contains("waiting on a human (1)"), "{text}");
    std::fs::write(&go, "").unwrap();
    support::wait_until(
        "busy's job to end",
        std::time::Duration::from_secs(60),
        || job_state(h, &busy_job) == "succeeded",
    );
    support::stop_daemon(d);
    assert_eq!(
        row(&json(h, &["agent", "list", "--live", "--json"]), "busy")["state"],
        "idle"
    );
}

#[test]
fn a_bulk_answer_gives_one_choice_previews_with_dry_run_and_names_the_refused() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    shell_agent(h, "asker", support::ASKER, &[]);
    let picky = support::ASKER.replace("\"canary first\", \"all at once\"", "\"yes\", \"no\"");
    shell_agent(h, "picky", &picky, &[]);
    shell_agent(h, "scout", QUIET, &[]);
    let a = submit(h, "asker", "one");
    let b = submit(h, "asker", "two");
    let p = submit(h, "picky", "three");
    let q = submit(h, "scout", "four");
    stdout(h, &["daemon", "run", "--until-idle"]);
    let pending = || {
        json(h, &["job", "pending", "--json"])
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(pending(), 3);

    // Validation: no choice, or a query naming nothing, is one line, exit 2.
    for args in [
        vec!["job", "answer", "--where", "kind=root"],
        vec!["job", "answer", "--where", "", "--choice", "yes"],
    ] {
        let out = gitmoot(h).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }

    let args = [
        "job",
        "answer",
        "--where",
        "kind=root",
        "--choice",
        "canary first",
    ];
    let dry = stdout(h, &[&args[..], &["--dry-run"]].concat());
    for job in [&a, &b] {
        assert!(
            dry.contains(&format!("would answer {job} \"canary first\"")),
            "{dry}"
        );
    }
    assert!(
        dry.contains(&format!(
            "refused {p}: rollout: \"canary first\" is not one of its choices"
        )),
        "{dry}"
    );
    assert!(
        dry.contains(&format!(
            "refused {q}: job {q} is not waiting on a question"
        )),
        "{dry}"
    );
    assert_eq!(pending(), 3, "the dry run answered something");

    let out = gitmoot(h).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("answer {a} \"canary first\"")),
        "{text}"
    );
    assert!(
        text.contains(&format!("answer {b} \"canary first\"")),
        "{text}"
    );
    let left = json(h, &["job", "pending", "--json"]);
    let left = left.as_array().unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["job_id"], p.as_str());
}
