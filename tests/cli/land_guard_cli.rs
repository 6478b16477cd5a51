//! `job land` never moves a base branch under the operator: refused, exit 2 and nothing
//! changed, while git has an operation in progress in the checkout or in a worktree on
//! the base (each set up for real with git); the base moves only by compare-and-swap
//! against the tip the land was planned on; and the job's worktree and branch go only
//! once the base is seen to hold the landed commit.

use std::path::Path;

use gitmoot_test_support as support;
use support::daemon::git;
use support::unchanged::{store_rows, tree_state};
use support::write::WriteHome;

/// A finished job adding `a.txt`, and a checkout whose `main` moved on since (README
/// changed) with a branch `side` that changes README too, so git's operations between
/// the two stop half-way on a conflict.
fn home() -> (WriteHome, String) {
    let w = WriteHome::new("");
    let a = w.implement("echo a > a.txt", &[]);
    w.h.daemon_until_idle(1);
    w.git(&["checkout", "-qb", "side"]);
    std::fs::write(w.repo.join("README"), "side\n").unwrap();
    w.git(&["commit", "-qam", "side"]);
    w.git(&["checkout", "-q", "main"]);
    std::fs::write(w.repo.join("README"), "main\n").unwrap();
    w.git(&["commit", "-qam", "main edit"]);
    (w, a)
}

/// Runs git in `dir` with `env`, whatever its exit (a conflict stops it on purpose).
fn git_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) {
    let mut c = std::process::Command::new("git");
    c.arg("-C").arg(dir).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap();
}

/// The store's rows, the checkout's and the job's worktree's git state.
fn state(w: &WriteHome, job: &str) -> Vec<String> {
    vec![
        store_rows(&w.h.path()),
        tree_state(&w.repo),
        tree_state(&w.worktree(job)),
    ]
}

const EDIT_FIRST: (&str, &str) = ("GIT_SEQUENCE_EDITOR", "sed -i 1s/^pick/edit/");

#[test]
fn a_land_is_refused_while_git_has_an_operation_in_progress_naming_it_and_how_to_end_it() {
    let (w, a) = home();
    let patch = w.h.file("side.patch");
    std::fs::write(&patch, w.git(&["format-patch", "-1", "side", "--stdout"])).unwrap();
    let patch = patch.display().to_string();
    // (how to start it, what the refusal names, how to end it)
    let cases: Vec<(Vec<&str>, &str, Vec<&str>)> = vec![
        (
            vec!["rebase", "-i", "HEAD~1"],
            "a rebase",
            vec!["rebase", "--abort"],
        ),
        (
            vec!["merge", "--no-ff", "side"],
            "a merge",
            vec!["merge", "--abort"],
        ),
        (
            vec!["cherry-pick", "side"],
            "a cherry-pick",
            vec!["cherry-pick", "--abort"],
        ),
        (
            vec!["revert", "--no-edit", "HEAD~1"],
            "a revert",
            vec!["revert", "--abort"],
        ),
        (vec!["bisect", "start"], "a bisect", vec!["bisect", "reset"]),
        (vec!["am", &patch], "a `git am`", vec!["am", "--abort"]),
    ];
    for (start, what, end) in cases {
        git_env(&w.repo, &start, &[EDIT_FIRST]);
        let before = state(&w, &a);
        let err = w.fails(&["job", "land", &a], 2);
        assert!(
            err.contains(&format!("is in the middle of {what}"))
                && err.contains(&format!("`git {}`", end.join(" "))),
            "{start:?}: {err}"
        );
        let dry = w.fails(&["job", "land", &a, "--dry-run"], 2);
        assert!(dry.contains(what), "{dry}");
        assert!(
            state(&w, &a) == before,
            "{start:?}: a refused land changed something"
        );
        w.git(&end);
    }
    assert!(w.worktree(&a).exists());
    assert!(!w.event_kinds(&a).contains(&"landed".to_string()));

    // A worktree of the checkout rebasing the base (HEAD detached meanwhile) holds it
    // too; one on another branch does not.
    w.git(&["checkout", "-q", "side"]);
    let other = w.h.file("other");
    w.git(&[
        "worktree",
        "add",
        "-q",
        &other.display().to_string(),
        "main",
    ]);
    git_env(&other, &["rebase", "-i", "HEAD~1"], &[EDIT_FIRST]);
    let before = state(&w, &a);
    let err = w.fails(&["job", "land", &a], 2);
    assert!(
        err.contains(&format!("{}, a worktree of", other.display()))
            && err.contains("in the middle of a rebase")
            && err.contains("git rebase --abort"),
        "{err}"
    );
    assert!(state(&w, &a) == before);
    git(&other, &["rebase", "--abort"]);
    git(&other, &["checkout", "-q", "--detach"]);
    git_env(&w.repo, &["merge", "--no-ff", "main"], &[]);
    assert!(w.repo.join(".git/MERGE_HEAD").exists());
    w.git(&["merge", "--abort"]);
    let out = w.h.ok(&["job", "land", &a]);
    assert!(out.contains(&format!("landed {a} on main")), "{out}");
}

