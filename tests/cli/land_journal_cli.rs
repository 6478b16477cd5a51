//! A land is a journalled step: `job land` SIGKILLed at each of its steps (the debug
//! build's `GITMOOT_TEST_LAND_STEP`), through the real binary on a real repository, ends
//! at the next `job land`, `worktree list` or daemon start either recorded once (one
//! `landed` event, the base holding one copy of the work) or not done (the base at its
//! old tip, the job still landable, and landing it then works once); never merged twice.

use std::os::unix::process::ExitStatusExt;

use gitmoot_test_support as support;
use support::write::WriteHome;

/// The steps before the base moves: a land killed there never happened.
const BEFORE: &[&str] = &["planned", "journalled", "checked"];
/// The steps after the base moved: a land killed there is finished by the next start.
const AFTER: &[&str] = &["swapped", "moved", "removed", "cleaned"];

/// What ends an interrupted land: the next command, whichever it is.
const NEXT: &[&[&str]] = &[
    &["job", "land"],
    &["worktree", "list"],
    &["daemon", "run", "--until-idle"],
];

/// `job land JOB` killed by itself with SIGKILL at `step`.
fn killed_at(w: &WriteHome, job: &str, step: &str) {
    let out =
        w.h.cmd(&["job", "land", job])
            .env("GITMOOT_TEST_LAND_STEP", step)
            .output()
            .unwrap();
    assert_eq!(
        out.status.signal(),
        Some(9),
        "the land of {job} at {step} was not killed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `next` (a `job land` is given the job), whatever it exits with.
fn run_next(w: &WriteHome, next: &[&str], job: &str) -> std::process::Output {
    let mut args = next.to_vec();
    if next == ["job", "land"] {
        args.push(job);
    }
    w.run(&args)
}

fn count(w: &WriteHome, job: &str, kind: &str) -> usize {
    w.event_kinds(job).iter().filter(|k| *k == kind).count()
}

/// The commits of `base` whose message names `job`'s work (the job's own commit, its
/// merge or both), and the merge commits on its first-parent walk.
fn copies(w: &WriteHome, base: &str, needle: &str) -> (usize, usize) {
    let log = w.git(&["log", "--format=%H %B%x00", base]);
    let named = log.split('\0').filter(|c| c.contains(needle)).count();
    let merges = w
        .git(&["rev-list", "--first-parent", "--merges", base])
        .lines()
        .count();
    (named, merges)
}

fn worktree_state(w: &WriteHome, job: &str) -> String {
    let rows = w.json(&["worktree", "list", "--json"]);
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["job"] == job)
        .map(|r| r["state"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

/// Jobs each committing a file of its own, `n` of them on bases `b0…` of their own (which
/// their land fast-forwards) and `n` on `main`, which moves on after they ran (their lands
/// merge). (home, fast-forward jobs, merge jobs)
fn home(n: usize) -> (WriteHome, Vec<String>, Vec<String>) {
    home_on(n, "")
}

/// `home` with `extra` in its config (a `[store]` on PostgreSQL).
fn home_on(n: usize, extra: &str) -> (WriteHome, Vec<String>, Vec<String>) {
    let w = WriteHome::new(extra);
    let mut ff = Vec::new();
    for i in 0..n {
        w.git(&["branch", &format!("b{i}"), "main"]);
        let work = format!("echo f{i} > f{i}.txt; git add f{i}.txt; git commit -qm 'ff work {i}'");
        ff.push(w.implement(&work, &["--base", &format!("b{i}")]));
    }
    let mut merge = Vec::new();
    for i in 0..n {
        let work =
            format!("echo m{i} > m{i}.txt; git add m{i}.txt; git commit -qm 'merge work {i}'");
        merge.push(w.implement(&work, &[]));
    }
    w.h.daemon_until_idle(3);
    std::fs::write(w.repo.join("README"), "moved on\n").unwrap();
    w.git(&["commit", "-qam", "main moved on"]);
    (w, ff, merge)
}

/// The job's land is recorded once and the base holds its work once; landing it again is
/// refused and changes nothing.
fn landed_once(w: &WriteHome, job: &str, base: &str, needle: &str, merges: usize, at: &str) {
    assert_eq!(count(w, job, "landed"), 1, "{at}: {:?}", w.event_kinds(job));
    assert_eq!(worktree_state(w, job), "landed", "{at}");
    let head = w.git(&["rev-parse", base]);
    assert_eq!(copies(w, base, needle), (1, merges), "{at}");
    assert!(!w.worktree(job).exists(), "{at}: the worktree is left");
    assert!(
        w.git(&["branch", "--list", &format!("gitmoot/{job}/work")])
            .trim()
            .is_empty(),
        "{at}: the branch is left"
    );
    let err = w.fails(&["job", "land", job], 2);
    assert!(err.contains("was landed"), "{at}: {err}");
    assert_eq!(w.git(&["rev-parse", base]), head, "{at}: landed twice");
    assert_eq!(count(w, job, "landed"), 1, "{at}");
}

#[test]
fn a_land_killed_before_its_base_moves_is_not_done_and_lands_once_later() {
    let n = BEFORE.len() * NEXT.len();
    let (w, ff, merge) = home(n);
    let mut merges = 0;
    let mut k = 0;
    for step in BEFORE {
        for next in NEXT {
            let at = format!("killed at {step}, then {next:?}");
            for (job, base, needle) in [
                (&ff[k], format!("b{k}"), format!("ff work {k}\n")),
                (
                    &merge[k],
                    "main".to_string(),
                    format!("gitmoot job: {}", merge[k]),
                ),
            ] {
                let tip = w.git(&["rev-parse", &base]);
                killed_at(&w, job, step);
                let out = run_next(&w, next, job);
                if next[0] == "job" {
                    // The next land is the one that lands it.
                    assert!(
                        out.status.success(),
                        "{at}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                } else {
                    assert!(out.status.success(), "{at}");
                    assert_eq!(w.git(&["rev-parse", &base]), tip, "{at}: the base moved");
                    assert_eq!(count(&w, job, "landed"), 0, "{at}");
                    assert_ne!(worktree_state(&w, job), "landed", "{at}");
                    assert!(w.worktree(job).exists(), "{at}");
                    w.h.ok(&["job", "land", job]);
                }
                if base == "main" {
                    merges += 1;
                }
                let on_base = if base == "main" { merges } else { 0 };
                landed_once(&w, job, &base, &needle, on_base, &at);
            }
            k += 1;
        }
    }
}

#[test]
fn a_land_killed_after_its_base_moved_is_finished_once_by_the_next_start() {
    let n = AFTER.len() * NEXT.len();
    let (w, ff, merge) = home(n);
    let mut merges = 0;
    let mut k = 0;
    for step in AFTER {
        for next in NEXT {
            let at = format!("killed at {step}, then {next:?}");
            for (job, base, needle) in [
                (&ff[k], format!("b{k}"), format!("ff work {k}\n")),
                (
                    &merge[k],
                    "main".to_string(),
                    format!("gitmoot job: {}", merge[k]),
                ),
            ] {
                killed_at(&w, job, step);
                if base == "main" {
                    merges += 1;
                }
                let out = run_next(&w, next, job);
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    err.contains(&format!("an interrupted land was finished: landed {job}"))
                        || next[0] == "daemon",
                    "{at}: {err}"
                );
                let on_base = if base == "main" { merges } else { 0 };
                landed_once(&w, job, &base, &needle, on_base, &at);
            }
            // The checked-out base's files followed its branch.
            assert!(w.repo.join(format!("m{k}.txt")).exists(), "{at}");
            assert_eq!(w.git(&["status", "--porcelain"]), "", "{at}");
            k += 1;
        }
    }
}

#[test]
fn an_interrupted_land_whose_base_moved_elsewhere_leaves_the_job_open_and_says_so() {
    let (w, ff, _) = home(1);
    let job = &ff[0];
    killed_at(&w, job, "moved");
    // Someone puts the base somewhere else before any start sees the land.
    w.git(&["update-ref", "refs/heads/b0", "main"]);
    w.h.ok(&["worktree", "list"]);
    assert_eq!(count(&w, job, "land_interrupted"), 1);
    assert_eq!(count(&w, job, "landed"), 0);
    assert_ne!(worktree_state(&w, job), "landed");
    w.h.ok(&["worktree", "list"]);
    assert_eq!(count(&w, job, "land_interrupted"), 1, "said twice");
    w.h.ok(&["job", "land", job]);
    assert_eq!(count(&w, job, "landed"), 1);
    assert_eq!(copies(&w, "b0", "ff work 0\n").0, 1);
}

#[test]
fn a_land_under_way_is_left_to_its_process_and_its_job_cannot_be_discarded_meanwhile() {
    let (w, _, merge) = home(1);
    let job = &merge[0];
    let tip = w.git(&["rev-parse", "main"]);
    let mut live =
        w.h.cmd(&["job", "land", job])
            .env("GITMOOT_TEST_LAND_STEP", "moved:block")
            .spawn()
            .unwrap();
    // The base moves before the land blocks; wait for it as a user would look.
    while w.git(&["rev-parse", "main"]) == tip {
        assert!(live.try_wait().unwrap().is_none(), "the land ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    w.h.ok(&["worktree", "list"]);
    assert_eq!(
        count(&w, job, "landed"),
        0,
        "a live land was finished by another"
    );
    let err = w.fails(&["job", "discard", job, "--force"], 1);
    assert!(err.contains("is being landed on main"), "{err}");
    support::daemon::signal(live.id(), 9);
    live.wait().unwrap();
    w.h.ok(&["worktree", "list"]);
    landed_once(
        &w,
        job,
        "main",
        &format!("gitmoot job: {job}"),
        1,
        "after the kill",
    );
}

#[test]
fn on_postgres_a_killed_land_is_finished_once_or_not_done() {
    let db = support::pg::database();
    let (w, ff, merge) = home_on(1, &format!("\n[store]\nurl = \"{}\"\n", db.url()));
    assert!(
        !w.h.path().join("gitmoot.db").exists(),
        "the home is on SQLite"
    );
    let (a, b) = (&merge[0], &ff[0]);
    killed_at(&w, a, "removed");
    w.h.ok(&["worktree", "list"]);
    landed_once(
        &w,
        a,
        "main",
        &format!("gitmoot job: {a}"),
        1,
        "killed at removed",
    );
    let tip = w.git(&["rev-parse", "b0"]);
    killed_at(&w, b, "journalled");
    w.h.ok(&["worktree", "list"]);
    assert_eq!(w.git(&["rev-parse", "b0"]), tip);
    assert_eq!(count(&w, b, "landed"), 0);
    w.h.ok(&["job", "land", b]);
    landed_once(&w, b, "b0", "ff work 0\n", 0, "killed at journalled");
}
