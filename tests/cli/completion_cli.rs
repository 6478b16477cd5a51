//! Shell completion and the manual: `gitmoot completions SHELL` registers the binary as its
//! own completer, which offers the job ids, agents and threads of the home on the line
//! being completed (clap_complete's `COMPLETE=SHELL gitmoot -- WORDS…` protocol); `gitmoot
//! man` prints clap_mangen's page.

use gitmoot_test_support as support;

use std::path::Path;

use support::gitmoot;

/// What the shell offers after `words` (fish's protocol: one candidate a line, then a tab
/// and its help), on `home`.
fn offered(home: &Path, words: &[&str]) -> Vec<String> {
    let out = assert_cmd::Command::cargo_bin("gitmoot")
        .unwrap()
        .env_remove("GITMOOT_HOME")
        .env_remove("GITMOOT_STORE")
        .env("COMPLETE", "fish")
        .arg("--")
        .args(["gitmoot", "--home"])
        .arg(home)
        .args(words)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .filter(|c| !c.starts_with('-'))
        .collect()
}

#[test]
fn shell_completion_offers_the_homes_jobs_agents_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    support::shell_agent(&home, "scout", "true", &["--repo", "acme/api"]);
    support::shell_agent(&home, "lead", "true", &[]);
    gitmoot(&home)
        .args(["chat", "create", "rate-limits", "--repo", "acme/api"])
        .assert()
        .success();
    let job = support::stdout(&home, &["job", "run", "--agent", "scout", "look"]);
    let job = job.trim();

    assert_eq!(offered(&home, &["job", "show", ""]), [job]);
    assert_eq!(offered(&home, &["job", "kill", "job-"]), [job]);
    assert_eq!(offered(&home, &["agent", "show", ""]), ["lead", "scout"]);
    assert_eq!(offered(&home, &["job", "run", "--agent", "s"]), ["scout"]);
    assert_eq!(offered(&home, &["chat", "show", ""]), ["rate-limits"]);
    assert_eq!(offered(&home, &["job", "list", "--repo", ""]), ["acme/api"]);
    assert_eq!(
        offered(&home, &["job", "list", "--state", "fa"]),
        ["failed"]
    );

    // A home that is not there offers nothing and is not made by asking.
    let missing = dir.path().join("nothere");
    assert!(offered(&missing, &["job", "show", ""]).is_empty());
    assert!(!missing.exists());

    // The script calls this binary back with the protocol's variable.
    gitmoot(&home)
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicates::str::contains("COMPLETE=\"bash\""));
}

#[test]
fn man_prints_the_page_of_the_command_or_a_verb() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    gitmoot(&home)
        .arg("man")
        .assert()
        .success()
        .stdout(predicates::str::contains(".TH gitmoot 1"));
    gitmoot(&home)
        .args(["man", "job", "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains(".TH gitmoot-job-list 1"))
        .stdout(predicates::str::contains("\\-\\-state"));
    gitmoot(&home)
        .args(["man", "job", "nope"])
        .assert()
        .code(2)
        .stderr("error: no command `job nope` to show the manual of (see gitmoot --help)\n");
    assert!(!home.exists());
}
