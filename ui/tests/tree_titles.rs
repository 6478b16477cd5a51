//! Titles first (issue 29, item 9): at 140 columns a running row's live step takes only
//! what its whole title leaves, and a settled row's title uses the blank its figures leave.

use crate::common;

use common::*;
use gitmoot_ui::{Event, State, Theme, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn tree_lines(s: &State, snap: &gitmoot_ui::Snapshot) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(140, 40)).unwrap();
    t.draw(|f| render(f, s, snap, &Theme::default_dark()))
        .unwrap();
    // The left column: the tree under the Attention pane.
    buffer_text(t.backend().buffer())
        .lines()
        .map(|l| l.chars().take(70).collect())
        .collect()
}

#[test]
fn at_140_columns_titles_come_before_the_running_step_and_the_blank() {
    let (mut s, mut snap) = setup();
    snap.live.latest.insert(
        "job-p8c3d1wz".into(),
        "$ cargo audit --deny warnings --json --file Cargo.lock --no-fetch".into(),
    );
    update(&mut s, &snap, Event::Resize(140, 40));
    update(&mut s, &snap, Event::SnapshotArrived);
    let lines = tree_lines(&s, &snap);
    let running = lines
        .iter()
        .find(|l| l.contains("job-p8c3d1wz"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(
        running.contains("job-p8c3d1wz  Nightly dependency audit  $ cargo"),
        "{running}"
    );
    let settled = lines
        .iter()
        .find(|l| l.contains("job-m2x9b4rt"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(
        settled.contains("Review the 2.4 release notes"),
        "{settled}"
    );
}
