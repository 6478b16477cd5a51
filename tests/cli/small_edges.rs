//! The small edges of issue #25 through the real binary on scratch homes: the result
//! decoder naming what it could not read (nesting too deep, an unpaired surrogate) instead
//! of a wrong type, and never overflowing its stack on deep input.

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
