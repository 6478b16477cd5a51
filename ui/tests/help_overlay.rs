//! The `?` overlay (issue 29, item 11): `G` and `/` keep it open (to its end, into its own
//! search), the search narrows its rows and counts them, and no description is cut.

use crate::common;

use common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::state::Overlay;
use gitmoot_ui::{Event, State, Theme, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn frame(s: &State, snap: &gitmoot_ui::Snapshot, (w, h): (u16, u16)) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render(f, s, snap, &Theme::default_dark()))
        .unwrap();
    buffer_text(t.backend().buffer())
}

fn scroll(s: &State) -> u16 {
    match &s.overlay {
        Some(Overlay::Help { scroll, .. }) => *scroll,
        other => panic!("the help closed: {other:?}"),
    }
}

#[test]
fn g_goes_to_the_end_of_the_help_and_slash_searches_it() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, Event::Resize(80, 24));
    update(&mut s, &snap, ch('?'));
    update(&mut s, &snap, ch('G'));
    let end = scroll(&s);
    assert!(end > 0, "G scrolled to the end");
    update(&mut s, &snap, ch('j'));
    assert_eq!(scroll(&s), end, "never past the end");
    let screen = frame(&s, &snap, (80, 24));
    assert!(
        screen.contains("Cancel"),
        "the dialog keys end the help: {screen}"
    );
    update(&mut s, &snap, ch('g'));
    assert_eq!(scroll(&s), 0);
    type_keys(&mut s, &snap, "/wrap");
    update(&mut s, &snap, key(KeyCode::Enter));
    let screen = frame(&s, &snap, (80, 24));
    assert!(screen.contains("keys · 1 of"), "{screen}");
    assert!(screen.contains("wrap long steps"), "{screen}");
    assert!(!screen.contains("Quit"), "{screen}");
    // Esc drops the search first, then closes.
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(frame(&s, &snap, (80, 24)).contains("Quit"));
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
}

#[test]
fn no_help_line_is_cut_at_80_columns() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, Event::Resize(80, 24));
    update(&mut s, &snap, ch('?'));
    let mut seen = String::new();
    // Page by page to the end (a page of 12 never skips a line of the 17-line inside).
    loop {
        seen.push_str(&frame(&s, &snap, (80, 24)));
        let before = scroll(&s);
        update(&mut s, &snap, key(KeyCode::PageDown));
        if scroll(&s) == before {
            break;
        }
    }
    // The inside of the overlay: from its left border to its right one.
    let top = seen.lines().find(|l| l.contains("╭ keys")).unwrap();
    let left = top.chars().position(|c| c == '╭').unwrap() + 1;
    let width = top.chars().skip(left).position(|c| c == '╮').unwrap();
    let words: String = seen
        .lines()
        .map(|l| l.chars().skip(left).take(width).collect::<String>())
        .collect::<Vec<_>>()
        .join(" ");
    let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
    for desc in [
        "Filter the focused view (substring; -f for fuzzy)",
        "Activity: show the step's detail; Diff: go to the file",
    ] {
        assert!(words.contains(desc), "{desc:?} is cut: {seen}");
    }
}
