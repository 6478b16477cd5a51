//! Issue 26's many hosts: two homes (`alpha`, `beta`) on one PostgreSQL store, as two hosts
//! would have. A write job run by alpha's daemon is pinned to alpha; beta reads its diff from
//! the copy alpha's daemon stored (bounded, refreshed after a review round) and is refused,
//! naming alpha, the verbs that need the worktree itself.

use gitmoot_test_support as support;

use serde_json::Value;
use support::daemon::TestHome;
use support::write::WriteHome;

/// `[daemon] labels` and the shared store, as a config section list.
fn host_config(label: &str, url: &str) -> String {
    format!("\n[daemon]\nlabels = [\"{label}\"]\n\n[store]\nurl = \"{url}\"\n")
}

fn json(h: &TestHome, args: &[&str]) -> Value {
    serde_json::from_str(&h.ok(args)).unwrap()
}

/// The files of a `job diff --json` as (path, added, removed).
fn counts(diff: &Value) -> Vec<(String, u64, u64)> {
    diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["added"].as_u64().unwrap(),
                f["removed"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn another_host_reads_the_stored_diff_and_lands_only_where_the_worktree_is() {
    let db = support::pg::database();
    let alpha = WriteHome::new(&host_config("alpha", &db.url()));
    let beta = TestHome::new();
    beta.config(&host_config("beta", &db.url()));
    let job = alpha.implement(
        "printf 'ONE\\ntwo\\nthree\\n' > lib.txt; git commit -qam one; echo new > new.txt",
        &[],
    );
    alpha.h.daemon_until_idle(1);
    let shown = json(&beta, &["job", "show", &job, "--json"]);
    assert_eq!(shown["state"], "succeeded", "{shown}");
    assert_eq!(
        shown["on_label"], "alpha",
        "pinned where its worktree is: {shown}"
    );

    let here = alpha.json(&["job", "diff", &job, "--json"]);
    assert!(here.get("stored").is_none(), "alpha reads git: {here}");
    let there = json(&beta, &["job", "diff", &job, "--json"]);
    assert_eq!(there["stored"]["host"], "alpha", "{there}");
    assert_eq!(counts(&there), counts(&here));
    assert_eq!(there["files"], here["files"], "the hunks too");
    let git_patch = alpha.h.ok(&["job", "diff", &job]);
    // Work added after the job ended is in alpha's git, not in the stored copy.
    std::fs::write(alpha.worktree(&job).join("late.txt"), "late\n").unwrap();
    assert_eq!(
        counts(&alpha.json(&["job", "diff", &job, "--json"])).len(),
        3
    );
    assert_eq!(
        counts(&json(&beta, &["job", "diff", &job, "--json"])),
        counts(&here)
    );
    // Git's own patch, less the lines naming objects and modes the copy does not keep.
    let git_patch: String = git_patch
        .lines()
        .filter(|l| !(l.starts_with("index ") || l.contains(" file mode ")))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(beta.ok(&["job", "diff", &job]), git_patch);
    let stat = beta.ok(&["job", "diff", &job, "--stat"]);
    assert!(
        stat.contains("2 files changed, 2 insertions(+), 1 deletions(-)"),
        "{stat}"
    );

    let refused = |args: &[&str]| {
        let out = beta.cmd(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("host labelled \"alpha\""), "{err}");
    };
    refused(&["job", "land", &job]);
    refused(&["job", "discard", &job, "--force"]);
    refused(&["job", "review", &job, "fix it"]);
    refused(&["job", "diff", &job, "--since-review"]);
    assert_eq!(
        alpha.json(&["worktree", "list", "--json"])[0]["state"],
        "ready"
    );

    // A review round from alpha runs on alpha and stores the diff again.
    alpha
        .h
        .ok(&["job", "review", &job, "DO: echo reviewed > r.txt"]);
    alpha.h.daemon_until_idle(1);
    let again = json(&beta, &["job", "diff", &job, "--json"]);
    let paths: Vec<String> = counts(&again).into_iter().map(|c| c.0).collect();
    assert_eq!(
        paths,
        ["late.txt", "lib.txt", "new.txt", "r.txt"],
        "{again}"
    );
    assert!(again["stored"]["at_ms"].as_i64() > there["stored"]["at_ms"].as_i64());

    alpha.h.ok(&["job", "land", &job]);
    assert!(alpha.repo.join("r.txt").exists());
}
