//! `job diff`, `job land` and `job discard` through the real binary on real git
//! repositories: git's own numbers, each strategy, refusals that change nothing and name the
//! files, and nothing an agent wrote lost without a consequence-stating step.

use std::path::Path;

use gitmoot_test_support::daemon::git;
use gitmoot_test_support::write::WriteHome;

/// Everything that must not move when a land is refused: the checkout's HEAD, status and
/// README, the job's branch tip, and its worktree's status.
fn snapshot(w: &WriteHome, job: &str) -> Vec<String> {
    let wt = w.worktree(job);
    vec![
        w.git(&["rev-parse", "HEAD"]),
        w.git(&["status", "--porcelain"]),
        std::fs::read_to_string(w.repo.join("README")).unwrap(),
        w.git(&["rev-parse", &format!("gitmoot/{job}/work")]),
        git(&wt, &["status", "--porcelain"]),
        std::fs::read_to_string(wt.join("lib.txt")).unwrap(),
    ]
}

#[test]
fn job_diff_matches_gits_numbers_for_every_kind_of_change() {
    let w = WriteHome::new("");
    let long: String = (0..20).map(|i| format!("line {i}\n")).collect();
    std::fs::write(w.repo.join("old.txt"), &long).unwrap();
    w.git(&["add", "old.txt"]);
    w.git(&["commit", "-qm", "old"]);
    let job = w.implement(
        "printf 'one\\n2\\nthree\\nfour\\n' > lib.txt; git mv old.txt new.txt; \
         git commit -qam work; rm README; printf '\\000\\001\\002' > bin.dat; \
         echo hi > added.txt",
        &[],
    );
    w.h.daemon_until_idle(1);
    let d = w.json(&["job", "diff", &job, "--json"]);
    let wt = w.worktree(&job);
    // Git's own view of the same work: everything staged in the (finished) worktree.
    git(&wt, &["add", "-A"]);
    let base = w.git(&["rev-parse", "main"]).trim().to_string();
    assert_eq!(d["base_commit"], base.as_str());
    let numstat = git(&wt, &["diff", "--cached", "-M", "--numstat", &base]);
    let files = d["files"].as_array().unwrap();
    assert_eq!(files.len(), numstat.lines().count(), "{d}");
    for line in numstat.lines() {
        let p: Vec<&str> = line.split('\t').collect();
        let path = p[2].rsplit(" => ").next().unwrap().trim_end_matches('}');
        let path = if p[2].contains("=>") { "new.txt" } else { path };
        let f = files
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} missing from {d}"));
        if p[0] == "-" {
            assert_eq!(f["binary"], true, "{f}");
        } else {
            assert_eq!(f["added"].as_u64().unwrap().to_string(), p[0], "{f}");
            assert_eq!(f["removed"].as_u64().unwrap().to_string(), p[1], "{f}");
        }
    }
    let status = |p: &str| files.iter().find(|f| f["path"] == p).unwrap()["status"].clone();
    assert_eq!(status("lib.txt"), "modified");
    assert_eq!(status("README"), "deleted");
    assert_eq!(status("new.txt"), "renamed");
    assert_eq!(status("added.txt"), "added");
    assert_eq!(status("bin.dat"), "added");
    let lib = files.iter().find(|f| f["path"] == "lib.txt").unwrap();
    let lines = lib["hunks"][0]["lines"].as_array().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l["op"] == "remove" && l["text"] == "two" && l["old"] == 2)
    );
    assert!(
        lines
            .iter()
            .any(|l| l["op"] == "add" && l["text"] == "2" && l["new"] == 2)
    );
    let stat = w.h.ok(&["job", "diff", &job, "--stat"]);
    assert!(
        stat.contains("lib.txt") && stat.contains("files changed"),
        "{stat}"
    );
    let patch = w.h.ok(&["job", "diff", &job]);
    assert!(patch.contains("diff --git a/lib.txt b/lib.txt"), "{patch}");
    // Bad input: one line, exit 2.
    w.fails(&["job", "diff", "job-nosuchjob"], 2);
}

