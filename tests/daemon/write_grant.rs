//! Git inside a write job's grant, through the real binary on a real repository: a
//! `workspace-write` agent commits, amends, stashes, tags and branches under its job's own
//! folder with git silent, and its attempts on the base branch, another job's branch, the
//! shared refs and the operator's working tree are refused by the kernel, leaving the
//! operator's refs and tree as they were.

use std::path::Path;

use gitmoot_test_support::write::WriteHome;

/// False, with the reason said, where the kernel cannot confine an agent.
fn confinable() -> bool {
    let ok = gitmoot::runtime::sandbox::enforceable();
    if !ok {
        eprintln!("skipped: this kernel has no Landlock, so workspace-write is not enforced");
    }
    ok
}

/// The job's branch as the store recorded it.
fn branch(w: &WriteHome, job: &str) -> String {
    let shown = w.json(&["job", "show", job, "--json"]);
    assert_eq!(shown["state"], "succeeded", "{shown}");
    w.summary(job).1
}

/// The operator's refs, but those of the job `but`.
fn refs_but(w: &WriteHome, but: &str) -> String {
    w.git(&["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter(|l| !l.contains(but))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn an_agent_commits_amends_stashes_tags_and_branches_of_its_own_with_git_silent() {
    if !confinable() {
        return;
    }
    let w = WriteHome::new("");
    // Each git step's stderr, and a word when it failed, go to a file in the worktree.
    let work = "o=$(git rev-parse --abbrev-ref HEAD); o=${o%/work}; e=git-stderr.txt; : > $e; \
        echo n > new.txt; git add new.txt 2>>$e || echo add-failed >> $e; \
        git commit -qm first 2>>$e || echo commit-failed >> $e; \
        git commit -q --amend -m amended 2>>$e || echo amend-failed >> $e; \
        echo more >> lib.txt; git stash push -q 2>>$e || echo stash-failed >> $e; \
        git diff --quiet 2>>$e || echo stash-left-changes >> $e; \
        git stash pop -q 2>>$e || echo pop-failed >> $e; \
        git tag \"$o/v1\" 2>>$e || echo tag-failed >> $e; \
        git branch \"$o/side\" 2>>$e || echo branch-failed >> $e; \
        [ \"$(git config gc.auto)\" = 0 ] || echo gc-may-repack >> $e";
    let job = w.implement(work, &[]);
    w.h.daemon_until_idle(1);
    let branch = branch(&w, &job);
    let wt = w.worktree(&job);
    assert_eq!(
        std::fs::read_to_string(wt.join("git-stderr.txt")).unwrap(),
        "",
        "git said something inside the grant"
    );
    let base = w.git(&["rev-parse", "main"]).trim().to_string();
    let log = w.git(&["log", "--format=%s", &format!("{base}..{branch}")]);
    assert_eq!(log.trim(), "amended");
    let own = branch
        .strip_suffix("/work")
        .expect("a folder of the job's own");
    let tip = w.git(&["rev-parse", &branch]);
    assert_eq!(w.git(&["rev-parse", &format!("refs/tags/{own}/v1")]), tip);
    assert_eq!(
        w.git(&["rev-parse", &format!("refs/heads/{own}/side")]),
        tip
    );
    // The stash came back into the worktree; it was the run's own, never the operator's.
    assert_eq!(
        std::fs::read_to_string(wt.join("lib.txt")).unwrap(),
        "one\ntwo\nthree\nmore\n"
    );
    assert_eq!(w.git(&["stash", "list"]), "");
}

#[test]
fn a_stash_the_agent_never_popped_is_kept_as_a_tag_of_its_job() {
    if !confinable() {
        return;
    }
    let w = WriteHome::new("");
    let job = w.implement("echo stashed >> lib.txt; git stash push -q -m left", &[]);
    w.h.daemon_until_idle(1);
    let own = branch(&w, &job);
    let own = own.strip_suffix("/work").unwrap();
    let wt = w.worktree(&job);
    assert_eq!(
        std::fs::read_to_string(wt.join("lib.txt")).unwrap(),
        "one\ntwo\nthree\n",
        "the stash took the change out of the worktree"
    );
    let tags = w.git(&["tag", "--list", &format!("{own}/stash/*")]);
    let tags: Vec<&str> = tags.lines().collect();
    assert_eq!(tags.len(), 1, "{tags:?}");
    assert_eq!(
        w.git(&["log", "-1", "--format=%s", tags[0]]).trim(),
        format!("On {own}/work: left")
    );
    assert_eq!(
        w.git(&["stash", "list"]),
        "",
        "the operator's stash is untouched"
    );
    gitmoot_test_support::daemon::git(&wt, &["stash", "apply", "-q", tags[0]]);
    assert_eq!(
        std::fs::read_to_string(wt.join("lib.txt")).unwrap(),
        "one\ntwo\nthree\nstashed\n"
    );
}

#[test]
fn an_agent_cannot_move_the_base_another_jobs_branch_or_the_operators_tree() {
    if !confinable() {
        return;
    }
    let w = WriteHome::new("");
    let first = w.implement("echo a > a.txt; git add a.txt; git commit -qm a", &[]);
    w.h.daemon_until_idle(1);
    let other = branch(&w, &first);
    let other_wt = w.worktree(&first);
    let repo = w.repo.display().to_string();
    let tries = [
        ("base", "git update-ref refs/heads/main HEAD".to_string()),
        ("base-deleted", "git update-ref -d refs/heads/main".into()),
        ("other", format!("git update-ref refs/heads/{other} HEAD")),
        (
            "other-deleted",
            format!("git update-ref -d refs/heads/{other}"),
        ),
        ("operator-tag", "git tag plain".into()),
        ("packed", "git pack-refs --all".into()),
        (
            "main-head",
            format!("git -C {repo} symbolic-ref HEAD refs/heads/x"),
        ),
        ("tree", format!("echo x > {repo}/README")),
        ("tree-new", format!("echo x > {repo}/planted")),
        (
            "other-tree",
            format!("echo x > {}/planted", other_wt.display()),
        ),
    ];
    let work: String = tries
        .iter()
        .map(|(name, cmd)| {
            format!(
                "if ( {cmd} ) 2>/dev/null; then echo {name}-done >> tries.txt; \
                 else echo {name}-refused >> tries.txt; fi; "
            )
        })
        .collect();
    let before_refs = refs_but(&w, "none");
    let before_tree = (
        w.git(&["status", "--porcelain"]),
        std::fs::read_to_string(w.repo.join("README")).unwrap(),
    );
    let second = w.implement(&format!("echo b > b.txt; {work}"), &[]);
    w.h.daemon_until_idle(1);
    let wt = w.worktree(&second);
    let said = std::fs::read_to_string(wt.join("tries.txt")).unwrap();
    let want: String = tries
        .iter()
        .map(|(name, _)| format!("{name}-refused\n"))
        .collect();
    assert_eq!(said, want);
    assert_eq!(
        refs_but(&w, &second),
        before_refs,
        "the operator's refs moved"
    );
    assert_eq!(
        (
            w.git(&["status", "--porcelain"]),
            std::fs::read_to_string(w.repo.join("README")).unwrap(),
        ),
        before_tree,
        "the operator's working tree changed"
    );
    assert!(!Path::new(&other_wt).join("planted").exists());
}
