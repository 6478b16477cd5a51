//! Issue 15's operations items through the real binary: one answer path for every
//! surface, preflight failures made visible, the built-in coordinator recipes and the
//! local @-tag (`[notify] command`).

use gitmoot_test_support as support;

use std::path::Path;

use serde_json::Value;
use support::{ASKER, gitmoot, jobs, json, shell_agent, stdout};

fn drain(h: &Path) {
    stdout(h, &["daemon", "run", "--until-idle"]);
}

/// Submits an asking root and runs it to its pause; returns (root, thread slug).
fn paused_asker(h: &Path) -> (String, String) {
    shell_agent(h, "asker", ASKER, &["--repo", "acme/api"]);
    let root = stdout(
        h,
        &[
            "job", "run", "--agent", "asker", "--repo", "acme/api", "Ship",
        ],
    )
    .trim()
    .to_string();
    drain(h);
    let threads = json(h, &["chat", "list", "--json"]);
    let slug = threads[0]["slug"].as_str().unwrap().to_string();
    assert!(
        threads[0]["title"]
            .as_str()
            .unwrap()
            .ends_with("awaiting answer")
    );
    (root, slug)
}

fn thread_title(h: &Path, slug: &str) -> String {
    json(h, &["chat", "list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["slug"] == slug)
        .map(|t| t["title"].as_str().unwrap().to_string())
        .unwrap()
}

#[test]
fn job_answer_posts_the_answer_to_the_ask_gate_thread_and_retitles_it() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let (root, slug) = paused_asker(h);
    let out = stdout(h, &["job", "answer", &root, "rollout: canary first"]);
    assert!(
        out.contains(&format!("posted to thread {slug} as #2")),
        "{out}"
    );
    let msgs = json(h, &["chat", "show", &slug, "--json"])["messages"].clone();
    let answer = &msgs[1];
    assert_eq!(answer["author"], "human", "{msgs}");
    assert_eq!(answer["body"], "rollout: canary first");
    assert_eq!(answer["reply_to"], 1);
    assert!(thread_title(h, &slug).ends_with("— answered"));
    // A refused second answer records nothing.
    gitmoot(h)
        .args(["job", "answer", &root, "rollout: all at once"])
        .assert()
        .code(2);
    let after = json(h, &["chat", "show", &slug, "--json"])["messages"].clone();
    assert_eq!(after.as_array().map(Vec::len), Some(2), "{after}");
    drain(h);
    assert_eq!(
        json(h, &["job", "tree", &root, "--json"])["run"]["state"],
        "done"
    );
}

#[test]
fn a_choice_question_takes_one_of_its_choices_or_a_unique_prefix_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let (root, slug) = paused_asker(h);
    for verb in [
        ["job", "answer", root.as_str()],
        ["chat", "answer", slug.as_str()],
    ] {
        let out = gitmoot(h)
            .args(verb)
            .arg("rollout: to the moon")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{verb:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("not one of its choices (canary first, all at once)"),
            "{verb:?}: {err}"
        );
    }
    let msgs = json(h, &["chat", "show", &slug, "--json"])["messages"].clone();
    assert_eq!(
        msgs.as_array().map(Vec::len),
        Some(1),
        "nothing posted: {msgs}"
    );
    assert!(thread_title(h, &slug).ends_with("awaiting answer"));
    stdout(h, &["job", "answer", &root, "rollout: CANARY"]);
    drain(h);
    let tree = json(h, &["job", "tree", &root, "--json"]);
    assert!(
        tree.to_string().contains("answer: canary first"),
        "the answer is the choice it named: {tree}"
    );
}

#[test]
fn chat_answer_retitles_the_thread_too() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let (_, slug) = paused_asker(h);
    stdout(h, &["chat", "answer", &slug, "rollout: all at once"]);
    assert!(thread_title(h, &slug).ends_with("— answered"));
}

#[test]
fn an_ask_auto_finalized_by_its_ttl_no_longer_awaits_an_answer_in_its_title() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    std::fs::create_dir_all(h).unwrap();
    std::fs::write(
        h.join("config.toml"),
        "[orchestrate]\nescalation_ttl = \"1s\"\n",
    )
    .unwrap();
    let (root, slug) = paused_asker(h);
    std::thread::sleep(std::time::Duration::from_millis(1_200));
    drain(h);
    assert_eq!(
        json(h, &["job", "tree", &root, "--json"])["run"]["state"],
        "done"
    );
    let title = thread_title(h, &slug);
    assert!(title.ends_with("— expired unanswered"), "{title}");
}