#[test]
fn land_by_fast_forward_squash_and_merge() {
    let w = WriteHome::new("");
    let a = w.implement("echo a > a.txt; git add a.txt; git commit -qm 'add a'", &[]);
    let b = w.implement("echo b > b.txt", &[]);
    let c = w.implement("echo c > c.txt; git add c.txt; git commit -qm 'add c'", &[]);
    w.h.daemon_until_idle(3);
    let base = w.git(&["rev-parse", "main"]).trim().to_string();

    let shown = w.h.ok(&["job", "show", &a]);
    assert!(
        shown.contains(&format!("worktree: branch gitmoot/{a}/work from main")),
        "{shown}"
    );
    let out = w.h.ok(&["job", "land", &a]);
    assert!(out.contains("fast-forward"), "{out}");
    let shown = w.json(&["job", "show", &a, "--json"]);
    let landed = format!(
        "⇡ landed on main as {}",
        &w.git(&["rev-parse", "main"])[..12]
    );
    assert!(
        shown["marks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == landed.as_str()),
        "{shown}"
    );
    let tip_a = w.git(&["rev-parse", "main"]).trim().to_string();
    assert_eq!(w.git(&["rev-parse", "main^"]).trim(), base);
    assert_eq!(
        std::fs::read_to_string(w.repo.join("a.txt")).unwrap(),
        "a\n"
    );
    assert!(
        !w.worktree(&a).exists(),
        "a landed job's worktree is removed"
    );
    assert!(
        w.git(&["branch", "--list", &format!("gitmoot/{a}/work")])
            .is_empty()
    );
    assert!(w.event_kinds(&a).contains(&"landed".to_string()));

    // b left its work uncommitted; the base moved since it started.
    let l = w.json(&["job", "land", &b, "--squash", "--json"]);
    assert_eq!(l["how"], "squash");
    assert_eq!(w.git(&["rev-parse", "main^"]).trim(), tip_a);
    assert_eq!(w.git(&["rev-list", "--count", "main"]).trim(), "3");
    assert!(
        w.git(&["log", "-1", "--format=%B", "main"])
            .contains("echo b > b.txt")
    );
    assert_eq!(
        std::fs::read_to_string(w.repo.join("b.txt")).unwrap(),
        "b\n"
    );

    let l = w.json(&[
        "job",
        "land",
        &c,
        "--merge",
        "--message",
        "merge c",
        "--json",
    ]);
    assert_eq!(l["how"], "merge");
    let parents = w.git(&["log", "-1", "--format=%P", "main"]);
    assert_eq!(parents.split_whitespace().count(), 2);
    assert_eq!(
        w.git(&["log", "-1", "--format=%s", "main"]).trim(),
        "merge c"
    );
    assert!(w.repo.join("c.txt").exists());
    assert_eq!(w.git(&["status", "--porcelain"]), "");
    // Landed work is not landed again.
    let err = w.fails(&["job", "land", &c], 2);
    assert!(err.contains("was landed"), "{err}");
}

#[test]
fn a_conflicting_land_and_a_land_over_a_dirty_checkout_change_nothing_and_name_the_files() {
    let w = WriteHome::new("");
    let a = w.implement("echo A > lib.txt; git commit -qam a", &[]);
    let b = w.implement("echo B > lib.txt; git commit -qam b", &[]);
    let c = w.implement("echo C >> README", &[]);
    w.h.daemon_until_idle(3);
    w.h.ok(&["job", "land", &a]);

    let before = snapshot(&w, &b);
    let err = w.fails(&["job", "land", &b], 1);
    assert!(err.contains("conflict") && err.contains("lib.txt"), "{err}");
    assert!(
        err.contains(&format!("gitmoot job rebase {b}")),
        "the refusal names the verb that brings the job up to date: {err}"
    );
    assert_eq!(snapshot(&w, &b), before, "a refused land changed something");

    std::fs::write(w.repo.join("README"), "operator's edit\n").unwrap();
    let before = snapshot(&w, &c);
    let err = w.fails(&["job", "land", &c], 1);
    assert!(
        err.contains("uncommitted") && err.contains("README"),
        "{err}"
    );
    assert_eq!(snapshot(&w, &c), before, "a refused land changed something");
    assert!(!w.event_kinds(&c).contains(&"landed".to_string()));
}

#[test]
fn discard_says_what_is_lost_and_removes_worktree_and_branch() {
    let w = WriteHome::new("");
    let job = w.implement(
        "echo x > x.txt; git add x.txt; git commit -qm x; echo y >> lib.txt",
        &[],
    );
    w.h.daemon_until_idle(1);
    let wt = w.worktree(&job);
    let err = w.fails(&["job", "discard", &job], 2);
    assert!(
        err.contains("2 file(s)") && err.contains("1 commit(s)") && err.contains("--force"),
        "{err}"
    );
    assert!(wt.exists(), "nothing is discarded without --force");
    let out = w.h.ok(&["job", "discard", &job, "--force"]);
    assert!(out.contains("x.txt") && out.contains("lib.txt"), "{out}");
    assert!(!Path::new(&wt).exists());
    assert!(
        w.git(&["branch", "--list", &format!("gitmoot/{job}/work")])
            .is_empty()
    );
    assert!(w.event_kinds(&job).contains(&"discarded".to_string()));
    let err = w.fails(&["job", "discard", &job, "--force"], 2);
    assert!(err.contains("discarded"), "{err}");
    assert_eq!(w.git(&["worktree", "list"]).lines().count(), 1);
}

#[test]
fn worktree_list_shows_where_each_write_job_stands_and_prune_never_touches_unlanded_work() {
    let w = WriteHome::new("");
    let a = w.implement("echo a > a.txt; git add a.txt; git commit -qm a", &[]);
    let b = w.implement(
        "printf 'B\\ntwo\\nthree\\n' > lib.txt; git commit -qam b",
        &[],
    );
    let c = w.implement("echo c > c.txt", &[]);
    let d = w.implement("echo d > d.txt", &[]);
    w.h.daemon_until_idle(3);
    let a_path = w.worktree(&a);
    let (b_path, c_path) = (w.worktree(&b), w.worktree(&c));
    let ready = w.json(&["worktree", "list", "--json"]);
    assert!(
        ready
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["state"] == "ready"),
        "{ready}"
    );
    w.h.ok(&["job", "land", &a]);
    w.h.ok(&["job", "discard", &d, "--force"]);
    // The operator changes the line b changed: b would now conflict.
    std::fs::write(w.repo.join("lib.txt"), "X\ntwo\nthree\n").unwrap();
    w.git(&["commit", "-qam", "operator"]);
    let list = w.json(&["worktree", "list", "--json"]);
    let row = |job: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["job"] == job)
            .unwrap_or_else(|| panic!("{job} missing: {list}"))
            .clone()
    };
    assert_eq!(row(&a)["state"], "landed");
    assert_eq!(row(&b)["state"], "conflicts");
    assert_eq!(row(&c)["state"], "base moved");
    assert_eq!(row(&d)["state"], "discarded");
    assert_eq!(row(&c)["files"], 1);
    assert_eq!(row(&c)["branch"], format!("gitmoot/{c}/work"));
    assert_eq!(row(&c)["base"], "main");
    assert!(row(&b)["disk_bytes"].as_u64().unwrap() > 0);
    let text = w.h.ok(&["worktree", "list"]);
    assert!(text.contains(&format!("{c}  base moved")), "{text}");

    // What a landed job left behind (its folder and branch back on disk) is pruned; the
    // open jobs' worktrees and branches are not.
    w.git(&["branch", &format!("gitmoot/{a}/work"), "main"]);
    w.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        &a_path.display().to_string(),
    ]);
    let p = w.json(&["worktree", "prune", "--json"]);
    assert_eq!(
        p["worktrees"],
        serde_json::json!([a_path.display().to_string()]),
        "{p}"
    );
    assert_eq!(
        p["branches"],
        serde_json::json!([format!("gitmoot/{a}/work")]),
        "{p}"
    );
    assert!(!a_path.exists());
    for (job, path) in [(&b, &b_path), (&c, &c_path)] {
        assert!(path.exists(), "prune removed {job}'s open work");
        assert!(
            !w.git(&["branch", "--list", &format!("gitmoot/{job}/work")])
                .is_empty()
        );
    }
    assert_eq!(
        std::fs::read_to_string(c_path.join("c.txt")).unwrap(),
        "c\n"
    );
}

