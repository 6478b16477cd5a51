//! `/` in whichever view has the focus (issue 29, item 4): a substring by default, fuzzy
//! with `-f`, the matches highlighted and `n of m` in the view's title.

use crate::common;

use common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::rows;
use gitmoot_ui::theme::Slot;
use gitmoot_ui::{Snapshot, State, Theme};

fn tree_ids(snap: &Snapshot, s: &State) -> Vec<String> {
    rows::tree_rows(snap, s)
        .iter()
        .map(|r| r.node.id.clone())
        .collect()
}

#[test]
fn slash_matches_a_substring_unless_fuzzy_is_asked_for() {
    let (mut s, snap) = setup();
    // `rfct` is a subsequence of "Refactor …" but not a substring of any row.
    type_keys(&mut s, &snap, "2/rfct");
    assert!(tree_ids(&snap, &s).is_empty(), "{:?}", tree_ids(&snap, &s));
    assert!(text(&s, &snap).contains("No job matches the filter."));
    for _ in 0..4 {
        send_key(&mut s, &snap, KeyCode::Backspace);
    }
    type_keys(&mut s, &snap, "-f rfct");
    assert_eq!(tree_ids(&snap, &s), vec!["job-k3v7q2ma".to_string()]);
    for _ in 0.."-f rfct".len() {
        send_key(&mut s, &snap, KeyCode::Backspace);
    }
    type_keys(&mut s, &snap, "ledger");
    send_key(&mut s, &snap, KeyCode::Enter);
    let screen = text(&s, &snap);
    assert!(screen.contains("4 roots · 1 of"), "{screen}");
}

#[test]
fn a_threads_filter_searches_the_open_transcript_and_highlights_it() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "4/idempotency");
    send_key(&mut s, &snap, KeyCode::Enter);
    let threads: Vec<&str> = rows::thread_rows(&snap, &s)
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(
        threads,
        vec!["th-payments"],
        "the thread it was said in stays"
    );
    let seqs: Vec<u64> = rows::message_rows(&snap, &s)
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(seqs, vec![5]);
    let theme = Theme::default_dark();
    let b = buffer(&s, &snap, &theme);
    let screen = buffer_text(&b);
    assert!(screen.contains("1 of 5 · Payments refactor"), "{screen}");
    let (x, y) = find(&screen, "idempotency keys").expect("the match is on screen");
    let hit = theme.style(Slot::FilterMatch);
    assert_eq!(b[(x, y)].fg, hit.fg.unwrap(), "the match is highlighted");
    // The filter belongs to the view it was typed in: the tree is not narrowed by it.
    assert!(!tree_ids(&snap, &s).is_empty());
}

fn send_key(s: &mut State, snap: &Snapshot, code: KeyCode) {
    gitmoot_ui::update(s, snap, key(code));
}

/// The column and row of `needle`'s first character in a text frame.
fn find(screen: &str, needle: &str) -> Option<(u16, u16)> {
    screen.lines().enumerate().find_map(|(y, l)| {
        l.find(needle)
            .map(|i| (l[..i].chars().count() as u16, y as u16))
    })
}