#[test]
fn an_ask_closed_by_a_kill_says_so_in_its_title() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let (root, slug) = paused_asker(h);
    stdout(h, &["job", "kill", &root]);
    let title = thread_title(h, &slug);
    assert!(title.ends_with("— closed (killed)"), "{title}");
}

/// A coordinator whose set names a runtime instead of an agent; its corrective round
/// returns a plain result.
const MISROUTER: &str = r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{"gitmoot_result": {"decision": "approved", "summary": "fan out", "delegations": [{"id": "a", "agent": "codex", "action": "ask", "prompt": "look"}]}}'
else
echo '{"gitmoot_result": {"decision": "approved", "summary": "did it myself"}}'
fi"#;

#[test]
fn a_preflight_failure_shows_in_job_list_and_daemon_status() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    shell_agent(h, "lead", MISROUTER, &[]);
    let status = json(h, &["daemon", "status", "--json"]);
    assert_eq!(status["delegation_preflight_failures"], 0, "{status}");
    let root = stdout(h, &["job", "run", "--agent", "lead", "Split the work"])
        .trim()
        .to_string();
    drain(h);
    let list = jobs(h);
    let coordinator = list.iter().find(|j| j["id"] == root.as_str()).unwrap();
    assert_eq!(coordinator["state"], "succeeded", "{list:?}");
    let why = coordinator["preflight_failed"].as_str().unwrap();
    assert!(why.contains("codex"), "{why}");
    assert!(
        list.iter()
            .filter(|j| j["id"] != root.as_str())
            .all(|j| j.get("preflight_failed").is_none()),
        "{list:?}"
    );
    let text = stdout(h, &["job", "list"]);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(root.as_str()))
        .unwrap();
    assert!(
        line.contains("PREFLIGHT_FAILED: ")
            && line.trim_end().ends_with(why.lines().next().unwrap()),
        "{line}"
    );
    assert_eq!(
        json(h, &["daemon", "status", "--json"])["delegation_preflight_failures"],
        1
    );
    assert!(stdout(h, &["daemon", "status"]).contains("delegation preflight failures: 1"));
}

fn result_of(h: &Path, id: &str) -> Value {
    json(h, &["job", "show", id, "--json"])["result"].clone()
}

