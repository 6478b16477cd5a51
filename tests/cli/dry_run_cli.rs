//! `--dry-run` changes nothing on every path of every verb that takes it (`job land`,
//! `discard`, `cancel`, `kill`, `retry`, `answer`; one job id or a `--where` query): each
//! says what the verb would do, in the words of the `--where` dry run, exits 0, and leaves
//! every row of the store, the checkout and each worktree (files, index, HEAD, refs) as
//! they were.

use std::path::PathBuf;

use gitmoot_test_support as support;
use support::unchanged::{store_rows, tree_state};
use support::write::WriteHome;

/// A root that fans one `ask` leg out to `broken`, which fails: a failure round a human
/// holds, the one `job retry` acts on.
const BOSS: &str = r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{"gitmoot_result":{"decision":"approved","summary":"fan","delegations":[{"id":"a","agent":"broken","action":"ask","prompt":"go","failure_policy":"escalate_human"}]}}'
else
echo '{"gitmoot_result":{"decision":"approved","summary":"done"}}'
fi"#;

/// The store's rows and the git state of the checkout and of `trees`.
fn state(w: &WriteHome, trees: &[PathBuf]) -> Vec<String> {
    let mut all = vec![store_rows(&w.h.path()), tree_state(&w.repo)];
    all.extend(trees.iter().map(|t| tree_state(t)));
    all
}