#[test]
fn a_review_round_reaches_the_same_agent_in_the_same_worktree_and_since_review_shows_only_it() {
    let w = WriteHome::new("");
    let job = w.implement(
        "echo first > r.txt; git add r.txt; git commit -qm first",
        &[],
    );
    w.h.daemon_until_idle(1);
    let (pwd, branch, _, _) = w.summary(&job);
    let err = w.fails(&["job", "diff", &job, "--since-review"], 2);
    assert!(err.contains("no review round"), "{err}");
    w.fails(&["job", "review", &job, "  "], 2);
    let r = w.json(&[
        "job",
        "review",
        &job,
        "r.txt:1: also add a second file\nDO: echo second > s.txt",
        "--json",
    ]);
    assert_eq!(
        (r["round"].as_i64(), r["attempt"].as_i64()),
        (Some(1), Some(2))
    );
    w.h.daemon_until_idle(1);
    let shown = w.json(&["job", "show", &job, "--json"]);
    assert_eq!(shown["state"], "succeeded", "{shown}");
    assert_eq!(shown["attempt"], 2);
    let prompt = shown["prompt"].as_str().unwrap();
    assert!(prompt.starts_with("Review comments (round 1)"), "{prompt}");
    assert!(
        prompt.contains("r.txt:1: also add a second file"),
        "{prompt}"
    );
    assert!(
        prompt.contains("The original task:\necho first"),
        "{prompt}"
    );
    assert_eq!(w.summary(&job).0, pwd, "the round ran in the same worktree");
    assert_eq!(w.summary(&job).1, branch);
    let paths = |v: &serde_json::Value| -> Vec<String> {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect()
    };
    let since = w.json(&["job", "diff", &job, "--json", "--since-review"]);
    assert_eq!(paths(&since), ["s.txt"], "{since}");
    let whole = w.json(&["job", "diff", &job, "--json"]);
    assert_eq!(paths(&whole), ["r.txt", "s.txt"], "{whole}");
    let list = w.json(&["worktree", "list", "--json"]);
    assert_eq!(list[0]["review_rounds"], 1, "{list}");
    assert!(w.event_kinds(&job).contains(&"review_round".to_string()));
}

