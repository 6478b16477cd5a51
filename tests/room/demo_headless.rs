//! `gitmoot demo --headless` through the real binary: the scene runs to the first human
//! gate and prints it; `--answer` resolves the gates and every tree reaches its end.

use gitmoot_test_support as support;

use std::path::Path;

use serde_json::Value;
use support::{gitmoot, texts};

fn run_states(home: &Path) -> Vec<(String, String, String)> {
    let out = gitmoot(home)
        .args(["job", "list", "--json"])
        .output()
        .unwrap();
    let jobs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut roots: Vec<(String, String, String)> = jobs
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["kind"] == "root")
        .map(|j| {
            let id = j["id"].as_str().unwrap().to_string();
            let tree = gitmoot(home)
                .args(["job", "tree", &id, "--json"])
                .output()
                .unwrap();
            let tree: Value = serde_json::from_slice(&tree.stdout).unwrap();
            (
                id,
                tree["run"]["title"].as_str().unwrap().to_string(),
                tree["run"]["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    roots.sort_by(|a, b| a.1.cmp(&b.1));
    roots
}

/// Runs the headless demo at full speed into `home` (plus `extra` flags); returns what it
/// printed, which must end in success.
fn demo(home: &Path, extra: &[&str]) -> String {
    let out = gitmoot(home)
        .args(["demo", "--headless"])
        .args(extra)
        .args(["--speed", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The demo coder's implement job.
fn coder_job(home: &Path) -> String {
    let jobs = support::json(home, &["job", "list", "--json"]);
    jobs.as_array()
        .unwrap()
        .iter()
        .find(|j| j["agent"] == "coder")
        .and_then(|j| j["id"].as_str())
        .expect("the coder's job")
        .to_string()
}

fn state_of<'a>(runs: &'a [(String, String, String)], title_part: &str) -> &'a str {
    &runs
        .iter()
        .find(|r| r.1.contains(title_part))
        .unwrap_or_else(|| panic!("no run like {title_part}: {runs:?}"))
        .2
}

#[test]
fn headless_demo_stops_at_the_first_human_gate_and_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("demo");
    let text = demo(&home, &[]);
    assert!(text.contains("== at the first human gate =="), "{text}");
    assert!(
        text.contains("[awaiting_human] Plan the session-refresh rollout"),
        "{text}"
    );
    assert!(text.contains("rollout: How should the sessions migration roll out? [online, batched | maintenance window]"), "{text}");
    assert!(text.contains("integration [failed] runner (leg)"), "{text}");
    assert!(text.contains("failure_policy escalate_human"), "{text}");
    assert!(text.contains("thread release-planning"), "{text}");
    assert!(
        text.contains("[promotion_request] @scout where do the API rate limits live?"),
        "{text}"
    );
    assert!(text.contains("scout [job_result]"), "{text}");

    let runs = run_states(&home);
    assert_eq!(
        state_of(&runs, "Plan the session-refresh"),
        "awaiting_human"
    );
    assert_eq!(state_of(&runs, "Soak-test"), "killed");
    assert_eq!(runs.iter().filter(|r| r.2 == "done").count(), 2, "{runs:?}");
    // The coder's implement job ended in a worktree of its own, its work waiting for review:
    // a commit of the logging and an uncommitted test.
    let coder = coder_job(&home);
    let diff = support::json(&home, &["job", "diff", &coder, "--json"]);
    let files: Vec<(&str, &str)> = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("src/session.rs", "modified"),
            ("tests/refresh_logging.rs", "added")
        ],
        "{diff}"
    );
    let list = support::json(&home, &["worktree", "list", "--json"]);
    assert_eq!(list[0]["state"], "ready", "{list}");
    let checkout = home.with_file_name("demo-auth");
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(&checkout)
        .args(["status", "--porcelain"])
        .output()
        .unwrap();
    assert!(
        status.stdout.is_empty(),
        "the checkout is untouched until a land"
    );
    assert!(
        !std::fs::read_to_string(checkout.join("src/session.rs"))
            .unwrap()
            .contains("tracing::warn!")
    );
    let pending = gitmoot(&home)
        .args(["job", "pending", "--json"])
        .output()
        .unwrap();
    let pending: Value = serde_json::from_slice(&pending.stdout).unwrap();
    let kinds = texts(&pending, "kind");
    assert!(
        kinds.contains(&"ask") && kinds.contains(&"failure"),
        "{pending}"
    );
}

#[test]
fn headless_demo_with_answers_runs_every_tree_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("demo");
    let text = demo(&home, &["--answer"]);
    assert!(text.contains("> answering"), "{text}");
    assert!(text.contains("> retrying the failed leg"), "{text}");
    let after = text
        .split("== after the answers ==")
        .nth(1)
        .expect("final state printed");
    assert!(
        after.contains("[done] Plan the session-refresh rollout"),
        "{after}"
    );
    assert!(
        after.contains("verify [succeeded] verifier (leg)"),
        "{after}"
    );
    assert!(after.contains("pending human gates: 0"), "{after}");

    no_markers_and_a_fitting_answer(&home);
    // The coder's work went back once with the review comments, then landed on main.
    assert!(
        after.contains("[done] Log why a session refresh failed"),
        "{after}"
    );
    assert!(
        text.contains("> sending job-") && text.contains("> landed job-"),
        "{text}"
    );
    let coder = coder_job(&home);
    let shown = support::json(&home, &["job", "show", &coder, "--json"]);
    assert_eq!(shown["attempt"], 2, "{shown}");
    let list = support::json(&home, &["worktree", "list", "--json"]);
    assert_eq!(list[0]["state"], "landed", "{list}");
    assert_eq!(list[0]["review_rounds"], 1, "{list}");
    let session =
        std::fs::read_to_string(home.with_file_name("demo-auth").join("src/session.rs")).unwrap();
    assert!(
        session.contains("session = %claims.session_id"),
        "{session}"
    );
    let runs = run_states(&home);
    assert_eq!(state_of(&runs, "Plan the session-refresh"), "done");
    assert_eq!(state_of(&runs, "Soak-test"), "killed");
    let main = runs
        .iter()
        .find(|r| r.1.contains("Plan the session-refresh"))
        .unwrap();
    let tree = gitmoot(&home)
        .args(["job", "tree", &main.0, "--json"])
        .output()
        .unwrap();
    let tree: Value = serde_json::from_slice(&tree.stdout).unwrap();
    let kids = tree["tree"]["children"].as_array().unwrap();
    let cont = kids
        .iter()
        .find(|k| k["kind"] == "continuation")
        .expect("a continuation ran");
    assert!(
        cont["prompt"]
            .as_str()
            .unwrap()
            .contains("maintenance window"),
        "the answer reached the continuation"
    );
    assert!(
        cont["result"]["summary"]
            .as_str()
            .unwrap()
            .contains("maintenance window")
    );
}

/// Demo prompts carry no script markers, and the promoted chat question gets an answer
/// about what it asked (checked on the home of the full run, to run the demo once).
fn no_markers_and_a_fitting_answer(home: &Path) {
    let home = home.to_path_buf();
    let jobs = support::json(&home, &["job", "list", "--json"]);
    let jobs = jobs.as_array().unwrap();
    for j in jobs {
        let prompt = j["prompt"].as_str().unwrap_or_default();
        assert!(
            !prompt.contains("[quick]") && !prompt.contains("[soak]"),
            "{prompt}"
        );
    }
    let quick = jobs
        .iter()
        .find(|j| j["agent"] == "scout" && j["kind"] == "root")
        .expect("the promoted question ran as a root for scout");
    let shown = support::json(
        &home,
        &["job", "show", quick["id"].as_str().unwrap(), "--json"],
    );
    let summary = shown["result"]["summary"].as_str().unwrap_or_default();
    assert!(
        summary.contains("rate limits") || summary.contains("Rate limits"),
        "{shown}"
    );
}