#[test]
fn orchestrate_review_panel_fans_out_three_lensed_ephemeral_reviewers() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    gitmoot(h)
        .args(["orchestrate", "review-panel", "the parser change"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--agent"));
    shell_agent(h, "lead", "cat >/dev/null", &[]);
    let started = json(
        h,
        &["orchestrate", "review-panel", "the parser change", "--json"],
    );
    let root = started["root_id"].as_str().unwrap();
    let set = result_of(h, root)["delegations"].clone();
    let set = set.as_array().unwrap();
    assert_eq!(set.len(), 3, "{set:?}");
    let runtimes: Vec<&str> = set
        .iter()
        .map(|d| d["ephemeral"]["runtime"].as_str().unwrap())
        .collect();
    assert_eq!(runtimes, ["claude", "codex", "kimi"], "mixed runtimes");
    for (d, lens) in set.iter().zip(["security", "performance", "edge cases"]) {
        assert_eq!(d["action"], "review");
        assert_eq!(d["deps"], serde_json::json!([]));
        assert_eq!(d["ephemeral"]["autonomy_policy"], "read-only");
        assert!(d["prompt"].as_str().unwrap().contains(lens), "{d}");
        assert!(d["prompt"].as_str().unwrap().contains("the parser change"));
    }
    let legs: Vec<Value> = jobs(h)
        .into_iter()
        .filter(|j| j["parent_id"] == root)
        .collect();
    assert_eq!(legs.len(), 3);
    assert!(legs.iter().all(|j| j["state"] == "queued"), "{legs:?}");
    let root_job = json(h, &["job", "show", root, "--json"]);
    assert!(
        root_job["prompt"]
            .as_str()
            .unwrap()
            .contains("removing duplicates")
    );
}

#[test]
fn orchestrate_verifier_runs_an_independent_verify_leg_after_the_producer() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    shell_agent(h, "lead", "cat >/dev/null", &[]);
    gitmoot(h)
        .args([
            "orchestrate",
            "verifier",
            "fix the flake",
            "--runtime",
            "codex",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("different runtime"));
    let started = json(
        h,
        &[
            "orchestrate",
            "verifier",
            "fix the flake",
            "--runtime",
            "codex",
            "--runtime",
            "claude",
            "--escalate-human",
            "--json",
        ],
    );
    assert_eq!(started["legs"], serde_json::json!(["produce", "verify"]));
    let root = started["root_id"].as_str().unwrap();
    let set = result_of(h, root)["delegations"].clone();
    let (produce, verify) = (&set[0], &set[1]);
    assert_eq!(produce["ephemeral"]["runtime"], "codex");
    assert_eq!(verify["ephemeral"]["runtime"], "claude");
    assert_eq!(verify["action"], "review");
    assert_eq!(verify["deps"], serde_json::json!(["produce"]));
    assert_eq!(verify["synthesis_rule"], "verify");
    assert_eq!(verify["failure_policy"], "escalate_human");
    assert!(
        verify["prompt"]
            .as_str()
            .unwrap()
            .contains("re-run the build")
    );
    let legs: Vec<Value> = jobs(h)
        .into_iter()
        .filter(|j| j["parent_id"] == root)
        .collect();
    assert_eq!(
        legs.len(),
        1,
        "the verify leg waits for the producer: {legs:?}"
    );
    assert_eq!(legs[0]["delegation_id"], "produce");
}

#[test]
fn secrets_in_agent_output_are_redacted_before_anything_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let secret = "sk-proj-Zq9cT4kLmN8vB2xR7yW1";
    let aws = "AKIAIOSFODNN7EXAMPLE";
    let script = format!(
        r#"cat >/dev/null
echo "calling with Authorization: Bearer hunter2-bearer-token"
echo '{{"gitmoot_result": {{"decision": "approved", "summary": "used key {secret} and {aws}"}}}}'"#
    );
    shell_agent(h, "leaky", &script, &[]);
    let root = stdout(h, &["job", "run", "--agent", "leaky", "Deploy"])
        .trim()
        .to_string();
    drain(h);
    let job = json(h, &["job", "show", &root, "--json"]);
    assert_eq!(job["state"], "succeeded", "{job}");
    assert_eq!(
        job["result"]["summary"],
        "used key sk-[REDACTED] and AKIA[REDACTED]"
    );
    // Nothing under the home holds the secrets: not the database, its WAL, or any log.
    let mut stack = vec![h.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_some_and(|e| e == "sh") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for needle in [secret, aws, "hunter2-bearer-token"] {
                assert!(
                    !text.contains(needle),
                    "{needle} stored in {}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn a_paused_tree_runs_the_notify_command_once_with_the_gate_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    std::fs::create_dir_all(h).unwrap();
    let out = h.join("notified.jsonl");
    std::fs::write(
        h.join("config.toml"),
        format!("[notify]\ncommand = \"cat >> {}\"\n", out.display()),
    )
    .unwrap();
    let (root, slug) = paused_asker(h);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let gate: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(gate["event"], "human_needed");
    assert_eq!(gate["kind"], "ask");
    assert_eq!(gate["job_id"], root.as_str());
    assert_eq!(gate["agent"], "asker");
    assert_eq!(gate["repo"], "acme/api");
    assert_eq!(gate["thread"], slug.as_str());
    assert_eq!(gate["questions"][0]["prompt"], "Which rollout?");
    assert!(gate["answer_with"].as_str().unwrap().contains("job answer"));
    // Once per gate, however many daemons tick over it.
    drain(h);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 1);
    let kinds: Vec<String> = json(h, &["job", "events", &root, "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds.iter().filter(|k| *k == "human_notify").count(), 1);
}

#[test]
fn a_failing_notify_command_is_recorded_and_the_tree_still_waits() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    std::fs::create_dir_all(h).unwrap();
    std::fs::write(h.join("config.toml"), "[notify]\ncommand = \"exit 7\"\n").unwrap();
    let (root, _) = paused_asker(h);
    let events = json(h, &["job", "events", &root, "--json"]);
    let failed = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "human_notify_failed")
        .unwrap_or_else(|| panic!("{events}"));
    assert!(
        failed["message"].as_str().unwrap().contains("7"),
        "{failed}"
    );
    assert_eq!(
        json(h, &["job", "tree", &root, "--json"])["run"]["state"],
        "awaiting_human"
    );
}
