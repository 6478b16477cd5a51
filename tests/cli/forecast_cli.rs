//! Forecasts and a job's base through the real binary on real git repositories: a clean
//! overlap told from a same-line conflict (`git merge-tree`), a conflict with landed work
//! that stays until the job is brought up to date or discarded, "landed first" naming only
//! the jobs that changed the file, a branch brought up to date by its agent measured from
//! its new base, and `job rebase`.

use serde_json::{Value, json};

use gitmoot_test_support::daemon::{git, wait_until};
use gitmoot_test_support::write::WriteHome;

/// `job pending --json`'s forecast items (pairs and base conflicts).
fn forecasts(w: &WriteHome) -> Vec<Value> {
    w.json(&["job", "pending", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "overlap" || p["kind"] == "base_conflict")
        .cloned()
        .collect()
}

/// `worktree list --json`'s row of `job`.
fn listed(w: &WriteHome, job: &str) -> Value {
    w.json(&["worktree", "list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["job"] == job)
        .cloned()
        .unwrap_or_else(|| panic!("{job} is not listed"))
}

/// Finished jobs on `lib.txt` (one, two, three): `a` changes line 1 (committed), `b` line
/// 3 (uncommitted), `c` line 1 otherwise (committed), and one more job per `extra` work;
/// (home, a, b, c, the extra jobs).
fn on_one_file(extra: &[&str]) -> (WriteHome, String, String, String, Vec<String>) {
    let w = WriteHome::new("");
    let a = w.implement(
        "printf 'ONE\\ntwo\\nthree\\n' > lib.txt; git commit -qam a",
        &[],
    );
    let b = w.implement("printf 'one\\ntwo\\nTHREE\\n' > lib.txt", &[]);
    let c = w.implement(
        "printf 'uno\\ntwo\\nthree\\n' > lib.txt; git commit -qam c",
        &[],
    );
    let more = extra.iter().map(|work| w.implement(work, &[])).collect();
    w.h.daemon_until_idle(3);
    (w, a, b, c, more)
}

#[test]
fn a_clean_overlap_and_a_same_line_conflict_are_told_apart_in_pending_and_the_list() {
    let (w, a, b, c, _) = on_one_file(&[]);
    let items = forecasts(&w);
    let pair = |x: &str, y: &str| {
        items
            .iter()
            .find(|p| p["jobs"] == json!([x, y]) || p["jobs"] == json!([y, x]))
            .unwrap_or_else(|| panic!("no forecast for {x} and {y}: {items:?}"))
            .clone()
    };
    let ab = pair(&a, &b);
    assert_eq!(ab["forecast"], "overlaps", "{ab}");
    assert_eq!(ab["files"], json!(["lib.txt"]), "{ab}");
    assert_eq!(ab["hunks"], json!([]), "{ab}");
    assert_eq!(pair(&b, &c)["forecast"], "overlaps");
    let ac = pair(&a, &c);
    assert_eq!(ac["forecast"], "conflicts", "{ac}");
    assert_eq!(ac["files"], json!(["lib.txt"]), "{ac}");
    assert_eq!(
        ac["hunks"],
        json!([{"file": "lib.txt", "start": 1, "end": 1}]),
        "{ac}"
    );
    assert_eq!(items.len(), 3, "{items:?}");

    let text = w.h.ok(&["job", "pending"]);
    assert!(text.contains(ac["reason"].as_str().unwrap()), "{text}");
    assert!(
        ac["reason"]
            .as_str()
            .unwrap()
            .ends_with("conflict in lib.txt:1"),
        "{ac}"
    );
    assert!(text.contains(ab["reason"].as_str().unwrap()), "{text}");
    assert!(
        ab["reason"]
            .as_str()
            .unwrap()
            .ends_with("both change lib.txt"),
        "{ab}"
    );

    let row = listed(&w, &a);
    let with = |job: &str| {
        row["overlaps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["job"] == job)
            .cloned()
            .unwrap()
    };
    assert_eq!(with(&b)["kind"], "overlaps", "{row}");
    assert_eq!(with(&c)["kind"], "conflicts", "{row}");
    assert_eq!(
        with(&c)["hunks"],
        json!([{"file": "lib.txt", "start": 1, "end": 1}])
    );
    assert_eq!(row["state"], "ready", "{row}");
}

#[test]
fn a_conflict_with_landed_work_stays_until_the_job_is_brought_up_to_date_or_discarded() {
    let (w, a, b, c, more) =
        on_one_file(&["printf 'eins\\ntwo\\nthree\\n' > lib.txt; git commit -qam d"]);
    let d = &more[0];
    w.h.ok(&["job", "land", &a]);
    let tip = w.git(&["rev-parse", "main"]).trim().to_string();
    // Read twice: the item is the forecast against main's tip, not a one-off.
    for _ in 0..2 {
        let items = forecasts(&w);
        let on_base: Vec<&Value> = items
            .iter()
            .filter(|p| p["kind"] == "base_conflict")
            .collect();
        assert_eq!(on_base.len(), 2, "{items:?}");
        let item = *on_base.iter().find(|p| p["job_id"] == c.as_str()).unwrap();
        assert_eq!(item["job_id"], c.as_str(), "{item}");
        assert_eq!(
            (&item["base"], &item["tip"], &item["forecast"]),
            (&json!("main"), &json!(tip), &json!("conflicts")),
            "{item}"
        );
        assert_eq!(
            item["hunks"],
            json!([{"file": "lib.txt", "start": 1, "end": 1}])
        );
    }
    let text = w.h.ok(&["job", "pending"]);
    assert!(
        text.contains(&format!(
            "job {c} would conflict in lib.txt:1 with work landed on main"
        )),
        "{text}"
    );
    let row = listed(&w, &c);
    assert_eq!(row["state"], "conflicts", "{row}");
    assert_eq!(row["against_base"]["files"], json!(["lib.txt"]), "{row}");
    // b merges cleanly onto main: no item, its state says so.
    assert_eq!(listed(&w, &b)["state"], "base moved");

    // Brought up to date by hand in its worktree (what `job rebase` cannot do here): the
    // conflict resolved, the item gone.
    let wt = w.worktree(&c);
    let merged = std::process::Command::new("git")
        .arg("-C")
        .arg(&wt)
        .args(["merge", "-q", "main"])
        .output()
        .unwrap();
    assert!(!merged.status.success(), "the merge conflicts");
    std::fs::write(wt.join("lib.txt"), "UNO\ntwo\nthree\n").unwrap();
    git(&wt, &["commit", "-qam", "resolved"]);
    let on_base = |job: &str| {
        forecasts(&w)
            .iter()
            .any(|p| p["kind"] == "base_conflict" && p["job_id"] == job)
    };
    assert!(!on_base(&c), "{:?}", forecasts(&w));
    assert_eq!(listed(&w, &c)["state"], "ready");
    assert!(w.event_kinds(&c).contains(&"base_followed".to_string()));

    // A discarded job's conflict goes with it.
    assert!(on_base(d));
    w.h.ok(&["job", "discard", d, "--force"]);
    assert!(forecasts(&w).iter().all(|p| p["kind"] != "base_conflict"));
}

#[test]
fn landed_first_names_only_the_landed_jobs_that_changed_the_file() {
    let w = WriteHome::new("");
    let x = w.implement(
        "printf 'ONE\\ntwo\\nthree\\n' > lib.txt; git commit -qam x",
        &[],
    );
    let y = w.implement("echo y > y.txt; git add y.txt; git commit -qm y", &[]);
    let z = w.implement("echo z > z.txt; git add z.txt; git commit -qm z", &[]);
    let t = w.implement(
        "printf 'one\\ntwo\\nTHREE\\n' > lib.txt; git commit -qam t",
        &[],
    );
    w.h.daemon_until_idle(3);
    w.h.ok(&["job", "land", &y]);
    w.h.ok(&["job", "land", &x]);
    w.h.ok(&["job", "land", &z, "--squash"]);
    let l = w.json(&["job", "land", &t, "--json"]);
    assert_eq!(l["landed_first"]["files"], json!(["lib.txt"]), "{l}");
    assert_eq!(l["landed_first"]["jobs"], json!([x]), "{l}");
}

#[test]
fn a_branch_its_agent_brought_up_to_date_is_measured_from_its_new_base() {
    let w = WriteHome::new("");
    let job = w.implement(
        "printf 'mine\\ntwo\\nthree\\n' > lib.txt; git commit -qam mine",
        &[],
    );
    let first = w.implement(
        "printf 'theirs\\ntwo\\nthree\\n' > lib.txt; echo f > f.txt; git add f.txt; git commit -qam first",
        &[],
    );
    let more: Vec<String> = (0..3)
        .map(|i| {
            w.implement(
                &format!("echo {i} > m{i}.txt; git add m{i}.txt; git commit -qm m{i}"),
                &[],
            )
        })
        .collect();
    w.h.daemon_until_idle(3);
    for j in std::iter::once(&first).chain(&more) {
        w.h.ok(&["job", "land", j]);
    }
    assert_eq!(listed(&w, &job)["state"], "conflicts");
    // The refusal's advice followed by the agent: merge the moved base, resolve, commit.
    w.h.ok(&[
        "job",
        "review",
        &job,
        "DO: git merge -q main; printf 'both\\ntwo\\nthree\\n' > lib.txt; git commit -qam merged",
    ]);
    w.h.daemon_until_idle(1);
    let tip = w.git(&["rev-parse", "main"]).trim().to_string();
    assert!(w.event_kinds(&job).contains(&"base_followed".to_string()));
    let row = listed(&w, &job);
    assert_eq!(
        (&row["state"], &row["files"], &row["base_commit"]),
        (&json!("ready"), &json!(1), &json!(tip)),
        "{row}"
    );
    let diff = w.json(&["job", "diff", &job, "--json"]);
    let files: Vec<&str> = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec!["lib.txt"], "{diff}");
    // Since the review round: only the agent's own resolution, none of the landed files.
    let since = w.json(&["job", "diff", &job, "--since-review", "--json"]);
    let since: Vec<&str> = since["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(since, vec!["lib.txt"], "{since:?}");
    let l = w.json(&["job", "land", &job, "--json"]);
    assert_eq!(l["how"], "fast_forward", "{l}");
}

/// Everything a refused rebase must leave as it was: the branch tip, the worktree's
/// status and file, the store's row and the job's events.
fn untouched(w: &WriteHome, job: &str) -> Vec<String> {
    let wt = w.worktree(job);
    vec![
        w.git(&["rev-parse", &format!("gitmoot/{job}/work")]),
        git(&wt, &["status", "--porcelain"]),
        std::fs::read_to_string(wt.join("lib.txt")).unwrap(),
        listed(w, job).to_string(),
        w.event_kinds(job).join(" "),
    ]
}

#[test]
fn job_rebase_replays_the_branch_on_the_moved_base_and_a_conflict_or_uncommitted_work_changes_nothing()
 {
    let w = WriteHome::new("");
    let r = w.implement("echo r > r.txt; git add r.txt; git commit -qm r", &[]);
    let k = w.implement(
        "printf 'kay\\ntwo\\nthree\\n' > lib.txt; git commit -qam k",
        &[],
    );
    let u = w.implement("echo u >> README", &[]);
    w.h.daemon_until_idle(3);
    let landed = w.implement(
        "printf 'ell\\ntwo\\nthree\\n' > lib.txt; echo l > l.txt; git add l.txt; git commit -qam l",
        &[],
    );
    w.h.daemon_until_idle(1);
    w.h.ok(&["job", "land", &landed]);
    let tip = w.git(&["rev-parse", "main"]).trim().to_string();

    let before = untouched(&w, &k);
    let err = w.fails(&["job", "rebase", &k], 2);
    assert!(
        err.contains("conflicts in lib.txt") && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(
        untouched(&w, &k),
        before,
        "a refused rebase changed something"
    );

    let before = untouched(&w, &u);
    let err = w.fails(&["job", "rebase", &u], 2);
    assert!(
        err.contains("uncommitted") && err.contains("README"),
        "{err}"
    );
    assert_eq!(
        untouched(&w, &u),
        before,
        "a refused rebase changed something"
    );

    let out = w.h.ok(&["job", "rebase", &r]);
    assert!(
        out.contains(&format!("rebased {r}")) && out.contains("1 commit(s) replayed"),
        "{out}"
    );
    let wt = w.worktree(&r);
    assert_eq!(git(&wt, &["rev-parse", "HEAD~1"]).trim(), tip);
    assert!(wt.join("l.txt").exists() && wt.join("r.txt").exists());
    assert!(w.event_kinds(&r).contains(&"base_followed".to_string()));
    let row = listed(&w, &r);
    assert_eq!(
        (&row["state"], &row["files"], &row["base_commit"]),
        (&json!("ready"), &json!(1), &json!(tip)),
        "{row}"
    );
    let l = w.json(&["job", "land", &r, "--json"]);
    assert_eq!(l["how"], "fast_forward", "{l}");
}

#[test]
fn job_rebase_is_refused_while_its_agent_works_in_the_worktree() {
    let w = WriteHome::new("");
    let stop = w.h.file("stop");
    let job = w.implement(
        &format!(
            "echo x > x.txt; git add x.txt; git commit -qm x; while [ ! -e {} ]; do sleep 0.1; done",
            stop.display()
        ),
        &[],
    );
    let mut daemon =
        w.h.cmd(&["daemon", "run"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    let limit = std::time::Duration::from_secs(60);
    let at_work = || {
        w.json(&["worktree", "list", "--json"])
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["job"] == job.as_str() && r["state"] == "running")
    };
    assert!(wait_until(limit, at_work), "the job never ran");
    let err = w.fails(&["job", "rebase", &job], 2);
    assert!(
        err.contains("is running") && err.contains("nothing was changed"),
        "{err}"
    );
    std::fs::write(&stop, "").unwrap();
    let ended = || w.json(&["job", "show", &job, "--json"])["state"] == "succeeded";
    assert!(wait_until(limit, ended), "the job never ended");
    gitmoot_test_support::daemon::signal(daemon.id(), libc::SIGTERM);
    daemon.wait().unwrap();
}
