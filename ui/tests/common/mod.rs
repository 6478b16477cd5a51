//! Shared test helpers: the fixture state, key events and a 120×36 text render.

pub mod fixture;
pub mod work;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fixture::NOW;
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

pub fn ctrl(c: char) -> Event {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
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

/// Every pane, overlay and dialog as a named scene from the fixture.
pub fn scenes() -> Vec<(&'static str, State, Snapshot)> {
    use crossterm::event::KeyCode;
    let scene = |keys: &[Event]| {
        let (mut s, snap) = setup();
        for e in keys {
            update(&mut s, &snap, e.clone());
        }
        (s, snap)
    };
    let chars = |k: &str| k.chars().map(ch).collect::<Vec<_>>();
    let mut out = Vec::new();
    let mut push = |name, (s, snap): (State, Snapshot)| out.push((name, s, snap));
    push("attention", scene(&[]));
    push("tree", scene(&chars("2jjj")));
    push("dag", scene(&chars("3jj")));
    push("threads", scene(&[ch('4'), key(KeyCode::Enter), ch('k')]));
    push("inbox", scene(&chars("4l")));
    push("detail", scene(&[ch('2'), key(KeyCode::Enter)]));
    push("zoom_tree", scene(&chars("2z")));
    push("agents", scene(&chars("6j")));
    push("help", scene(&chars("2?")));
    push("filter", scene(&chars("2/codex")));
    push("command", scene(&chars(":job show job-k3v7q2ma")));
    push("kill_dialog", scene(&chars("2K")));
    push("cancel_dialog", scene(&chars("2jjjC")));
    push("abort_dialog", scene(&chars("x")));
    let mut answer = chars("ja");
    answer.push(key(KeyCode::Down));
    answer.push(key(KeyCode::Tab));
    answer.extend(chars("sunday 02:00 UTC"));
    push("answer_form", scene(&answer));
    let mut retry = chars("r");
    retry.extend(chars("use the v2 docs template"));
    push("retry_form", scene(&retry));
    let mut compose = vec![ch('4'), key(KeyCode::Enter), ch('r')];
    compose.extend(chars("will do @co"));
    compose.push(key(KeyCode::Tab));
    push("compose", scene(&compose));
    push(
        "promote_picker",
        scene(&[ch('4'), key(KeyCode::Enter), ch('p'), ch('j')]),
    );
    push("toast", scene(&chars("2y")));
    let (mut ro, snap) = setup();
    ro.readonly = true;
    update(&mut ro, &snap, ch('K'));
    push("readonly", (ro, snap));
    let empty = Snapshot::empty(fixture::NOW);
    let mut es = State::new(Keymap::builtin(), false, fixture::NOW);
    update(&mut es, &empty, Event::Resize(W, H));
    update(&mut es, &empty, Event::SnapshotArrived);
    push("empty", (es, empty));
    out
}
