//! The write loop's small edges through the real binary: a job on a folder that is not a
//! git checkout says it edits that folder in place, a `--base` that is not a branch is
//! refused at submission, the commit a fast-forward land makes of uncommitted work carries
//! the job's title and summary, and `worktree list` counts a worktree's disk as `du -s`
//! does.

use gitmoot_test_support::write::WriteHome;

#[test]
fn an_implement_job_on_a_folder_that_is_not_a_git_checkout_says_it_edits_it_in_place() {
    let w = WriteHome::new("");
    let plain = w.h.file("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let config = std::fs::read_to_string(w.h.path().join("config.toml")).unwrap();
    w.h.config(&format!(
        "{config}\n[repos.\"acme/plain\"]\npath = \"{}\"\n",
        plain.display()
    ));
    let says = format!(
        "{} is not a git checkout, so the job edits it in place",
        plain.display()
    );
    let out = w.run(&[
        "job",
        "run",
        "--agent",
        "coder",
        "--action",
        "implement",
        "--repo",
        "acme/plain",
        "echo hi > x",
    ]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("note: {says}")), "{err}");
    let job = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let shown = w.h.ok(&["job", "show", &job]);
    assert!(shown.contains(&format!("in place:  {says}")), "{shown}");
    let v = w.json(&["job", "show", &job, "--json"]);
    assert_eq!(v["edits_in_place"], plain.display().to_string(), "{v}");

    // A job with a worktree of its own says nothing of the kind.
    let out = w.run(&[
        "job",
        "run",
        "--agent",
        "coder",
        "--action",
        "implement",
        "--repo",
        "acme/app",
        "true",
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("in place"));
    let other = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let v = w.json(&["job", "show", &other, "--json"]);
    assert!(v["edits_in_place"].is_null(), "{v}");
}

#[test]
fn a_base_that_is_not_a_branch_is_refused_at_submission() {
    let w = WriteHome::new("");
    w.git(&["tag", "v1"]);
    w.git(&["branch", "dev"]);
    let sha = w.git(&["rev-parse", "main"]).trim().to_string();
    for base in ["v1", sha.as_str()] {
        let args = [
            "job",
            "run",
            "--agent",
            "coder",
            "--action",
            "implement",
            "--repo",
            "acme/app",
            "--base",
            base,
            "true",
        ];
        let err = w.fails(&args, 2);
        assert!(
            err.contains(&format!("--base {base:?} is not a branch of")),
            "{err}"
        );
    }
    assert_eq!(w.json(&["job", "list", "--json"]), serde_json::json!([]));
    w.implement("true", &["--base", "dev"]);
}

#[test]
fn a_fast_forward_land_of_uncommitted_work_carries_the_jobs_title_and_summary() {
    let w = WriteHome::new("");
    let b = w.implement("echo b > b.txt", &[]);
    w.h.daemon_until_idle(1);
    let l = w.json(&["job", "land", &b, "--json"]);
    assert_eq!(l["how"], "fast_forward", "{l}");
    let message = w.git(&["log", "-1", "--format=%B", "main"]);
    let summary = w.json(&["job", "show", &b, "--json"])["result"]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.starts_with("echo b > b.txt\n\n"), "{message}");
    assert!(
        message.contains(&summary) && message.contains(&format!("gitmoot job: {b}")),
        "{message}"
    );
}

#[test]
fn worktree_list_counts_a_worktrees_disk_as_du_does() {
    let w = WriteHome::new("");
    let job = w.implement(
        "for i in $(seq 1 40); do echo $i > f$i.txt; done; mkdir d; echo x > d/y; ln f1.txt hard.txt",
        &[],
    );
    w.h.daemon_until_idle(1);
    let wt = w.worktree(&job);
    let list = w.json(&["worktree", "list", "--json"]);
    let bytes = list[0]["disk_bytes"].as_u64().unwrap();
    let du = std::process::Command::new("du")
        .args(["-s", "-B1"])
        .arg(&wt)
        .output()
        .unwrap();
    let du: u64 = String::from_utf8_lossy(&du.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(bytes, du, "{list}");
}
