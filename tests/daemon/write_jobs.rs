//! Write jobs on a real git repository through the real binary: each implement job works
//! in its own worktree on its own branch from a recorded base, several at once, while the
//! operator's checkout stays as it was; its claims are graded against its own work.

use gitmoot_test_support::daemon as daemon_support;
use gitmoot_test_support::write::WriteHome;

/// What `git status --porcelain` and `HEAD` of the operator's checkout say.
fn checkout_state(w: &WriteHome) -> (String, String) {
    (
        w.git(&["status", "--porcelain"]),
        w.git(&["rev-parse", "HEAD"]),
    )
}

#[test]
fn three_implement_jobs_run_at_once_each_on_its_own_branch_leaving_the_checkout_untouched() {
    let w = WriteHome::new("");
    std::fs::write(w.repo.join("README"), "operator's own edit\n").unwrap();
    let before = checkout_state(&w);
    let base = before.1.trim().to_string();
    let work = "S=$(date +%s%N); echo \"$GITMOOT_JOB_ID\" > mine.txt; git add mine.txt; \
                git commit -qm mine; sleep 0.8; echo more >> lib.txt; E=$(date +%s%N)";
    let jobs: Vec<String> = (0..3).map(|_| w.implement(work, &[])).collect();
    w.h.daemon_until_idle(3);
    let home = w.h.path().display().to_string();
    let mut spans = Vec::new();
    let mut dirs = Vec::new();
    for job in &jobs {
        let shown = w.json(&["job", "show", job, "--json"]);
        assert_eq!(shown["state"], "succeeded", "{shown}");
        let (pwd, branch, s, e) = w.summary(job);
        assert_eq!(branch, format!("gitmoot/{job}/work"));
        assert!(!pwd.contains(&home), "a worktree names the home: {pwd}");
        assert!(
            pwd.starts_with(&w.h.worktrees_dir().display().to_string()),
            "{pwd}"
        );
        // The agent committed on its branch, from the recorded base, and left an edit.
        let log = w.git(&["log", "--format=%s", &format!("{base}..{branch}")]);
        assert_eq!(log.trim(), "mine", "{branch}");
        let wt = std::path::Path::new(&pwd);
        assert_eq!(
            std::fs::read_to_string(wt.join("lib.txt")).unwrap(),
            "one\ntwo\nthree\nmore\n"
        );
        let events = w.json(&["job", "events", job, "--json"]);
        let opened = events
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["kind"] == "worktree_opened")
            .unwrap_or_else(|| panic!("no worktree_opened event: {events}"));
        assert_eq!(opened["data"]["base_commit"], base.as_str());
        assert_eq!(opened["data"]["base"], "main");
        spans.push((s, e));
        dirs.push(pwd);
    }
    dirs.sort();
    dirs.dedup();
    assert_eq!(dirs.len(), 3, "each job has its own worktree");
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            assert!(a.0 < b.1 && b.0 < a.1, "the three ran at once: {spans:?}");
        }
    }
    assert_eq!(checkout_state(&w), before, "the operator's checkout moved");
    // The worktrees outlive their jobs: they are the work.
    assert!(dirs.iter().all(|d| std::path::Path::new(d).exists()));
}

#[test]
fn a_base_names_where_the_branch_starts_and_a_bad_one_changes_nothing() {
    let w = WriteHome::new("");
    w.git(&["checkout", "-qb", "dev"]);
    std::fs::write(w.repo.join("dev.txt"), "dev\n").unwrap();
    w.git(&["add", "dev.txt"]);
    w.git(&["commit", "-qm", "dev"]);
    let dev = w.git(&["rev-parse", "dev"]).trim().to_string();
    w.git(&["checkout", "-q", "main"]);
    for (extra, why) in [
        (
            vec!["--base", "no-such-ref", "--action", "implement"],
            "names no commit",
        ),
        (vec!["--base", "dev", "--action", "ask"], "implement"),
    ] {
        let mut args = vec!["job", "run", "--agent", "coder", "--repo", "acme/app"];
        args.extend(extra);
        args.push("true");
        let out = w.run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error:") && err.contains(why), "{err}");
    }
    assert_eq!(gitmoot_test_support::jobs(&w.h.path()).len(), 0);
    let job = w.implement("CLAIM=dev.txt", &["--base", "dev"]);
    w.h.daemon_until_idle(1);
    let (pwd, branch, _, _) = w.summary(&job);
    assert_eq!(branch, format!("gitmoot/{job}/work"));
    assert!(std::path::Path::new(&pwd).join("dev.txt").exists());
    assert_eq!(
        w.git(&["merge-base", "dev", &branch]).trim(),
        dev,
        "the branch starts at dev"
    );
}

#[test]
fn an_implement_jobs_claims_are_graded_against_its_own_work_committed_or_not() {
    let w = WriteHome::new("");
    // The operator's uncommitted edit is not the job's.
    std::fs::write(w.repo.join("README"), "operator's own edit\n").unwrap();
    let job = w.implement(
        "echo n > new.txt; git add new.txt; git commit -qm n; echo y >> lib.txt; \
         echo u > untracked.txt; CLAIM=untracked.txt",
        &[],
    );
    w.h.daemon_until_idle(1);
    let v = w.json(&["job", "show", &job, "--json"]);
    let o = &v["result_observation"];
    assert_eq!(o["source"], "worktree", "{v}");
    assert_eq!(
        o["touched_files"],
        serde_json::json!(["lib.txt", "new.txt", "untracked.txt"]),
        "{v}"
    );
    assert_eq!(o["claims"][0]["grade"], "observed", "{v}");
}

