//! Write jobs in the control room, end to end: the real binary in tmux on a real git
//! repository. The operator opens the Diff tab of a finished implement job, moves between
//! its files, attaches a review comment to a line and sends it back, then lands another
//! job from the keyboard; the repository and the jobs are checked afterwards.

use std::time::Duration;

use gitmoot_test_support::daemon::wait_until;
use gitmoot_test_support::tmux::Tmux;
use gitmoot_test_support::write::WriteHome;

const WAIT: Duration = Duration::from_secs(60);

/// Opens the drawer of `job` from the tree through the `/` filter.
fn open_job(t: &Tmux, job: &str) {
    t.keys(&["2"]);
    t.keys(&["/"]);
    t.wait_for("Esc clear", WAIT);
    t.keys(&["-l", job]);
    t.keys(&["Enter"]);
    t.wait_gone("Esc clear", WAIT);
    t.keys(&["Enter"]);
}

/// Clears the tree's filter (Escape while typing it), waiting until it is gone.
fn clear_filter(t: &Tmux) {
    t.keys(&["2"]);
    t.keys(&["/"]);
    t.wait_for("Esc clear", WAIT);
    t.keys(&["Escape"]);
    t.wait_gone("Esc clear", WAIT);
}

#[test]
fn an_operator_reads_a_diff_comments_on_a_line_and_lands_another_job_from_the_keyboard() {
    let w = WriteHome::new("");
    let a = w.implement(
        "printf 'one\\nTWO\\nthree\\n' > lib.txt; echo note > notes.txt",
        &[],
    );
    let b = w.implement(
        "echo feature > feature.txt; git add feature.txt; git commit -qm feature",
        &[],
    );
    w.h.daemon_until_idle(2);
    for job in [&a, &b] {
        assert_eq!(
            w.json(&["job", "show", job, "--json"])["state"],
            "succeeded"
        );
    }
    let main_before = w.git(&["rev-parse", "main"]);

    let cmd = format!(
        "sh -c '{} --home {} tui --no-daemon; echo TUI-EXITED; sleep 30'",
        gitmoot_test_support::bin(),
        w.h.path().display()
    );
    let state = w.h.state_dir();
    let t = Tmux::start("write-room", &cmd, &[("XDG_STATE_HOME", &state)]);
    t.wait_for(&b, WAIT);

    // The Diff tab of job A: its two files with their counts.
    open_job(&t, &a);
    t.wait_for("│ diff", WAIT);
    t.keys(&["l"]);
    t.keys(&["l"]);
    let screen = t.wait_for("file 1/2", WAIT);
    assert!(
        screen.contains("lib.txt") && screen.contains("+1 −1"),
        "{screen}"
    );
    assert!(screen.contains("notes.txt"), "{screen}");
    // Between files: ] twice to the second, [ back to the first.
    t.keys(&["-l", "]"]);
    t.wait_for("── lib.txt", WAIT);
    t.keys(&["-l", "]"]);
    t.wait_for("file 2/2", WAIT);
    t.keys(&["-l", "["]);
    t.wait_for("file 1/2", WAIT);
    // To the hunk, then down to the added line `TWO` (row 8: two summary rows, a gap, the
    // file, the hunk, `one`, `-two`, `+TWO`).
    t.keys(&["-l", "}"]);
    t.keys(&["j"]);
    t.keys(&["j"]);
    t.keys(&["j"]);
    t.wait_for("row 8/", WAIT);
    t.keys(&["c"]);
    t.wait_for("Comment on lib.txt:2", WAIT);
    t.keys(&["-l", "keep two lowercase"]);
    t.keys(&["Enter"]);
    t.wait_for("✎ keep two lowercase", WAIT);
    t.keys(&["R"]);
    t.wait_for("back for review?", WAIT);
    t.keys(&["y"]);
    t.wait_for("review round 1 (attempt 2)", WAIT);
    let show = w.json(&["job", "show", &a, "--json"]);
    assert_eq!(show["attempt"], 2, "{show}");
    let prompt = show["prompt"].as_str().unwrap();
    assert!(prompt.starts_with("Review comments (round 1)"), "{prompt}");
    assert!(prompt.contains("lib.txt:2: keep two lowercase"), "{prompt}");

    // Land job B from its drawer: the question names the strategy and the base.
    clear_filter(&t);
    open_job(&t, &b);
    t.wait_for("── feature.txt", WAIT);
    t.keys(&["M"]);
    t.wait_for(&format!("Land {b} on main (auto)?"), WAIT);
    t.keys(&["y"]);
    t.wait_for(&format!("landed {b} on main"), WAIT);
    t.wait_for("⇡ landed", WAIT);

    // The repository: main moved to B's commit (a fast-forward), the checkout has its
    // file, A's work is not on main, and B's worktree and branch are gone.
    assert!(wait_until(WAIT, || w.git(&["rev-parse", "main"]) != main_before));
    assert_eq!(
        w.git(&["log", "-1", "--format=%s", "main"]).trim(),
        "feature"
    );
    assert_eq!(
        std::fs::read_to_string(w.repo.join("feature.txt")).unwrap(),
        "feature\n"
    );
    assert_eq!(w.git(&["show", "main:lib.txt"]), "one\ntwo\nthree\n");
    assert!(w.git(&["status", "--porcelain"]).trim().is_empty());
    assert!(
        w.git(&["branch", "--list", &format!("gitmoot/{b}/work")])
            .trim()
            .is_empty()
    );
    assert!(w.event_kinds(&b).iter().any(|k| k == "landed"));
    let list = w.json(&["worktree", "list", "--json"]);
    let state_of = |job: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["job"] == job)
            .map(|r| r["state"].clone())
    };
    assert_eq!(state_of(&b), Some("landed".into()), "{list}");
    assert_ne!(state_of(&a), Some("landed".into()), "{list}");
    t.keys(&["q"]);
    t.wait_for("TUI-EXITED", WAIT);
}

