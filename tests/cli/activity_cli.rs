//! Live activity through the real daemon with scripted agents: a shell agent's lines as
//! records, `job logs` (human, `--json`, `--follow` after the job settled, unknown ids),
//! `job show --json`'s activity fields, indented lines kept whole, the per-job cap, and a token budget that stops a
//! leg while it still runs.

use gitmoot_test_support::daemon as daemon_support;

use daemon_support::{TestHome, result};
use gitmoot::domain::JobState;
use gitmoot::store::activity::MAX_RECORDS;
use serde_json::Value;

fn logs_json(h: &TestHome, id: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["job", "logs", id, "--json"];
    args.extend_from_slice(extra);
    h.ok(&args)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_shell_agents_lines_are_its_activity_and_job_logs_prints_them() {
    let h = TestHome::new();
    h.shell_agent(
        "sh1",
        &format!(
            "echo 'building \x1b[1mnow\x1b[0m'\necho 'careful' >&2\necho '{}'\n",
            result("approved", "built")
        ),
    );
    let root = h.submit("sh1", "build it", &[]);
    h.daemon_until_idle(1);
    assert_eq!(h.job(&root).state, JobState::Succeeded);
    let logs = logs_json(&h, &root, &[]);
    let got: Vec<(&str, &str)> = logs
        .iter()
        .map(|v| (v["kind"].as_str().unwrap(), v["summary"].as_str().unwrap()))
        .collect();
    // Stdout and stderr are read on their own pipes, so only each stream's order is fixed.
    let stdout: Vec<_> = got.iter().filter(|(k, _)| *k == "output").collect();
    assert_eq!(stdout[0].1, "building now", "escapes are stripped");
    assert!(stdout[1].1.contains("gitmoot_result"));
    assert!(got.contains(&("stderr", "careful")));
    for (i, v) in logs.iter().enumerate() {
        assert_eq!(v["seq"], i as u64);
        assert_eq!(v["job"], root.as_str());
        assert!(v["at"].as_i64().unwrap() > 0);
    }
    // Human lines: `HH:MM:SS UTC kind summary`, the zone said.
    let human = h.ok(&["job", "logs", &root]);
    let first = human.lines().find(|l| l.contains("building")).unwrap();
    let (clock, rest) = first.split_once(' ').unwrap();
    assert_eq!(clock.len(), 8);
    assert_eq!(clock.matches(':').count(), 2);
    let mut rest = rest.split_whitespace();
    assert_eq!((rest.next(), rest.next()), (Some("UTC"), Some("output")));
    // A follow started after the job settled prints everything and exits 0.
    assert_eq!(logs_json(&h, &root, &["--follow"]), logs);
    let shown: Value = serde_json::from_str(&h.ok(&["job", "show", &root, "--json"])).unwrap();
    assert_eq!(shown["activity_count"], 3);
    assert_eq!(shown["last_activity"], logs[2]);
}

/// Issue 29, item 1: an indented line (a stack trace, nested output) keeps its indentation
/// in the records and in `job logs`.
#[test]
fn job_logs_keeps_a_lines_indentation() {
    let h = TestHome::new();
    h.shell_agent(
        "tracer",
        &format!(
            "printf 'Traceback:\\n    File \"app.py\", line 3\\n\\tat lib.rs:9\\n'\necho '{}'\n",
            result("approved", "traced")
        ),
    );
    let root = h.submit("tracer", "trace it", &[]);
    h.daemon_until_idle(1);
    let summaries: Vec<String> = logs_json(&h, &root, &[])
        .iter()
        .map(|v| v["summary"].as_str().unwrap().to_string())
        .collect();
    assert!(
        summaries.contains(&"    File \"app.py\", line 3".to_string()),
        "{summaries:?}"
    );
    assert!(
        summaries.contains(&"    at lib.rs:9".to_string()),
        "{summaries:?}"
    );
    let human = h.ok(&["job", "logs", &root]);
    assert!(
        human.contains("output          File \"app.py\", line 3"),
        "{human}"
    );
}

#[test]
fn a_job_without_activity_shows_zero_and_null_and_unknown_ids_are_refused() {
    let h = TestHome::new();
    h.shell_agent("quiet", "true\n");
    let root = h.submit("quiet", "nothing", &[]);
    let shown: Value = serde_json::from_str(&h.ok(&["job", "show", &root, "--json"])).unwrap();
    assert_eq!(shown["activity_count"], 0);
    assert_eq!(shown["last_activity"], Value::Null);
    for args in [
        vec!["job", "logs", "job-nope"],
        vec!["job", "logs", "job-nope", "--follow", "--json"],
    ] {
        let out = h.cmd(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error:") && err.contains("job-nope"),
            "{err}"
        );
    }
}

#[test]
fn a_chatty_agent_is_capped_with_one_truncated_record_and_still_settles() {
    let h = TestHome::new();
    h.shell_agent(
        "chatty",
        &format!(
            "i=0; while [ $i -lt {} ]; do echo line $i; i=$((i+1)); done\necho '{}'\n",
            MAX_RECORDS + 500,
            result("approved", "chatted")
        ),
    );
    let root = h.submit("chatty", "talk", &[]);
    h.daemon_until_idle(1);
    let j = h.job(&root);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    let logs = logs_json(&h, &root, &[]);
    assert_eq!(logs.len() as u64, MAX_RECORDS);
    assert_eq!(logs.last().unwrap()["kind"], "truncated");
    assert_eq!(logs.iter().filter(|v| v["kind"] == "truncated").count(), 1);
    assert_eq!(logs[0]["summary"], "line 0");
}

#[test]
fn a_token_budget_stops_a_leg_while_it_runs_and_says_why() {
    let h = TestHome::new();
    let fake = h.file("fake-codex");
    // Reports a turn's usage, then would work for minutes.
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '{\"type\":\"turn.started\"}'\n\
         echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":4000,\"cached_input_tokens\":0,\"output_tokens\":1000}}'\n\
         exec sleep 300\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    h.config(&format!(
        "[runtimes.codex]\npath = \"{}\"\n[orchestrate]\nmax_delegation_token_budget = 1000\n",
        fake.display()
    ));
    h.ok(&["agent", "add", "cx", "--runtime", "codex"]);
    let root = h.submit("cx", "work long", &[]);
    h.daemon_until_idle(1);
    let j = h.job(&root);
    assert_eq!(j.state, JobState::Failed);
    let err = j.error.unwrap_or_default();
    assert!(
        err.contains("token budget 1000 reached while running (used 5000)"),
        "{err}"
    );
    assert_eq!(
        (j.tokens_in, j.tokens_out),
        (4000, 1000),
        "the spend is kept"
    );
    let events = h.ok(&["job", "events", &root, "--json"]);
    assert!(events.contains("budget_stop"), "{events}");
    let kinds: Vec<String> = logs_json(&h, &root, &[])
        .iter()
        .map(|v| v["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["usage"]);
}
