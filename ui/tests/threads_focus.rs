//! Focus and borders in the Threads pane (issue 29, item 8): `h`/`l` never move the focus
//! marker to a section with nothing to mark, the thread list's corner joins the rule
//! below it, and the promote dialog names the agent it will run.

use crate::common;

use common::*;
use gitmoot_ui::state::Section;
use gitmoot_ui::update;

#[test]
fn in_a_thread_with_no_messages_h_keeps_a_marker_on_screen() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('4'));
    // The second thread has no transcript loaded: no message to mark.
    update(&mut s, &snap, ch('j'));
    assert_eq!(s.sel.thread.as_deref(), Some("job-3f2a9c1b7e4d"));
    update(&mut s, &snap, ch('h'));
    assert_eq!(s.section, Section::Inbox, "h skips the empty transcript");
    assert!(text(&s, &snap).contains("▌@"), "{}", text(&s, &snap));
    update(&mut s, &snap, ch('l'));
    assert_eq!(s.section, Section::Threads, "l skips it too");
}

#[test]
fn the_thread_lists_corner_joins_the_rule_below_it() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('4'));
    let screen = text(&s, &snap);
    let corner = screen
        .lines()
        .find(|l| l.contains("──┤"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(!corner.contains('┘'), "{corner}");
}

#[test]
fn the_promote_dialog_names_the_agent_it_will_run() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('4'));
    update(&mut s, &snap, key(crossterm::event::KeyCode::Enter));
    // Up to message #2, which mentions one agent.
    for _ in 0..3 {
        update(&mut s, &snap, ch('k'));
    }
    assert_eq!(s.sel.message, Some(2));
    update(&mut s, &snap, ch('p'));
    let screen = text(&s, &snap);
    assert!(screen.contains("run by @claude-rev"), "{screen}");
}