/// The loader on a real store and repository: its first load reads no worktree; the next
/// has the overlap `job pending` lists as one
/// Attention item naming both jobs and the file, both jobs' rows carry it, the drawer's job
/// gets its land/discard figures and, once the Diff tab asks, its diff as `job diff --json`
/// has it; after a land the row says landed and the overlap is gone.
#[test]
fn the_control_rooms_load_carries_the_overlap_job_pending_lists_and_the_drawers_work() {
    use gitmoot::tui::load::Loader;
    use gitmoot_ui::view::{AttentionKind, DaemonStatus};
    use gitmoot_ui::work::WorktreeState;

    let (w, a, b, c) = WriteHome::overlapping();
    let pending = w.json(&["job", "pending", "--json"]);
    let item = pending
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "overlap")
        .expect("job pending lists the overlap")
        .clone();

    let mut loader = Loader::new(w.h.store(), DaemonStatus::None);
    loader.detail_job = Some(b.clone());
    loader.work.diff_job = Some(b.clone());
    // The first load is the first frame's: it reads no worktree and owes the next one.
    let first = loader.load(gitmoot::clock::now_ms()).unwrap();
    assert!(first.work.overlaps.is_empty() && first.work.job.is_none());
    assert!(loader.work.owes_git());
    let snap = loader.load(gitmoot::clock::now_ms()).unwrap();
    let overlaps: Vec<_> = snap
        .attention
        .iter()
        .filter_map(|i| match &i.kind {
            AttentionKind::Overlap { jobs, files } => Some((i.job_id.clone(), jobs, files)),
            _ => None,
        })
        .collect();
    assert_eq!(overlaps.len(), 1, "{:?}", snap.attention);
    let (job_id, jobs, files) = &overlaps[0];
    assert_eq!(job_id, item["job_id"].as_str().unwrap());
    assert_eq!(serde_json::json!(jobs), item["jobs"]);
    assert_eq!(serde_json::json!(files), item["files"]);
    assert_eq!(snap.work.rows[&a].overlaps, vec![b.clone()]);
    assert_eq!(snap.work.rows[&b].overlaps, vec![a.clone()]);
    assert!(snap.work.rows[&c].overlaps.is_empty());
    let job = snap.work.job.as_ref().expect("the drawer job's work");
    assert_eq!(
        (job.job_id.as_str(), job.base.as_str()),
        (b.as_str(), "main")
    );
    assert_eq!(job.files, vec!["lib.txt".to_string()]);
    assert_eq!((job.added, job.removed, job.commits), (1, 1, 0));
    let diff = snap.work.diff.as_ref().expect("the Diff tab's diff");
    let cli = w.json(&["job", "diff", &b, "--json"]);
    assert_eq!(serde_json::json!(diff.files), cli["files"]);

    w.h.ok(&["job", "land", &a]);
    let snap = loader.load(gitmoot::clock::now_ms()).unwrap();
    assert_eq!(snap.work.rows[&a].state, Some(WorktreeState::Landed));
    assert!(
        snap.attention
            .iter()
            .all(|i| !matches!(i.kind, AttentionKind::Overlap { .. })),
        "{:?}",
        snap.attention
    );
}

