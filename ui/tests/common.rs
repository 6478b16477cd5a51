//! Shared test helpers: the fixture state, key events and a 120×36 text render.

#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gitmoot_ui::fixture::{self, NOW};
use gitmoot_ui::{Event, Keymap, Snapshot, State, Theme, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

pub const W: u16 = 120;
pub const H: u16 = 36;

/// The fixture snapshot and a state that has seen it arrive.
pub fn setup() -> (State, Snapshot) {
    let snap = fixture::snapshot();
    let mut state = State::new(Keymap::builtin(), false, NOW);
    update(&mut state, &snap, Event::Resize(W, H));
    update(&mut state, &snap, Event::SnapshotArrived);
    (state, snap)
}

pub fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ch(c: char) -> Event {
    let mods = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    Event::Key(KeyEvent::new(KeyCode::Char(c), mods))
}

pub fn with(code: KeyCode, mods: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, mods))
}

/// Sends each character of `keys` as a key press; returns every action.
pub fn type_keys(state: &mut State, snap: &Snapshot, keys: &str) -> Vec<gitmoot_ui::Action> {
    keys.chars()
        .flat_map(|c| update(state, snap, ch(c)))
        .collect()
}

pub fn buffer(state: &State, snap: &Snapshot, theme: &Theme) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(W, H)).unwrap();
    t.draw(|f| render(f, state, snap, theme)).unwrap();
    t.backend().buffer().clone()
}

/// The frame as plain text, one line per row, trailing spaces trimmed.
pub fn text(state: &State, snap: &Snapshot) -> String {
    let b = buffer(state, snap, &Theme::default_dark());
    buffer_text(&b)
}

pub fn buffer_text(b: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..b.area.height {
        let mut line = String::new();
        for x in 0..b.area.width {
            line.push_str(b[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