#[test]
fn a_daemon_killed_mid_job_leaves_the_partial_work_listed_and_landable() {
    let w = WriteHome::new("");
    let job = w.implement(
        "echo partial > p.txt; git add p.txt; git commit -qm partial; echo more > q.txt; sleep 60",
        &[],
    );
    let mut daemon =
        w.h.cmd(&["daemon", "run"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    let path = || -> Option<std::path::PathBuf> {
        let list = w.json(&["worktree", "list", "--json"]);
        list[0]["path"].as_str().map(std::path::PathBuf::from)
    };
    gitmoot_test_support::wait_until(
        "the agent's partial work",
        std::time::Duration::from_secs(30),
        || path().is_some_and(|p| p.join("q.txt").exists()),
    );
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    // A new daemon recovers the lost job (failed on a restart of this home's daemon); its
    // work is kept.
    w.h.daemon_until_idle(1);
    assert_eq!(gitmoot_test_support::job_state(&w.h.path(), &job), "failed");
    let list = w.json(&["worktree", "list", "--json"]);
    assert_eq!(list[0]["state"], "ready", "{list}");
    assert_eq!(list[0]["job_state"], "failed", "{list}");
    assert_eq!(list[0]["files"], 2, "{list}");
    let text = w.h.ok(&["worktree", "list"]);
    assert!(text.contains("partial work"), "{text}");
    w.h.ok(&["job", "land", &job]);
    assert!(w.repo.join("p.txt").exists() && w.repo.join("q.txt").exists());
    assert!(path().is_some_and(|p| !p.exists()));
}

#[test]
fn chat_task_takes_a_base_too_a_bad_one_posts_nothing_and_the_land_is_posted_back() {
    let w = WriteHome::new("");
    w.git(&["branch", "dev"]);
    w.h.ok(&["chat", "create", "work", "--repo", "acme/app"]);
    let task = |base: &str| {
        w.run(&[
            "chat",
            "task",
            "work",
            "echo hi > hi.txt # @coder",
            "--action",
            "implement",
            "--base",
            base,
            "--json",
        ])
    };
    let bad = task("no-such-ref");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error:") && err.contains("no-such-ref"),
        "{err}"
    );
    let shown = w.json(&["chat", "show", "work", "--json"]);
    assert_eq!(shown["messages"], serde_json::json!([]), "{shown}");
    let ok = task("dev");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let job = serde_json::from_slice::<serde_json::Value>(&ok.stdout).unwrap()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    w.h.daemon_until_idle(1);
    let events = w.json(&["job", "events", &job, "--json"]);
    let opened = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "worktree_opened")
        .unwrap_or_else(|| panic!("{events}"))
        .clone();
    assert_eq!(opened["data"]["base"], "dev");
    // A review round's result is posted to the thread too.
    w.h.ok(&["job", "review", &job, "DO: echo more > more.txt"]);
    w.h.daemon_until_idle(1);
    let shown = w.json(&["chat", "show", "work", "--json"]);
    let results = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "job_result")
        .count();
    assert_eq!(results, 2, "{shown}");
    // dev is not checked out: the land moves the branch without touching the checkout.
    w.h.ok(&["job", "land", &job]);
    assert_eq!(w.git(&["show", "dev:hi.txt"]), "hi\n");
    assert_eq!(w.git(&["show", "dev:more.txt"]), "more\n");
    assert!(!w.repo.join("hi.txt").exists());
    let shown = w.json(&["chat", "show", "work", "--json"]);
    let posted = shown["messages"].as_array().unwrap().iter().any(|m| {
        m["kind"] == "system" && m["body"].as_str().unwrap().contains("was landed on dev")
    });
    assert!(posted, "{shown}");
}

#[test]
fn each_ended_jobs_branch_goes_to_the_repos_push_remote_and_a_failed_push_is_said_in_gits_words() {
    let w = WriteHome::new("push = \"origin\"\n");
    let remote = w.h.file("remote.git");
    daemon_support::git(
        w.h.path().as_path(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    w.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    let job = w.implement("echo n > new.txt; git add new.txt; git commit -qm n", &[]);
    w.h.daemon_until_idle(1);
    let branch = format!("gitmoot/{job}/work");
    assert_eq!(
        daemon_support::git(&remote, &["rev-parse", &branch]),
        w.git(&["rev-parse", &branch]),
        "the remote has the job's commit"
    );
    assert!(w.event_kinds(&job).contains(&"branch_pushed".to_string()));
    // A remote that is not there: the job still ends as it did, and git's reason is kept.
    w.git(&["remote", "set-url", "origin", "/nonexistent/remote.git"]);
    let other = w.implement("echo m > m.txt; git add m.txt; git commit -qm m", &[]);
    w.h.daemon_until_idle(1);
    assert_eq!(w.h.job(&other).state, gitmoot::domain::JobState::Succeeded);
    let evs = gitmoot::store::events::for_job(w.h.store().conn(), &other).unwrap();
    let failed = evs
        .iter()
        .find(|e| e.kind == "branch_push_failed")
        .expect("the failed push is said");
    assert!(
        failed.message.contains("/nonexistent/remote.git"),
        "{:?}",
        failed.message
    );
}