/// The README's demo, walked from the keyboard: the coder's implement job is opened in its
/// Diff tab, a comment on its added line goes back to the coder as a review round, and once
/// that round ends the work is landed on the demo checkout's `main`.
#[test]
fn the_demos_coder_job_is_reviewed_and_landed_from_the_keyboard() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("demo");
    let state = dir.path().join("state");
    let cmd = format!(
        "sh -c '{} --home {} demo --speed 0; echo TUI-EXITED; sleep 30'",
        gitmoot_test_support::bin(),
        home.display()
    );
    let t = Tmux::start("demo-write", &cmd, &[("XDG_STATE_HOME", &state)]);
    let cli = |args: &[&str]| -> serde_json::Value {
        let out = std::process::Command::new(gitmoot_test_support::bin())
            .arg("--home")
            .arg(&home)
            .args(args)
            .env("XDG_STATE_HOME", &state)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_default()
    };
    let coder = || -> Option<serde_json::Value> {
        cli(&["job", "list", "--json"])
            .as_array()?
            .iter()
            .find(|j| j["agent"] == "coder")
            .cloned()
    };
    assert!(
        wait_until(WAIT, || coder().is_some_and(|j| j["state"] == "succeeded")),
        "the coder's job ends"
    );
    let job = coder().unwrap()["id"].as_str().unwrap().to_string();
    t.wait_for(&job, WAIT);

    open_job(&t, &job);
    t.wait_for("│ diff", WAIT);
    t.keys(&["l"]);
    t.keys(&["l"]);
    let screen = t.wait_for("file 1/2", WAIT);
    assert!(screen.contains("tests/refresh_logging.rs"), "{screen}");
    // The hunk of src/session.rs, then down to its added line (the hunk's fourth).
    t.keys(&["-l", "}"]);
    for _ in 0..4 {
        t.keys(&["j"]);
    }
    t.keys(&["c"]);
    t.wait_for("Comment on src/session.rs:7", WAIT);
    t.keys(&["-l", "also say which session it was"]);
    t.keys(&["Enter"]);
    t.keys(&["R"]);
    t.wait_for("back for review?", WAIT);
    t.keys(&["y"]);
    t.wait_for("review round 1 (attempt 2)", WAIT);
    assert!(
        wait_until(WAIT, || coder()
            .is_some_and(|j| j["state"] == "succeeded" && j["attempt"] == 2)),
        "the review round ends"
    );

    // The room may not have read the round's end yet ("still reading …'s work"): press
    // again, as an operator would, until the dialog asks.
    let ask = format!("Land {job} on main (auto)?");
    assert!(
        wait_until(WAIT, || {
            t.keys(&["M"]);
            wait_until(Duration::from_secs(2), || t.screen().contains(&ask))
        }),
        "the land dialog opens: {}",
        t.screen()
    );
    t.keys(&["y"]);
    t.wait_for(&format!("landed {job} on main"), WAIT);
    let session =
        std::fs::read_to_string(dir.path().join("demo-auth").join("src/session.rs")).unwrap();
    assert!(
        session.contains("session = %claims.session_id"),
        "{session}"
    );
    let shown = cli(&["job", "show", &job, "--json"]);
    let prompt = shown["prompt"].as_str().unwrap_or_default();
    assert!(
        prompt.contains("src/session.rs:7: also say which session it was"),
        "{prompt}"
    );
    t.keys(&["q"]);
    t.wait_for("TUI-EXITED", WAIT);
}

#[test]
fn marking_two_write_jobs_and_landing_them_lands_both_after_one_dialog() {
    let w = WriteHome::new("");
    let a = w.implement("echo a > a.txt; git add a.txt; git commit -qm a", &[]);
    let b = w.implement("echo b > b.txt", &[]);
    w.h.daemon_until_idle(2);
    let cmd = format!(
        "sh -c '{} --home {} tui --no-daemon; echo TUI-EXITED; sleep 30'",
        gitmoot_test_support::bin(),
        w.h.path().display()
    );
    let state = w.h.state_dir();
    let t = Tmux::start("land-many", &cmd, &[("XDG_STATE_HOME", &state)]);
    t.wait_for(&a, WAIT);
    t.keys(&["2", "g", "M"]);
    t.wait_for("2 marked", WAIT);
    t.keys(&["I"]);
    let dialog = t.wait_for("land 2 marked job(s)?", WAIT);
    for job in [&a, &b] {
        assert!(
            dialog.contains(&format!(
                "land {job}: merges branch gitmoot/{job}/work into main"
            )),
            "{dialog}"
        );
    }
    t.keys(&["y"]);
    t.wait_for("land: 2 done, 0 refused", WAIT);
    assert!(w.repo.join("a.txt").exists() && w.repo.join("b.txt").exists());
    for job in [&a, &b] {
        assert!(w.event_kinds(job).contains(&"landed".to_string()), "{job}");
    }
    t.keys(&["q"]);
    t.wait_for("TUI-EXITED", WAIT);
}
