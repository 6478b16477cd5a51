//! The integration tests' one support crate, built once and linked by every test group: the
//! real binary on a home, its checked stdout and JSON reads, scripted shell agents
//! (registered through the binary or as store rows), the rollout asker the operations tests
//! share; a throwaway PostgreSQL cluster and the backend a suite names (`pg`), a private tmux
//! server (`tmux`), the before and after of a command that must change nothing
//! (`unchanged`), the engine's harness (`engine`), the daemon tests' home (`daemon`), and
//! the real agent CLIs with their model stand-ins (`real`).
//!
//! A library rather than a module each test binary compiles again: it builds once, and a
//! helper only some groups use is not dead code in the others.

pub mod agent_args;
pub mod daemon;
pub mod engine;
pub mod pg;
pub mod real;
pub mod tmux;
pub mod unchanged;
pub mod write;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gitmoot::chat::relay::{ENV_SOCKET, ENV_TOKEN};
use gitmoot::store::agents::Agent;
use serde_json::Value;

/// The real binary on `home`, never the caller's `$GITMOOT_HOME`, `$GITMOOT_STORE` nor its relay seat (a test
/// run by an agent would otherwise post through that agent's socket).
pub fn gitmoot(home: &Path) -> Command {
    let mut c = Command::cargo_bin("gitmoot").unwrap();
    c.arg("--home")
        .arg(home)
        .env_remove("GITMOOT_HOME")
        .env_remove("GITMOOT_STORE")
        .env_remove(ENV_SOCKET)
        .env_remove(ENV_TOKEN)
        .env("XDG_STATE_HOME", test_state_dir())
        .timeout(std::time::Duration::from_secs(120));
    c
}

/// The `XDG_STATE_HOME` the binary gets in tests (worktrees live under it, one folder per
/// home), so no test writes the user's own state folder.
pub fn test_state_dir() -> std::path::PathBuf {
    std::env::temp_dir().join("gitmoot-tests-state")
}

pub fn bin() -> String {
    assert_cmd::cargo::cargo_bin("gitmoot")
        .display()
        .to_string()
}

/// A new home `dir/name` holding `config` as its `config.toml`.
pub fn configured_home(dir: &Path, name: &str, config: &str) -> PathBuf {
    let home = dir.join(name);
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), config).unwrap();
    home
}

/// A read-only shell agent that may only ask, as a row to insert straight into a store.
pub fn ask_agent(name: &str) -> Agent {
    Agent::shell(name, "true")
}

/// `gitmoot --home HOME daemon run ARGS` as a background process (the same environment
/// scrubbing as `gitmoot`), its stderr kept for the test to read.
pub fn spawn_daemon(home: &Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(bin())
        .arg("--home")
        .arg(home)
        .args(["daemon", "run"])
        .args(args)
        .env_remove("GITMOOT_HOME")
        .env_remove("GITMOOT_STORE")
        .env_remove(ENV_SOCKET)
        .env_remove(ENV_TOKEN)
        .env("XDG_STATE_HOME", test_state_dir())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Stops a daemon gracefully (SIGTERM) and waits for it.
pub fn stop_daemon(mut d: std::process::Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
    d.wait().unwrap();
}

/// `daemon::wait_until` that panics naming `what` once `limit` has passed.
pub fn wait_until(what: &str, limit: std::time::Duration, cond: impl FnMut() -> bool) {
    assert!(
        daemon::wait_until(limit, cond),
        "timed out waiting for {what}"
    );
}

/// Runs `args`, which must succeed; returns its stdout.
pub fn stdout(home: &Path, args: &[&str]) -> String {
    let out = gitmoot(home).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a read command with `--json` already in `args` and parses its output.
pub fn json(home: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&stdout(home, args)).unwrap()
}

/// The `key` text of every element of the JSON array `list`, in order.
pub fn texts<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e[key].as_str().unwrap())
        .collect()
}

/// The text bodies of the messages of a `chat show --json` document.
pub fn bodies(thread: &Value) -> Vec<&str> {
    thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["body"].as_str())
        .collect()
}

/// The state of job `id`, as `job show --json` reports it.
pub fn job_state(home: &Path, id: &str) -> String {
    json(home, &["job", "show", id, "--json"])["state"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Every job `job list --json` shows, as its JSON rows.
pub fn jobs(home: &Path) -> Vec<Value> {
    json(home, &["job", "list", "--json"])
        .as_array()
        .unwrap()
        .clone()
}

/// The state of the run rooted at `root`, as `job tree --json` reports it.
pub fn run_state(home: &Path, root: &str) -> String {
    json(home, &["job", "tree", root, "--json"])["run"]["state"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Polls until the run rooted at `root` is `want`; past `limit` it fails showing the tree.
pub fn wait_state(home: &Path, root: &str, want: &str, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    while run_state(home, root) != want {
        assert!(
            start.elapsed() < limit,
            "run {root} never became {want}: {}",
            json(home, &["job", "tree", root, "--json"])
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A coordinator that asks the human which rollout to take on its root run and approves
/// once answered: the gate the operations tests answer through every surface.
pub const ASKER: &str = r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{"gitmoot_result": {"decision": "approved", "summary": "needs a rollout choice", "human_questions": [{"id": "rollout", "prompt": "Which rollout?", "choices": ["canary first", "all at once"]}]}}'
else
echo '{"gitmoot_result": {"decision": "approved", "summary": "done"}}'
fi"#;

/// Writes `script` into the home and registers it as a shell agent (plus `extra` flags).
/// Test agents write files to report what they saw, wherever the test keeps them, so
/// unless `extra` names a policy they are `danger-full-access` (`read-only` and
/// `workspace-write` agents are held to their folders by the kernel).
pub fn shell_agent(home: &Path, name: &str, script: &str, extra: &[&str]) {
    std::fs::create_dir_all(home).unwrap();
    let path = home.join(format!("{name}.sh"));
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    let command = format!("sh {}", path.display());
    gitmoot(home)
        .args(agent_args::shell_agent_args(name, &command, extra))
        .args(if extra.contains(&"--policy") {
            &[][..]
        } else {
            &["--policy", "danger-full-access"][..]
        })
        .assert()
        .success();
}
