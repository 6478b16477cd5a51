//! The small edges of issue #25 through the real binary on scratch homes: the result
//! decoder naming what it could not read (nesting too deep, an unpaired surrogate) instead
//! of a wrong type, and never overflowing its stack on deep input; the daemon's status
//! file private (0600) whatever the umask; `agent add --command` checking the first word
//! against PATH only for a plain program invocation.

use std::time::Duration;

use gitmoot_test_support as support;

/// `result check` on `output`: the `error: ` lines it printed, which must end with exit 2.
fn check_errors(output: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let out = support::gitmoot(home.path())
        .args(["result", "check"])
        .write_stdin(output.to_owned())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr
}

#[test]
fn a_result_nested_200k_deep_is_refused_as_too_deep() {
    let depth = 200_000;
    let output = format!(
        r#"{{"gitmoot_result": {{"decision": "approved", "summary": "deep", "delegations": {}{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let stderr = check_errors(&output);
    assert!(
        stderr.contains("gitmoot_result delegations is nested deeper than 128"),
        "{stderr}"
    );
    assert!(!stderr.contains("must be an array"), "{stderr}");
}

#[test]
fn a_lone_surrogate_in_a_string_is_named() {
    let stderr =
        check_errors(r#"{"gitmoot_result": {"decision": "approved", "summary": "a \ud800 b"}}"#);
    assert!(
        stderr.contains("gitmoot_result summary holds an invalid UTF-16 surrogate"),
        "{stderr}"
    );
    assert!(!stderr.contains("must be a string"), "{stderr}");
}

/// A daemon stopped when the test ends, a failed assertion included.
struct Daemon(Option<std::process::Child>);

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            support::stop_daemon(child);
        }
    }
}

/// `daemon run` on `home` started under umask 0, as a service manager might start it.
fn daemon_under_umask_0(home: &std::path::Path) -> Daemon {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(support::bin());
    cmd.arg("--home")
        .arg(home)
        .args(["daemon", "run"])
        .env_remove("GITMOOT_HOME")
        .env_remove("GITMOOT_STORE")
        .env_remove(gitmoot::chat::relay::ENV_SOCKET)
        .env_remove(gitmoot::chat::relay::ENV_TOKEN)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: umask is async-signal-safe and only sets the child's own mask.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    Daemon(Some(cmd.spawn().unwrap()))
}

#[test]
fn the_daemon_status_file_is_0600_under_umask_0_and_stays_so_when_rewritten() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[daemon]\ntick = \"200ms\"\n",
    )
    .unwrap();
    let status = home.path().join("daemon-status.json");
    let _daemon = daemon_under_umask_0(home.path());
    let mode = || std::fs::metadata(&status).map(|m| m.permissions().mode() & 0o777);
    let tick = || {
        std::fs::read(&status)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .map(|v| v["last_tick_ms"].clone())
    };
    support::wait_until("the status file", Duration::from_secs(20), || {
        tick().is_some()
    });
    assert_eq!(mode().unwrap(), 0o600, "as first written");
    let first = tick().unwrap();
    support::wait_until("a rewrite", Duration::from_secs(20), || {
        tick().is_some_and(|t| t != first)
    });
    assert_eq!(mode().unwrap(), 0o600, "once rewritten");
}

/// `agent add NAME --runtime shell --command COMMAND` on a fresh home: its stderr.
fn add_shell_agent(name: &str, command: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let out = support::gitmoot(home.path())
        .args(support::agent_args::shell_agent_args(name, command, &[]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{command}: {stderr}");
    stderr
}

#[test]
fn agent_add_checks_only_a_plain_program_and_never_warns_about_shell_syntax() {
    for command in [
        "for i in 1 2; do echo \"$i\"; done",
        "while read -r line; do echo \"$line\"; done",
        "if true; then cat; fi",
        "H=$(hostname); echo \"$H\"",
        "cd repo && no-such-program-xyz --go",
        "(no-such-program-xyz)",
        "{ no-such-program-xyz; }",
        "\"$HOME/bin/tool\" --go",
        "exec cat",
    ] {
        let stderr = add_shell_agent("sh", command);
        assert!(!stderr.contains("is not on PATH"), "{command}: {stderr}");
    }
    let stderr = add_shell_agent("plain", "no-such-program-xyz --go");
    assert!(
        stderr.contains("`no-such-program-xyz` is not on PATH"),
        "a plain program is still checked: {stderr}"
    );
}