/// Runs `args` (a dry run), which must exit 0 having changed nothing; its stdout.
fn dry(w: &WriteHome, trees: &[PathBuf], args: &[&str]) -> String {
    let before = state(w, trees);
    let out = w.run(args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {text}{err}");
    assert!(
        state(w, trees) == before,
        "{args:?} changed the store or a git tree"
    );
    text
}

/// A `--json` dry run: one item, not refused, saying `what`.
fn dry_json(w: &WriteHome, trees: &[PathBuf], args: &[&str], what: &str) {
    let v: serde_json::Value = serde_json::from_str(&dry(w, trees, args)).unwrap();
    assert_eq!(v["dry_run"], true, "{v}");
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{v}");
    assert!(items[0]["refused"].is_null(), "{v}");
    assert!(items[0]["what"].as_str().unwrap().starts_with(what), "{v}");
}

#[test]
fn land_and_discard_of_one_job_with_dry_run_say_what_they_would_do_and_change_nothing() {
    let w = WriteHome::new("");
    let a = w.implement(
        "echo a > a.txt; git add a.txt; git commit -qm a; echo b > b.txt",
        &[],
    );
    w.h.daemon_until_idle(1);
    let trees = [w.worktree(&a)];

    let text = dry(&w, &trees, &["job", "land", &a, "--dry-run"]);
    assert!(
        text.contains(&format!(
            "would land {a}: merges branch gitmoot/{a}/work into main of repo acme/app (fast-forward)"
        )) && text.contains("dry run: nothing changed"),
        "{text}"
    );
    let text = dry(
        &w,
        &trees,
        &["job", "land", &a, "--squash", "--message", "m", "--dry-run"],
    );
    assert!(text.contains("(squash)"), "{text}");
    dry_json(
        &w,
        &trees,
        &["job", "land", &a, "--dry-run", "--json"],
        "land",
    );
    let text = dry(
        &w,
        &trees,
        &["job", "land", "--where", "action=implement", "--dry-run"],
    );
    assert!(text.contains(&format!("would land {a}:")), "{text}");

    let says = format!(
        "would discard {a}: deletes its worktree and branch gitmoot/{a}/work; loses 2 file(s) changed"
    );
    for args in [
        vec!["job", "discard", &a, "--dry-run", "--force"],
        vec!["job", "discard", &a, "--dry-run"],
        vec!["job", "discard", "--where", "action=implement", "--dry-run"],
    ] {
        let text = dry(&w, &trees, &args);
        assert!(text.contains(&says), "{args:?}: {text}");
    }
    dry_json(
        &w,
        &trees,
        &["job", "discard", &a, "--dry-run", "--json"],
        "discard",
    );

    // What the dry run said is what the verb does.
    let landed = w.h.ok(&["job", "land", &a]);
    assert!(landed.contains("(fast-forward)"), "{landed}");
}

#[test]
fn cancel_and_kill_of_one_job_with_dry_run_say_what_they_would_do_and_change_nothing() {
    let w = WriteHome::new("");
    let q = w.implement("true", &[]);
    let gone = w.implement("true", &[]);
    w.h.ok(&["job", "cancel", &gone]);
    let trees = [];

    let text = dry(&w, &trees, &["job", "cancel", &q, "--dry-run"]);
    assert!(
        text.contains(&format!("would cancel {q} (queued: it never starts)"))
            && text.contains("dry run: nothing changed"),
        "{text}"
    );
    dry_json(
        &w,
        &trees,
        &["job", "cancel", &q, "--dry-run", "--json"],
        "cancel",
    );
    let text = dry(
        &w,
        &trees,
        &["job", "cancel", "--where", "state=queued", "--dry-run"],
    );
    assert!(
        text.contains(&format!("would cancel {q} (queued")),
        "{text}"
    );

    let text = dry(&w, &trees, &["job", "kill", &q, "--dry-run"]);
    assert!(
        text.contains(&format!(
            "would kill tree {q}: 1 queued cancelled, 0 running finish their turn"
        )),
        "{text}"
    );
    let text = dry(&w, &trees, &["job", "kill", &q, "--force", "--dry-run"]);
    assert!(text.contains("0 running are terminated"), "{text}");
    dry_json(
        &w,
        &trees,
        &["job", "kill", &q, "--dry-run", "--json"],
        "kill",
    );
    let text = dry(
        &w,
        &trees,
        &["job", "kill", "--where", "state=queued", "--dry-run"],
    );
    assert!(text.contains(&format!("would kill tree {q}")), "{text}");

    // Refused alone, a dry run is the verb's own refusal: one line, exit 2, nothing changed.
    let before = state(&w, &trees);
    let err = w.fails(&["job", "cancel", &gone, "--dry-run"], 2);
    assert!(err.contains("already"), "{err}");
    assert!(state(&w, &trees) == before);
    assert_eq!(support::job_state(&w.h.path(), &q), "queued");
}

#[test]
fn retry_and_answer_of_one_job_with_dry_run_say_what_they_would_do_and_change_nothing() {
    let w = WriteHome::new("");
    let home = w.h.path();
    support::shell_agent(&home, "boss", BOSS, &[]);
    support::shell_agent(&home, "broken", "cat >/dev/null; exit 3", &[]);
    support::shell_agent(&home, "asker", support::ASKER, &[]);
    let root = w.h.submit("boss", "fan out", &[]);
    let asked = w.h.submit("asker", "ask", &[]);
    w.h.daemon_until_idle(2);
    let leg = format!("{root}/a");
    let trees = [];

    let text = dry(&w, &trees, &["job", "retry", &leg, "--dry-run"]);
    assert!(
        text.contains(&format!(
            "would retry {leg} (failed: runs again as a new attempt)"
        )),
        "{text}"
    );
    dry_json(
        &w,
        &trees,
        &["job", "retry", &leg, "--dry-run", "--json"],
        "retry",
    );
    let text = dry(
        &w,
        &trees,
        &["job", "retry", "--where", "state=failed", "--dry-run"],
    );
    assert!(text.contains(&format!("would retry {leg}")), "{text}");

    let text = dry(
        &w,
        &trees,
        &[
            "job",
            "answer",
            &asked,
            "rollout: canary first",
            "--dry-run",
        ],
    );
    assert!(
        text.contains(&format!(
            "would answer {asked} \"rollout: canary first\" (it resumes: its continuation is queued)"
        )),
        "{text}"
    );
    let text = dry(
        &w,
        &trees,
        &[
            "job",
            "answer",
            "--where",
            "agent=asker",
            "--choice",
            "canary first",
            "--dry-run",
        ],
    );
    assert!(text.contains(&format!("would answer {asked}")), "{text}");
    let pending = w.json(&["job", "pending", "--json"]);
    assert_eq!(pending.as_array().unwrap().len(), 2, "{pending}");
}
