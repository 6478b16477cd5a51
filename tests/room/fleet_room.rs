//! Issue 28's fleet work in a real terminal: marking rows of the job tree and acting on
//! all of them with one confirmation.

use gitmoot_test_support as support;

use std::path::Path;
use std::time::Duration;

use support::tmux::Tmux;
use support::{job_state, shell_agent, stdout};

const WAIT: Duration = Duration::from_secs(60);

fn submit(home: &Path, prompt: &str) -> String {
    stdout(home, &["job", "run", "--agent", "scout", prompt])
        .trim()
        .to_string()
}

#[test]
fn marking_three_rows_and_cancelling_them_cancels_those_three_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "scout", "cat >/dev/null", &[]);
    // Oldest first; the tree shows them newest first, so the untouched one is last.
    let spared = submit(&home, "spared");
    let marked: Vec<String> = ["first", "second", "third"]
        .iter()
        .map(|p| submit(&home, p))
        .collect();

    // No daemon: the jobs stay queued while the operator marks them.
    let t = Tmux::control_room("marks", &home, "--no-daemon");
    t.wait_for(&spared, WAIT);
    t.keys(&["2", "g", "m", "m", "m"]);
    t.wait_for("3 marked", WAIT);
    t.keys(&["C"]);
    let dialog = t.wait_for("cancel 3 marked job(s)?", WAIT);
    for id in &marked {
        assert!(
            dialog.contains(&format!("cancel {id} (queued, scout)")),
            "{dialog}"
        );
    }
    assert!(!dialog.contains(&format!("cancel {spared}")), "{dialog}");
    t.keys(&["y"]);
    t.wait_for("cancel: 3 done, 0 refused", WAIT);
    for id in &marked {
        assert_eq!(job_state(&home, id), "cancelled", "{id}");
    }
    assert_eq!(job_state(&home, &spared), "queued");
    t.quit(WAIT);
}

#[test]
fn marking_asking_rows_and_answering_them_gives_each_the_one_choice() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "asker", support::ASKER, &[]);
    let picky = support::ASKER.replace("\"canary first\", \"all at once\"", "\"yes\", \"no\"");
    shell_agent(&home, "picky", &picky, &[]);
    let ask = |agent: &str, prompt: &str| {
        stdout(&home, &["job", "run", "--agent", agent, prompt])
            .trim()
            .to_string()
    };
    // Oldest first: the tree shows the askers on top, so the selected row offers their choices.
    let p = ask("picky", "three");
    let asked = [ask("asker", "one"), ask("asker", "two")];
    stdout(&home, &["daemon", "run", "--until-idle"]);

    let t = Tmux::control_room("answer-many", &home, "--no-daemon");
    t.wait_for(&p, WAIT);
    t.keys(&["2", "g", "M"]);
    t.wait_for("3 marked", WAIT);
    t.keys(&["a"]);
    let dialog = t.wait_for("answer 3 marked job(s) \"canary first\"?", WAIT);
    for id in &asked {
        assert!(
            dialog.contains(&format!("answer {id} \"canary first\" (it resumes)")),
            "{dialog}"
        );
    }
    assert!(
        dialog.contains(&format!("refused {p}: rollout")),
        "{dialog}"
    );
    t.keys(&["y"]);
    t.wait_for("answer: 2 done, 1 refused", WAIT);
    let left = support::json(&home, &["job", "pending", "--json"]);
    let left = left.as_array().unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["job_id"], p.as_str());
    t.quit(WAIT);
}

#[test]
fn a_stalled_job_appears_in_attention_with_its_evidence_and_is_cancelled_from_there() {
    let dir = tempfile::tempdir().unwrap();
    let home = support::configured_home(
        dir.path(),
        "h",
        "[daemon]\ntick = \"100ms\"\n[orchestrate]\nstall_after = \"1s\"\n",
    );
    // Silent until the test is done with it (it is cancelled before the file appears).
    let never = dir.path().join("never");
    shell_agent(
        &home,
        "scout",
        &format!(
            "cat >/dev/null\nwhile [ ! -f {} ]; do sleep 0.1; done",
            never.display()
        ),
        &[],
    );
    let job = submit(&home, "hang");
    let t = Tmux::control_room("stall", &home, "");
    let screen = t.wait_for("⧗ stalled", WAIT);
    assert!(screen.contains("no activity for"), "{screen}");
    assert!(screen.contains("nothing since it started"), "{screen}");
    t.keys(&["1", "g", "C"]);
    t.wait_for(&format!("Cancel {job}?"), WAIT);
    t.keys(&["y"]);
    t.wait_gone("⧗ stalled", WAIT);
    support::wait_until("the job to end cancelled", WAIT, || {
        job_state(&home, &job) == "cancelled"
    });
    t.quit(WAIT);
}