#[test]
fn two_open_jobs_changing_one_file_show_the_overlap_and_the_second_land_names_it() {
    let (w, a, b, c) = WriteHome::overlapping();
    let list = w.json(&["worktree", "list", "--json"]);
    let overlaps = |job: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["job"] == job)
            .unwrap()["overlaps"]
            .clone()
    };
    assert_eq!(
        overlaps(&a),
        serde_json::json!([{"job": b, "kind": "overlaps", "files": ["lib.txt"], "hunks": []}])
    );
    assert_eq!(
        overlaps(&b),
        serde_json::json!([{"job": a, "kind": "overlaps", "files": ["lib.txt"], "hunks": []}])
    );
    assert_eq!(overlaps(&c), serde_json::json!([]));
    let pending = w.json(&["job", "pending", "--json"]);
    let items: Vec<&serde_json::Value> = pending
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "overlap")
        .collect();
    assert_eq!(items.len(), 1, "{pending}");
    let said = items[0]["reason"].as_str().unwrap().to_string();
    assert!(
        said == format!("job {a} and job {b} both change lib.txt")
            || said == format!("job {b} and job {a} both change lib.txt"),
        "{said}"
    );
    let text = w.h.ok(&["job", "pending"]);
    assert!(text.contains(&said), "{text}");

    w.h.ok(&["job", "land", &a]);
    let out = w.h.ok(&["job", "land", &b]);
    assert!(
        out.contains(&format!("note: {a} landed first and also changed lib.txt")),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(w.repo.join("lib.txt")).unwrap(),
        "ONE\ntwo\nTHREE\n"
    );
    let pending = w.json(&["job", "pending", "--json"]);
    assert!(
        pending
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["kind"] != "overlap"),
        "{pending}"
    );
}

#[test]
fn a_worktree_deleted_by_hand_is_listed_missing_and_discard_still_says_what_its_branch_holds() {
    let w = WriteHome::new("");
    let job = w.implement("echo k > k.txt; git add k.txt; git commit -qm k", &[]);
    w.h.daemon_until_idle(1);
    let wt = w.worktree(&job);
    std::fs::remove_dir_all(&wt).unwrap();
    let list = w.json(&["worktree", "list", "--json"]);
    assert_eq!(list[0]["state"], "missing", "{list}");
    let err = w.fails(&["job", "diff", &job], 1);
    assert!(err.contains("missing from disk"), "{err}");
    let err = w.fails(&["job", "discard", &job], 2);
    assert!(
        err.contains("1 file(s)") && err.contains("1 commit(s)") && err.contains("k.txt"),
        "{err}"
    );
    assert!(
        !w.git(&["branch", "--list", &format!("gitmoot/{job}/work")])
            .is_empty()
    );
    w.h.ok(&["job", "discard", &job, "--force"]);
    assert!(
        w.git(&["branch", "--list", &format!("gitmoot/{job}/work")])
            .is_empty()
    );
    assert_eq!(w.git(&["worktree", "list"]).lines().count(), 1);
}

