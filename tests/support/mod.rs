//! Shared helpers of the integration tests: the real binary on a home, JSON reads, and
//! scripted shell agents.

#![allow(dead_code)]

pub mod agent_args;
pub mod tmux;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// The real binary on `home`, never the caller's `$GITMOOT_HOME`.
pub fn gitmoot(home: &Path) -> Command {
    let mut c = Command::cargo_bin("gitmoot").unwrap();
    c.arg("--home")
        .arg(home)
        .env_remove("GITMOOT_HOME")
        .timeout(std::time::Duration::from_secs(120));
    c
}

pub fn bin() -> String {
    assert_cmd::cargo::cargo_bin("gitmoot")
        .display()
        .to_string()
}

/// Runs a read command with `--json` already in `args` and parses its output.
pub fn json(home: &Path, args: &[&str]) -> Value {
    let out = gitmoot(home).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes `script` into the home and registers it as a shell agent (plus `extra` flags).
/// Test agents write files to report what they saw, so unless `extra` names a policy they
/// are `workspace-write` (a `read-only` shell agent is held to it by Landlock).
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
            &["--policy", "workspace-write"][..]
        })
        .assert()
        .success();
}
