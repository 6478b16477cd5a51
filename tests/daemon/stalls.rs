//! Stall detection through the real daemon: scripted agents that go silent, loop on one
//! command or burn tokens with no step each raise their signal as a `job_stalled` event;
//! a healthy chatty one raises none. Every stalled agent waits for a `go` file the test
//! writes once it has seen the event, so nothing depends on how fast the machine is.

use gitmoot_test_support as support;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use support::{configured_home, gitmoot, json, shell_agent, spawn_daemon, stdout, stop_daemon};

const WAIT: Duration = Duration::from_secs(60);

/// Small thresholds so the tests are quick; the daemon sweeps every 100ms.
fn home(dir: &Path, extra: &str) -> std::path::PathBuf {
    configured_home(
        dir,
        "h",
        &format!(
            "[daemon]\ntick = \"100ms\"\n[orchestrate]\nstall_after = \"2s\"\nstall_repeats = 3\n\
             stall_burn_tokens = 50\n{extra}"
        ),
    )
}

const RESULT: &str = r#"{"gitmoot_result": {"decision": "approved", "summary": "done"}}"#;

/// A codex stand-in: prints `events` (JSONL) first, then waits for `go`, then answers.
fn codex_agent(h: &Path, name: &str, go: &Path, events: &str) {
    let script = h.join(format!("{name}-codex"));
    let message = serde_json::json!({
        "type": "item.completed",
        "item": {"type": "agent_message", "text": RESULT}
    });
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\n{events}\nwhile [ ! -f {go} ]; do sleep 0.1; done\necho '{message}'\n\
             echo '{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}'\n",
            go = go.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cfg = h.join("config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "[runtimes.codex]\npath = \"{}\"\n",
        script.display()
    ));
    std::fs::write(&cfg, text).unwrap();
    gitmoot(h)
        .args([
            "agent",
            "add",
            name,
            "--runtime",
            "codex",
            "--policy",
            "danger-full-access",
        ])
        .assert()
        .success();
}

fn submit(h: &Path, agent: &str) -> String {
    stdout(h, &["job", "run", "--agent", agent, "work"])
        .trim()
        .to_string()
}

fn stall_events(h: &Path, job: &str) -> Vec<Value> {
    json(h, &["job", "events", job, "--json"])
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "job_stalled")
        .cloned()
        .collect()
}

/// Waits for `job`'s first stall, releases the agent, waits for the job to settle; returns
/// the stall event.
fn first_stall(h: &Path, job: &str, go: &Path) -> Value {
    support::wait_until("a job_stalled event", WAIT, || {
        !stall_events(h, job).is_empty()
    });
    std::fs::write(go, "").unwrap();
    support::wait_until("the job to settle", WAIT, || {
        support::job_state(h, job) == "succeeded"
    });
    let all = stall_events(h, job);
    assert_eq!(all.len(), 1, "one stall is raised once: {all:?}");
    all[0].clone()
}

#[test]
fn a_silent_agent_is_stalled_silent_and_cleared_when_it_moves_again() {
    let dir = tempfile::tempdir().unwrap();
    let h = home(dir.path(), "");
    let (go, end) = (dir.path().join("go"), dir.path().join("end"));
    // Silent until `go`, then busy (a line every 100ms) until `end`.
    shell_agent(
        &h,
        "quiet",
        &format!(
            "cat >/dev/null\nwhile [ ! -f {} ]; do sleep 0.1; done\n\
             while [ ! -f {} ]; do echo working; sleep 0.1; done\necho '{RESULT}'",
            go.display(),
            end.display()
        ),
        &[],
    );
    let job = submit(&h, "quiet");
    let d = spawn_daemon(&h, &[]);
    let kinds = |h: &Path| -> Vec<String> {
        json(h, &["job", "events", &job, "--json"])
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap().to_string())
            .collect()
    };
    support::wait_until("a job_stalled event", WAIT, || {
        !stall_events(&h, &job).is_empty()
    });
    std::fs::write(&go, "").unwrap();
    support::wait_until("a job_stall_cleared event", WAIT, || {
        kinds(&h).contains(&"job_stall_cleared".to_string())
    });
    std::fs::write(&end, "").unwrap();
    support::wait_until("the job to settle", WAIT, || {
        support::job_state(&h, &job) == "succeeded"
    });
    stop_daemon(d);
    let all = stall_events(&h, &job);
    assert_eq!(all.len(), 1, "one stall is raised once: {all:?}");
    assert_eq!(all[0]["data"]["signal"], "silent", "{all:?}");
    let evidence = all[0]["data"]["evidence"].as_str().unwrap();
    assert!(
        evidence.contains("no activity for") && evidence.contains("nothing since it started"),
        "{evidence}"
    );
}

