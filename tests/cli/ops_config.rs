//! Issue 15's operations items that config.toml shows: the seeds' own config examples
//! through `config show`, `[agents.<name>]` errors naming their section, and the daemon
//! keeping its config in step with the file (per tick, and on SIGHUP, which never ends it).

use gitmoot_test_support as support;

use std::process::Child;
use std::time::Duration;

use support::{gitmoot, jobs, json, shell_agent, spawn_daemon, stdout, wait_until};

const WAIT: Duration = Duration::from_secs(60);

/// The seeds' `[chat]`, `[orchestrate]` and `[agents.<name>]` examples, every knob they name.
const SEED_EXAMPLE: &str = r#"
[chat]
auto_respond = true          # global kill switch (default false)
auto_respond_cap = 4
auto_respond_cooldown = "2m"
moot_max_seats = 6
moot_message_cap = 30

[orchestrate]
max_verify_replan_attempts = 2
max_delegation_non_progress_streak = 2
max_delegation_token_budget = 0
max_delegation_cost_usd = 0
escalation_ttl = "24h"
escalation_handle = "octocat"
inline_artifact_bodies = true
inline_artifact_max_bytes = 32768
inject_upstream_dep_context = true
default_delegation_timeout = "10m"
default_plan_timeout = ""
default_implement_timeout = ""
default_review_timeout = "15m"
default_gate_timeout = ""
default_repair_timeout = ""
result_checks = "block"
blocking_severity = "P1"

[agents.responder]
chat_autorespond = true      # per-agent opt-in (default false)
"#;

#[test]
fn the_seeds_config_example_passes_config_show() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    std::fs::create_dir_all(h).unwrap();
    std::fs::write(h.join("config.toml"), SEED_EXAMPLE).unwrap();
    let c = json(h, &["config", "show", "--json"]);
    assert_eq!(c["agents"]["responder"]["chat_autorespond"], true, "{c}");
    assert_eq!(c["chat"]["auto_respond"], true);
    assert_eq!(c["orchestrate"]["escalation_handle"], "octocat");
    assert_eq!(c["orchestrate"]["default_review_timeout"], "15m");
    assert_eq!(c["orchestrate"]["default_plan_timeout"], "");
    assert_eq!(c["orchestrate"]["result_checks"], "block");
    assert_eq!(c["orchestrate"]["blocking_severity"], "P1");
    let text = gitmoot(h).args(["config", "show"]).output().unwrap();
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("[agents.responder]\nchat_autorespond = true"),
        "{text}"
    );
    // What `config show` prints is itself a valid config.
    std::fs::write(h.join("config.toml"), &text).unwrap();
    assert_eq!(json(h, &["config", "show", "--json"]), c);
}

#[test]
fn config_show_lists_every_default_timeout_key_when_unset() {
    let dir = tempfile::tempdir().unwrap();
    let out = gitmoot(dir.path())
        .args(["config", "show"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for phase in [
        "delegation",
        "plan",
        "implement",
        "review",
        "gate",
        "repair",
    ] {
        assert!(
            text.contains(&format!("default_{phase}_timeout = \"\"")),
            "default_{phase}_timeout missing:\n{text}"
        );
    }
}

#[test]
fn a_bad_agents_section_names_that_section_and_the_way_to_register() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    std::fs::create_dir_all(h).unwrap();
    for (text, section) in [
        (
            "[chat]\nauto_respond = true\n\n[agents.responder]\nruntime = \"codex\"\n",
            "[agents.responder].runtime (line 5)",
        ),
        (
            "[chat]\nauto_respond = true\n[agents.responder]\nchat_autorespond = \"yes\"\n",
            "[agents.responder].chat_autorespond (line 4)",
        ),
        (
            "[chat]\nauto_respond = true\n[pipelines]\nx = 1\n",
            "[pipelines] (line 3)",
        ),
    ] {
        std::fs::write(h.join("config.toml"), text).unwrap();
        let out = gitmoot(h).args(["config", "show"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(section), "{text:?} gave {err}");
        assert!(!err.contains("[chat]"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        if section.starts_with("[agents.") {
            assert!(err.contains("gitmoot agent add"), "{err}");
        }
    }
}

fn hup(child: &Child) {
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGHUP);
    }
}

#[test]
fn the_daemon_rereads_its_config_per_tick_and_on_sighup_without_stopping() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let gate = h.join("gate");
    // The reply waits for the test's go, so SIGHUP lands while it runs.
    let script = format!(
        "cat >/dev/null; while [ ! -e {} ]; do sleep 0.05; done; \
         echo '{{\"gitmoot_result\": {{\"decision\": \"approved\", \"summary\": \"flags live in config/flags.toml\"}}}}'",
        gate.display()
    );
    shell_agent(h, "scout", &script, &["--repo", "acme/api"]);
    let enrolled = "[daemon]\ntick = \"200ms\"\n[agents.scout]\nchat_autorespond = true\n";
    std::fs::write(
        h.join("config.toml"),
        format!("{enrolled}[chat]\nauto_respond = false\n"),
    )
    .unwrap();
    stdout(h, &["chat", "create", "help", "--repo", "acme/api"]);
    stdout(
        h,
        &["chat", "send", "help", "@scout where is the feature flag?"],
    );
    let mut daemon = spawn_daemon(h, &[]);
    wait_until("the daemon is up", WAIT, || {
        json(h, &["daemon", "status", "--json"])["running"] == true
    });
    std::thread::sleep(Duration::from_millis(600));
    assert!(jobs(h).is_empty(), "auto-respond is off: {:?}", jobs(h));

    std::fs::write(
        h.join("config.toml"),
        format!("{enrolled}[chat]\nauto_respond = true\n"),
    )
    .unwrap();
    wait_until("the edited config starts the reply", WAIT, || {
        jobs(h).iter().any(|j| j["state"] == "running")
    });
    hup(&daemon);
    std::fs::write(h.join("config.toml"), "[chat]\nauto_respond = maybe\n").unwrap();
    hup(&daemon);
    let log = h.join("logs").join("gitmoot.log");
    wait_until("the bad config is logged", WAIT, || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("failed, keeping the previous config")
    });
    std::fs::write(&gate, "").unwrap();
    wait_until("the running reply finishes", WAIT, || {
        jobs(h).iter().any(|j| j["state"] == "succeeded")
    });
    assert!(
        daemon.try_wait().unwrap().is_none(),
        "SIGHUP never ends the daemon"
    );
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("keeping the previous config"))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 1, "one line per bad config: {lines:?}");
    assert!(lines[0].contains("[chat].auto_respond"), "{lines:?}");
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(daemon.id() as i32, libc::SIGTERM);
    }
    assert!(daemon.wait().unwrap().success());
}