#[test]
fn the_agents_pane_follows_a_live_job() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let (next, go) = (dir.path().join("next"), dir.path().join("go"));
    shell_agent(
        &home,
        "scout",
        &format!(
            "cat >/dev/null\necho 'reading the schema'\nwhile [ ! -f {next} ]; do sleep 0.1; done\n\
             echo 'writing the migration'\nwhile [ ! -f {go} ]; do sleep 0.1; done\n\
             echo '{{\"gitmoot_result\": {{\"decision\": \"approved\", \"summary\": \"ok\"}}}}'",
            next = next.display(),
            go = go.display()
        ),
        &[],
    );
    let job = submit(&home, "migrate");
    let t = Tmux::control_room("agents", &home, "");
    t.wait_for("daemon embedded", WAIT);
    t.keys(&["6"]);
    t.wait_for("scout · working on 1", WAIT);
    t.wait_for("now: reading the schema", WAIT);
    std::fs::write(&next, "").unwrap();
    t.wait_for("now: writing the migration", WAIT);
    std::fs::write(&go, "").unwrap();
    t.wait_for("scout · idle", WAIT);
    assert_eq!(job_state(&home, &job), "succeeded");
    t.quit(WAIT);
}

#[test]
fn the_grouped_view_counts_what_needs_you_what_works_and_what_is_done_today() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "asker", support::ASKER, &[]);
    shell_agent(
        &home,
        "scout",
        "cat >/dev/null\necho '{\"gitmoot_result\": {\"decision\": \"approved\", \"summary\": \"ok\"}}'",
        &[],
    );
    stdout(&home, &["job", "run", "--agent", "asker", "ask"]);
    submit(&home, "done one");
    submit(&home, "done two");
    stdout(&home, &["daemon", "run", "--until-idle"]);
    let queued = submit(&home, "still to run");
    let t = Tmux::control_room("groups", &home, "--no-daemon");
    t.wait_for(&queued, WAIT);
    t.keys(&["2", "v"]);
    let screen = t.wait_for("needs you 1 · working 1 · done today 2", WAIT);
    for heading in ["Needs you (1)", "Working (1)", "Done today (2)"] {
        assert!(screen.contains(heading), "{heading}: {screen}");
    }
    t.keys(&["v"]);
    t.wait_for("4 roots", WAIT);
    t.quit(WAIT);
}

#[test]
fn ctrl_f_finds_a_word_an_agent_printed_and_enter_opens_that_jobs_activity() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(
        &home,
        "scout",
        "cat >/dev/null\necho 'recalibrating the flux capacitor'\n\
         echo '{\"gitmoot_result\": {\"decision\": \"approved\", \"summary\": \"ok\"}}'",
        &[],
    );
    shell_agent(&home, "quiet", "cat >/dev/null\necho 'nothing to see'", &[]);
    let job = submit(&home, "tune it");
    let other = stdout(&home, &["job", "run", "--agent", "quiet", "another"])
        .trim()
        .to_string();
    stdout(&home, &["daemon", "run", "--until-idle"]);
    let t = Tmux::control_room("search", &home, "--no-daemon");
    t.wait_for(&other, WAIT);
    t.keys(&["C-f"]);
    t.wait_for("search:", WAIT);
    t.keys(&["-l", "capacitor"]);
    t.keys(&["Enter"]);
    // One hit: the activity step of the job that printed it (the search view shows the
    // line, the tree behind it does not).
    let screen = t.wait_for("recalibrating the flux capacitor", WAIT);
    assert!(screen.contains(&format!("activity {job} #")), "{screen}");
    t.keys(&["Enter"]);
    let drawer = t.wait_for("G follows", WAIT);
    assert!(drawer.contains(&job), "{drawer}");
    assert!(
        drawer.contains("recalibrating the flux capacitor"),
        "{drawer}"
    );
    t.quit(WAIT);
}

/// `$` opens the Usage view on what the store settled: two roots on the Claude Code stand-in
/// (which reports $0.0421 a job) against a $5 per-root budget, the day's total, each root's
/// headroom; Enter on a root selects it in the tree, and the tree row shows its spend
/// against the budget.
#[test]
fn the_usage_view_adds_up_the_days_spend_and_enter_selects_a_root() {
    let h = support::daemon::TestHome::budgeted_claude("");
    let first = h.submit("cl", "first look", &[]);
    let second = h.submit("cl", "second look", &[]);
    h.run_until_idle();
    let t = Tmux::control_room("usage", &h.path(), "--no-daemon");
    t.wait_for(&second, WAIT);
    t.keys(&["$"]);
    let screen = t.wait_for("$0.08 · 2 jobs", WAIT);
    for root in [&first, &second] {
        assert!(screen.contains(root.as_str()), "{root}: {screen}");
    }
    assert!(screen.contains("$0.04 of $5.00"), "{screen}");
    assert!(screen.contains("peak $0.08 at"), "{screen}");
    // The roots list most dollars first, ties by key; Enter selects the one the tree did not.
    let tree = |t: &Tmux| t.wait_for("$0.04/5.00", WAIT);
    let selected = |screen: &str| {
        screen
            .lines()
            .find(|l| l.contains('▌'))
            .unwrap_or_else(|| panic!("a selected row: {screen}"))
            .to_string()
    };
    t.keys(&["Escape"]);
    let before = selected(&tree(&t));
    let (top, other) = match first < second {
        true => (&first, &second),
        false => (&second, &first),
    };
    let (keys, target): (&[&str], _) = match before.contains(top.as_str()) {
        true => (&["$", "j", "Enter"], other),
        false => (&["$", "Enter"], top),
    };
    t.keys(keys);
    t.wait_for(&format!("▌ ✓ {target}"), WAIT);
    t.quit(WAIT);
}