#[test]
fn an_agent_repeating_one_command_is_stalled_looping_with_the_command_named() {
    let dir = tempfile::tempdir().unwrap();
    let told = dir.path().join("told");
    let h = home(
        dir.path(),
        &format!("[notify]\ncommand = \"cat >> {}\"\n", told.display()),
    );
    let go = dir.path().join("go");
    let call = r#"echo '{"type":"item.started","item":{"type":"command_execution","command":"cargo test"}}'
echo '{"type":"item.completed","item":{"type":"command_execution","command":"cargo test","aggregated_output":"1 failed","exit_code":101}}'"#;
    codex_agent(
        &h,
        "looper",
        &go,
        &format!("{call}\n{call}\n{call}\n{call}"),
    );
    let job = submit(&h, "looper");
    let d = spawn_daemon(&h, &[]);
    let e = first_stall(&h, &job, &go);
    stop_daemon(d);
    assert_eq!(e["data"]["signal"], "looping", "{e}");
    let evidence = e["data"]["evidence"].as_str().unwrap();
    assert!(
        evidence.contains("$ cargo test repeated 4 times in a row"),
        "{evidence}"
    );
    // The notify hook is told of the stall as it is of a human gate.
    support::wait_until("the [notify] command", WAIT, || {
        std::fs::read_to_string(&told).is_ok_and(|t| t.contains("job_stalled"))
    });
    let told: Value = serde_json::from_str(std::fs::read_to_string(&told).unwrap().trim()).unwrap();
    assert_eq!(told["signal"], "looping", "{told}");
    assert_eq!(told["job_id"], job.as_str(), "{told}");
}

#[test]
fn an_agent_spending_tokens_with_no_step_is_stalled_burning() {
    let dir = tempfile::tempdir().unwrap();
    let h = home(dir.path(), "");
    let go = dir.path().join("go");
    // One step, then only usage reports, each bigger, until released.
    let events = format!(
        "echo '{{\"type\":\"item.completed\",\"item\":{{\"type\":\"agent_message\",\"text\":\"thinking\"}}}}'\n\
         n=0\nwhile [ ! -f {} ]; do n=$((n+100)); \
         echo \"{{\\\"type\\\":\\\"turn.completed\\\",\\\"usage\\\":{{\\\"input_tokens\\\":$n,\\\"output_tokens\\\":1}}}}\"; \
         sleep 0.1; done",
        go.display()
    );
    codex_agent(&h, "burner", &go, &events);
    let job = submit(&h, "burner");
    let d = spawn_daemon(&h, &[]);
    let e = first_stall(&h, &job, &go);
    stop_daemon(d);
    assert_eq!(e["data"]["signal"], "burning", "{e}");
    let evidence = e["data"]["evidence"].as_str().unwrap();
    assert!(
        evidence.contains("tokens spent with no step")
            && evidence.contains("last step message: thinking"),
        "{evidence}"
    );
}

#[test]
fn a_healthy_chatty_agent_raises_no_stall() {
    let dir = tempfile::tempdir().unwrap();
    let h = home(dir.path(), "");
    // It talks every 50ms for three seconds, longer than the two-second window.
    shell_agent(
        &h,
        "chatty",
        &format!(
            "cat >/dev/null\ni=0\nwhile [ $i -lt 60 ]; do echo \"step $i\"; i=$((i+1)); sleep 0.05; done\n\
             echo '{RESULT}'"
        ),
        &[],
    );
    let job = submit(&h, "chatty");
    stdout(&h, &["daemon", "run", "--until-idle"]);
    assert_eq!(support::job_state(&h, &job), "succeeded");
    assert!(stall_events(&h, &job).is_empty());
}

#[test]
fn leave_takes_a_stalled_job_out_of_attention_and_refuses_one_that_is_not_stalled() {
    let dir = tempfile::tempdir().unwrap();
    let h = home(dir.path(), "");
    let go = dir.path().join("go");
    shell_agent(
        &h,
        "quiet",
        &format!(
            "cat >/dev/null\nwhile [ ! -f {} ]; do sleep 0.1; done\necho '{RESULT}'",
            go.display()
        ),
        &[],
    );
    let job = submit(&h, "quiet");
    let out = gitmoot(&h).args(["job", "leave", &job]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not stalled"));

    let d = spawn_daemon(&h, &[]);
    support::wait_until("a job_stalled event", WAIT, || {
        !stall_events(&h, &job).is_empty()
    });
    let left = stdout(&h, &["job", "leave", &job]);
    assert!(left.contains(&format!("left {job} running")), "{left}");
    let kinds = json(&h, &["job", "events", &job, "--json"]);
    assert!(
        kinds
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "job_stall_left"),
        "{kinds}"
    );
    std::fs::write(&go, "").unwrap();
    support::wait_until("the job to settle", WAIT, || {
        support::job_state(&h, &job) == "succeeded"
    });
    stop_daemon(d);
    assert_eq!(
        stall_events(&h, &job).len(),
        1,
        "left, it is not raised again"
    );
}
