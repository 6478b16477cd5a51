//! Sorting and scroll position (issue 29, item 13): k9s's Shift-letters order the Job
//! tree's roots (the same key again reverses) and the title says how; the detail drawer,
//! the Activity tab and the help show where they are scrolled to.

use crate::common;

use common::*;
use gitmoot_ui::{Snapshot, State, rows, update};

fn roots(snap: &Snapshot, s: &State) -> Vec<String> {
    rows::tree_rows(snap, s)
        .iter()
        .filter(|r| r.level == 0)
        .map(|r| r.node.id.clone())
        .collect()
}

#[test]
fn shift_letters_sort_the_roots_and_again_reverses() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('2'));
    let newest = roots(&snap, &s);
    update(&mut s, &snap, ch('S'));
    assert_eq!(
        roots(&snap, &s),
        [
            "job-k3v7q2ma",
            "job-p8c3d1wz",
            "job-a5f6g7h8",
            "job-m2x9b4rt"
        ],
        "waiting on a human, running, killed, done"
    );
    assert!(text(&s, &snap).contains("4 roots · by state"));
    update(&mut s, &snap, ch('S'));
    assert_eq!(roots(&snap, &s)[0], "job-m2x9b4rt");
    assert!(text(&s, &snap).contains("by state, reversed"));
    update(&mut s, &snap, ch('A'));
    assert_eq!(roots(&snap, &s), newest);
    update(&mut s, &snap, ch('A'));
    let mut oldest = newest.clone();
    oldest.reverse();
    assert_eq!(roots(&snap, &s), oldest);
    update(&mut s, &snap, ch('T'));
    let spend: Vec<f64> = roots(&snap, &s)
        .iter()
        .map(|id| snap.root(id).unwrap().cost_usd)
        .collect();
    assert!(spend.windows(2).all(|w| w[0] >= w[1]), "{spend:?}");
}

/// The rows of column `x` that hold the scrollbar's thumb.
fn thumb_rows(screen: &str, x: usize) -> Vec<usize> {
    screen
        .lines()
        .enumerate()
        .filter(|(_, l)| l.chars().nth(x) == Some('█'))
        .map(|(y, _)| y)
        .collect()
}

fn frame(s: &State, snap: &Snapshot) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    t.draw(|f| gitmoot_ui::render(f, s, snap, &gitmoot_ui::Theme::default_dark()))
        .unwrap();
    buffer_text(t.backend().buffer())
}

#[test]
fn the_help_and_the_drawer_show_where_they_are_scrolled_to() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, gitmoot_ui::Event::Resize(80, 24));
    update(&mut s, &snap, ch('?'));
    let screen = frame(&s, &snap);
    let top = screen.lines().find(|l| l.contains("╭ keys")).unwrap();
    let right = top.chars().position(|c| c == '╮').unwrap();
    let at_top = thumb_rows(&screen, right);
    assert_eq!(
        at_top.first(),
        Some(&3),
        "the thumb starts at the top: {screen}"
    );
    update(&mut s, &snap, ch('G'));
    let screen = frame(&s, &snap);
    let at_end = thumb_rows(&screen, right);
    let bottom = screen.lines().position(|l| l.contains('╯')).unwrap();
    assert_eq!(
        at_end.last(),
        Some(&(bottom - 1)),
        "and ends at the end: {screen}"
    );
    // The drawer's overview, longer than its pane at 80×24.
    update(&mut s, &snap, key(crossterm::event::KeyCode::Esc));
    update(&mut s, &snap, ch('2'));
    update(&mut s, &snap, key(crossterm::event::KeyCode::Enter));
    let screen = frame(&s, &snap);
    assert!(!thumb_rows(&screen, 79).is_empty(), "{screen}");
}