#[test]
fn land_by_rebase_replays_the_jobs_commits_on_the_moved_base_keeping_their_authors() {
    let w = WriteHome::new("");
    let a = w.implement("echo a > a.txt; git add a.txt; git commit -qm a", &[]);
    let b = w.implement(
        "echo b1 > b1.txt; git add b1.txt; git -c user.name=Agent -c user.email=agent@x commit -qm b1; \
         echo b2 > b2.txt; git add b2.txt; git -c user.name=Agent -c user.email=agent@x commit -qm b2",
        &[],
    );
    w.h.daemon_until_idle(2);
    w.h.ok(&["job", "land", &a]);
    let tip_a = w.git(&["rev-parse", "main"]).trim().to_string();
    let l = w.json(&["job", "land", &b, "--rebase", "--json"]);
    assert_eq!(l["how"], "rebase");
    assert_eq!(w.git(&["log", "--format=%s", "-3", "main"]), "b2\nb1\na\n");
    assert_eq!(w.git(&["rev-parse", "main~2"]).trim(), tip_a);
    assert_eq!(
        w.git(&["log", "-1", "--format=%an", "main"]).trim(),
        "Agent"
    );
    assert_eq!(w.git(&["log", "--merges", "--format=%H", "main"]), "");
    assert!(w.repo.join("b1.txt").exists() && w.repo.join("b2.txt").exists());
}

/// Stdout and exit code of `args`.
fn run_out(w: &WriteHome, args: &[&str]) -> (String, Option<i32>) {
    let out = w.run(args);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

#[test]
fn bulk_land_and_discard_by_query_preview_with_dry_run_then_act_and_name_the_refused() {
    let w = WriteHome::new("");
    let a = w.implement("echo a > a.txt; git add a.txt; git commit -qm a", &[]);
    let b = w.implement("echo b > b.txt", &[]);
    let idle = w.implement("true", &[]);
    w.h.daemon_until_idle(3);
    let main = w.git(&["rev-parse", "main"]);
    let query = "action=implement";

    let (dry, code) = run_out(&w, &["job", "land", "--where", query, "--dry-run"]);
    assert_eq!(code, Some(0), "{dry}");
    for job in [&a, &b] {
        assert!(
            dry.contains(&format!(
                "would land {job}: merges branch gitmoot/{job}/work into main of repo acme/app"
            )),
            "{dry}"
        );
    }
    assert!(
        dry.contains(&format!("refused {idle}:")) && dry.contains("changed nothing"),
        "{dry}"
    );
    assert!(dry.contains("dry run: nothing changed"), "{dry}");
    assert_eq!(w.git(&["rev-parse", "main"]), main, "a dry run moved main");
    assert!(w.worktree(&a).exists() && w.worktree(&b).exists());

    // One refused, the rest landed: exit 1, as the bulk cancel does.
    let (out, code) = run_out(&w, &["job", "land", "--where", query]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("landed {a} on main")), "{out}");
    assert!(out.contains(&format!("landed {b} on main")), "{out}");
    assert!(out.contains(&format!("refused {idle}:")), "{out}");
    assert!(w.repo.join("a.txt").exists() && w.repo.join("b.txt").exists());
    assert!(w.event_kinds(&a).contains(&"landed".to_string()));

    // Discarding many needs the single form's --force; without it nothing changes.
    let err = w.fails(&["job", "discard", "--where", query], 2);
    assert!(
        err.contains("--force") && err.contains("--dry-run"),
        "{err}"
    );
    assert!(w.worktree(&idle).exists());

    let (dry, code) = run_out(&w, &["job", "discard", "--where", query, "--dry-run"]);
    assert_eq!(code, Some(0), "{dry}");
    assert!(
        dry.contains(&format!(
            "would discard {idle}: deletes its worktree and branch gitmoot/{idle}/work; loses 0 file(s) changed"
        )),
        "{dry}"
    );
    assert!(
        dry.contains(&format!("refused {a}: {a}'s work was already landed")),
        "{dry}"
    );
    assert!(w.worktree(&idle).exists(), "a dry run discarded");

    let (out, code) = run_out(&w, &["job", "discard", "--where", query, "--force"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("discarded {idle}:")), "{out}");
    assert!(!w.worktree(&idle).exists());
    assert!(w.event_kinds(&idle).contains(&"discarded".to_string()));
    assert!(!w.event_kinds(&a).contains(&"discarded".to_string()));
}