#[test]
fn a_base_moved_between_the_plan_and_the_move_is_refused_with_nothing_changed() {
    let (w, a) = home();
    // Another writer moves main after the land's checks, before its move.
    let concurrent =
        "git update-ref refs/heads/main $(git commit-tree main^{tree} -p main -m concurrent)";
    for on in ["main", "side"] {
        w.git(&["checkout", "-q", on]);
        let files = tree_state(&w.repo);
        let rows = store_rows(&w.h.path());
        let out =
            w.h.cmd(&["job", "land", &a])
                .env("GITMOOT_TEST_BEFORE_BASE_MOVES", concurrent)
                .output()
                .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("main moved while landing"), "{err}");
        assert_eq!(
            w.git(&["log", "-1", "--format=%s", "main"]).trim(),
            "concurrent"
        );
        assert!(
            store_rows(&w.h.path()) == rows,
            "on {on}: the store changed"
        );
        // Only the concurrent writer's commit moved the checkout's refs.
        let moved = tree_state(&w.repo);
        assert_eq!(
            moved.lines().filter(|l| !files.contains(*l)).count(),
            1,
            "on {on}: {moved}"
        );
        assert!(!w.repo.join("a.txt").exists());
        assert!(w.worktree(&a).exists());
    }

    // A base the checkout's own reference-transaction hook refuses to move stays put.
    let hook = w.repo.join(".git/hooks/reference-transaction");
    std::fs::write(
        &hook,
        "#!/bin/sh\n[ \"$1\" = prepared ] || exit 0\ngrep -q ' refs/heads/main$' && exit 1\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    w.git(&["checkout", "-q", "main"]);
    let before = state(&w, &a);
    let err = w.fails(&["job", "land", &a], 1);
    assert!(err.contains("main could not be moved"), "{err}");
    assert!(state(&w, &a) == before, "a blocked land changed something");
    std::fs::remove_file(&hook).unwrap();

    // The checkout's index held by another git (its lock file): the swap is undone when
    // the files cannot follow it.
    let lock = w.repo.join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let before = state(&w, &a);
    let err = w.fails(&["job", "land", &a], 1);
    assert!(
        err.contains("the checkout's files could not follow the land")
            && err.contains("main was put back at"),
        "{err}"
    );
    assert!(state(&w, &a) == before, "an undone land changed something");
    std::fs::remove_file(&lock).unwrap();
    let out = w.h.ok(&["job", "land", &a]);
    assert!(out.contains(&format!("landed {a} on main")), "{out}");
}

#[test]
fn a_jobs_worktree_and_branch_stay_when_the_base_no_longer_holds_the_landed_commit() {
    let (w, a) = home();
    w.git(&["checkout", "-q", "side"]);
    // Right after the land's swap commits, something puts main back (as an operator's
    // `git rebase --abort` would).
    let once = w.h.file("undone");
    let hook = w.repo.join(".git/hooks/reference-transaction");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\n[ \"$1\" = committed ] || exit 0\nwhile read old new ref; do\n  \
             if [ \"$ref\" = refs/heads/main ] && [ ! -e {once} ]; then\n    \
             touch {once}; git update-ref refs/heads/main \"$old\"\n  fi\ndone\n",
            once = once.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let main = w.git(&["rev-parse", "main"]);
    let err = w.fails(&["job", "land", &a], 1);
    assert!(
        err.contains("main moved again right after the land")
            && err.contains(&format!("gitmoot/{a}/work are kept")),
        "{err}"
    );
    assert_eq!(w.git(&["rev-parse", "main"]), main);
    assert!(
        w.worktree(&a).join("a.txt").exists(),
        "the work was removed"
    );
    assert!(
        !w.git(&["branch", "--list", &format!("gitmoot/{a}/work")])
            .is_empty()
    );
    assert!(!w.event_kinds(&a).contains(&"landed".to_string()));
    std::fs::remove_file(&hook).unwrap();
    let out = w.h.ok(&["job", "land", &a]);
    assert!(out.contains(&format!("landed {a} on main")), "{out}");
}
