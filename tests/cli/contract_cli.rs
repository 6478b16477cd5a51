//! `gitmoot result check` through the real binary: valid output prints the normalised
//! result and exits 0; invalid output prints every error on its own `error: ` line and
//! exits 2.

use assert_cmd::Command;

fn gitmoot(home: &tempfile::TempDir) -> Command {
    let mut cmd = Command::cargo_bin("gitmoot").expect("binary");
    cmd.env("GITMOOT_HOME", home.path());
    cmd
}

const VALID: &str = r#"I reviewed the change and ran the tests.

```json
{"gitmoot_result": {"decision": "approved", "summary": "No blocking issues.",
  "evidence": "executed",
  "tests_run": [{"result": "pass", "command": "cargo test --all"}, null],
  "delegations": [{"id": "verify", "agent": "checker", "action": "review",
                   "prompt": "Re-run the suite.", "timeout": "10m"}]}}
```
"#;

const INVALID: &str = r#"Here you go:
{"gitmoot_result": {"decision": "changes_requested", "summary": "",
  "next_agents": ["x"],
  "delegations": [{"id": "a", "agent": "r", "action": "implement", "prompt": "p", "deps": ["a"]}]}}
"#;

#[test]
fn valid_file_prints_normalised_json_and_exits_0() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("out.txt");
    std::fs::write(&file, VALID).unwrap();
    let out = gitmoot(&home)
        .args(["result", "check"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let r = &json["gitmoot_result"];
    assert_eq!(r["decision"], "approved");
    assert_eq!(r["evidence"], "executed");
    assert_eq!(
        r["tests_run"],
        serde_json::json!([r#"{"command":"cargo test --all","result":"pass"}"#, ""])
    );
    assert_eq!(r["delegations"][0]["timeout_ms"], 600_000);
    assert_eq!(r["delegations"][0]["failure_policy"], "block_parent");
    assert!(out.stderr.is_empty());
    // The printed form is itself a valid result that parses to the same value.
    let again = gitmoot(&home)
        .args(["result", "check"])
        .write_stdin(out.stdout.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(again, out.stdout);
}

#[test]
fn stdin_is_read_without_a_file() {
    let home = tempfile::tempdir().unwrap();
    gitmoot(&home)
        .args(["result", "check"])
        .write_stdin(VALID)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            r#""summary": "No blocking issues.""#,
        ));
}

#[test]
fn invalid_output_prints_every_error_and_exits_2() {
    let home = tempfile::tempdir().unwrap();
    let out = gitmoot(&home)
        .args(["result", "check"])
        .write_stdin(INVALID)
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        [
            r#"error: unsupported gitmoot_result field "next_agents": delegations replaced it; list follow-up work as delegations[] entries with id, agent, action and prompt"#,
            "error: gitmoot_result summary is required",
            "error: gitmoot_result decision changes_requested requires severity P0, P1, P2 or P3 (the highest-severity finding)",
            r#"error: delegations[0] (id "a"): action "implement" is refused: delegation legs may only ask or review"#,
            r#"error: delegation "a" depends on itself"#,
        ]
    );
}

#[test]
fn output_without_a_result_is_one_error() {
    let home = tempfile::tempdir().unwrap();
    gitmoot(&home)
        .args(["result", "check"])
        .write_stdin("I could not finish.")
        .assert()
        .code(2)
        .stderr("error: missing valid gitmoot_result JSON object\n");
}

#[test]
fn unreadable_file_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("nope.txt");
    let out = gitmoot(&home)
        .args(["result", "check"])
        .arg(&missing)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("error: cannot read "), "{stderr}");
    assert!(stderr.contains("nope.txt"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);
}
