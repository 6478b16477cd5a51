//! insta snapshots of every pane, overlay and dialog, rendered from the fixture at 120×36
//! with the fixed clock; plus the narrow DAG list, a styled (colour) dump for one theme,
//! and the monochrome theme.

use crate::common;

use common::*;
use gitmoot_ui::{Theme, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[test]
fn every_scene() {
    for (name, state, snap) in scenes() {
        insta::assert_snapshot!(name, text(&state, &snap));
    }
}

#[test]
fn narrow_terminal_shows_the_dag_as_a_list() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, gitmoot_ui::Event::Resize(90, 30));
    update(&mut s, &snap, ch('3'));
    let mut t = Terminal::new(TestBackend::new(90, 30)).unwrap();
    t.draw(|f| gitmoot_ui::render(f, &s, &snap, &Theme::default_dark()))
        .unwrap();
    let out = buffer_text(t.backend().buffer());
    assert!(out.contains("├─◆ schema codex ask"), "{out}");
    insta::assert_snapshot!("dag_narrow", out);
}

/// Colours carry meaning: the failed leg's glyph is drawn in the theme's failed style.
#[test]
fn state_colours_come_from_the_theme() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('2'));
    for theme in [
        Theme::default_dark(),
        Theme::builtin("light").unwrap(),
        Theme::builtin("high-contrast").unwrap(),
    ] {
        let b = buffer(&s, &snap, &theme);
        let row = (0..H)
            .find(|y| {
                buffer_text(&b)
                    .lines()
                    .nth(*y as usize)
                    .unwrap()
                    .contains("└─ ✗ docs · scribe")
            })
            .unwrap();
        let x = (0..W).find(|x| b[(*x, row)].symbol() == "✗").unwrap();
        let want = theme.style(gitmoot_ui::theme::Slot::JobFailed);
        assert_eq!(b[(x, row)].fg, want.fg.unwrap(), "{}", theme.name);
    }
}

#[test]
fn monochrome_draws_no_colour() {
    let (s, snap) = setup();
    let b = buffer(&s, &snap, &Theme::monochrome());
    for c in b.content() {
        assert_eq!(c.fg, ratatui::style::Color::Reset);
        assert_eq!(c.bg, ratatui::style::Color::Reset);
    }
}

/// Hostile bytes planted in the fixture never reach the terminal buffer.
#[test]
fn no_escape_sequence_reaches_the_buffer() {
    for (name, state, snap) in scenes() {
        let b = buffer(&state, &snap, &Theme::default_dark());
        for c in b.content() {
            assert!(
                !c.symbol().chars().any(|ch| ch.is_control()),
                "{name}: control char in a cell"
            );
        }
        assert!(
            !buffer_text(&b).contains("pwned"),
            "{name}: OSC payload visible"
        );
    }
}

#[test]
fn rendering_twice_gives_the_same_frame() {
    let (s, snap) = setup();
    assert_eq!(text(&s, &snap), text(&s, &snap));
}

/// The colours of the job tree's rows, as runs of `fg` over text: locks the state colours
/// (a failed leg red, a running one cyan…) the way the text snapshots lock the layout.
#[test]
fn tree_row_colours() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('2'));
    let b = buffer(&s, &snap, &Theme::default_dark());
    let mut out = String::new();
    for y in 11..19 {
        let mut last = None;
        for x in 1..59 {
            let c = &b[(x, y)];
            if c.symbol().trim().is_empty() {
                continue;
            }
            if last != Some(c.fg) {
                out.push_str(&format!(" [{:?}]", c.fg));
                last = Some(c.fg);
            }
            out.push_str(c.symbol());
        }
        out.push('\n');
    }
    insta::assert_snapshot!("tree_colours", out);
}

#[test]
fn the_spinner_moves_with_the_tick() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('2'));
    assert!(text(&s, &snap).contains("⠋ db · codex"));
    update(
        &mut s,
        &snap,
        gitmoot_ui::Event::Tick {
            now_ms: common::fixture::NOW + 100,
        },
    );
    assert!(text(&s, &snap).contains("⠙ db · codex"));
}

/// Any terminal size renders without panicking (tiny, narrow, tall).
#[test]
fn every_scene_survives_any_terminal_size() {
    for (w, h) in [
        (1, 1),
        (10, 3),
        (20, 5),
        (40, 12),
        (79, 24),
        (100, 10),
        (200, 60),
    ] {
        for (name, mut state, snap) in scenes() {
            update(&mut state, &snap, gitmoot_ui::Event::Resize(w, h));
            for pane in ['1', '2', '3', '4', '5'] {
                let mut s = state.clone();
                if s.overlay.is_none() && s.command.is_none() && !s.filter_editing {
                    update(&mut s, &snap, ch(pane));
                }
                let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
                t.draw(|f| gitmoot_ui::render(f, &s, &snap, &Theme::default_dark()))
                    .unwrap_or_else(|e| panic!("{name} {w}x{h}: {e}"));
            }
        }
    }
}
