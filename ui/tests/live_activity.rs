//! Live activity in the control room: a running job's row shows its newest step, a root
//! its spend against the budget, the status bar today's spend, and the Detail drawer's
//! Activity tab lists the steps, follows the newest, and opens one with Enter.

use crate::common;

use common::{ch, key, setup, text};
use crossterm::event::KeyCode;
use gitmoot_ui::live::{DetailTab, Step};
use gitmoot_ui::{Event, update};

fn step(seq: u64, kind: &str, summary: &str, detail: Option<&str>) -> Step {
    Step {
        seq,
        ts_ms: common::fixture::NOW - 60_000 + seq as i64 * 1000,
        kind: kind.into(),
        summary: summary.into(),
        detail: detail.map(str::to_string),
    }
}

#[test]
fn rows_show_the_newest_step_and_the_spend_and_the_bar_todays_total() {
    let (mut s, mut snap) = setup();
    snap.live
        .latest
        .insert("job-k3v7q2ma/db".into(), "$ cargo test -p ledger".into());
    // A settled job's stale step is not shown.
    snap.live
        .latest
        .insert("job-k3v7q2ma/api".into(), "old step".into());
    snap.live.budget_usd = Some(5.0);
    snap.live
        .running_spend
        .insert("job-k3v7q2ma".into(), (1_000, 0.10));
    snap.live.today_usd = 1.25;
    update(&mut s, &snap, Event::SnapshotArrived);
    let screen = text(&s, &snap);
    let row = screen
        .lines()
        // The tree's row, not the DAG's node of the same name beside it.
        .find(|l| {
            l.split("││")
                .next()
                .is_some_and(|tree| tree.contains("db · codex"))
        })
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(row.contains("$ cargo test"), "{row}");
    assert!(!screen.contains("old step"), "{screen}");
    // The payments root settled $0.84 and its running leg spent $0.10 more.
    assert!(screen.contains("$0.94/5.00"), "{screen}");
    assert!(screen.lines().next().unwrap().contains("today $1.25"));
}

#[test]
fn the_activity_tab_follows_the_newest_step_and_opens_one_with_enter() {
    let (mut s, mut snap) = setup();
    snap.detail.as_mut().unwrap().activity = vec![
        step(0, "message", "Let me look at the folder.", None),
        step(1, "tool_call", "$ ls", Some("{\"command\": \"ls\"}")),
        step(2, "tool_result", "a.txt", Some("a.txt\nb.txt")),
    ];
    update(&mut s, &snap, ch('2'));
    update(&mut s, &snap, key(KeyCode::Enter));
    update(&mut s, &snap, Event::SnapshotArrived);
    assert!(text(&s, &snap).contains("overview │ activity"));
    update(&mut s, &snap, ch('l'));
    assert_eq!(s.detail_tab, DetailTab::Activity);
    let screen = text(&s, &snap);
    assert!(screen.contains("• Let me look at the folder."), "{screen}");
    assert!(screen.contains("→ $ ls"), "{screen}");
    assert!(screen.contains("← a.txt"), "{screen}");
    assert_eq!(s.activity_sel, None, "following the newest step");
    // Up leaves follow mode on the tool call; Enter shows its detail.
    update(&mut s, &snap, ch('k'));
    assert_eq!(s.activity_sel, Some(1));
    update(&mut s, &snap, key(KeyCode::Enter));
    assert!(text(&s, &snap).contains("{\"command\": \"ls\"}"));
    // Back down to the newest follows again; h returns to the overview.
    update(&mut s, &snap, ch('j'));
    assert_eq!(s.activity_sel, None);
    update(&mut s, &snap, ch('h'));
    assert_eq!(s.detail_tab, DetailTab::Overview);
    assert!(text(&s, &snap).contains("── prompt"));
}

/// Issue 29, item 1: in the Activity tab `/` searches the log (not the tree behind it),
/// the header says whether it follows, `w` wraps long steps, and indentation stays.
#[test]
fn the_activity_tab_is_searched_wrapped_and_keeps_indentation() {
    let (mut s, mut snap) = setup();
    let long = format!("warning: {}", "the cache is cold ".repeat(12));
    snap.detail.as_mut().unwrap().activity = vec![
        step(0, "output", "compiling ledger", None),
        step(1, "stderr", &long, None),
        step(2, "output", "Traceback (most recent call last):", None),
        step(3, "output", "    File \"app.py\", line 3", None),
    ];
    update(&mut s, &snap, ch('2'));
    update(&mut s, &snap, key(KeyCode::Enter));
    update(&mut s, &snap, Event::SnapshotArrived);
    update(&mut s, &snap, ch('l'));
    let screen = text(&s, &snap);
    assert!(screen.contains("● following"), "{screen}");
    assert!(
        screen.contains("      File \"app.py\""),
        "indentation kept: {screen}"
    );
    update(&mut s, &snap, ch('k'));
    assert!(text(&s, &snap).contains("‖ paused"));
    update(&mut s, &snap, ch('G'));
    assert!(text(&s, &snap).contains("● following"));
    // Cut to one line, then wrapped onto several with `w`.
    let cold = |s: &gitmoot_ui::State| text(s, &snap).matches("cache is cold").count();
    let cut = cold(&s);
    update(&mut s, &snap, ch('w'));
    assert!(cold(&s) > cut + 2, "wrapped: {}", text(&s, &snap));
    // `/` narrows the log to its matches and counts them; the tree keeps its rows.
    let tree_before = gitmoot_ui::rows::tree_rows(&snap, &s).len();
    for c in "/warning".chars() {
        update(&mut s, &snap, ch(c));
    }
    update(&mut s, &snap, key(KeyCode::Enter));
    let screen = text(&s, &snap);
    assert!(screen.contains("1 of 4"), "{screen}");
    assert!(!screen.contains("compiling ledger"), "{screen}");
    assert!(screen.contains("warning: the cache"), "{screen}");
    assert_eq!(gitmoot_ui::rows::tree_rows(&snap, &s).len(), tree_before);
}
