//! One control-room frame: the state after a snapshot, the render into a 120×36 test
//! terminal, and the bare frame that is the machine's own limit for it.

use std::time::Instant;

use gitmoot_ui::{Event, Keymap, Snapshot, State, Theme, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::{median, ms};

/// Terminal size of the figures (the screenshots' size).
const WIDTH: u16 = 120;
const HEIGHT: u16 = 36;

/// The control room's state after a snapshot arrived at 120×36, as the event loop has it.
pub(crate) fn view_state(snap: &Snapshot) -> State {
    let mut state = State::new(Keymap::builtin(), false, snap.now_ms);
    update(&mut state, snap, Event::SnapshotArrived);
    update(&mut state, snap, Event::Resize(WIDTH, HEIGHT));
    state
}

/// The text of a test terminal's buffer, row by row.
fn screen_text(buffer: &ratatui::buffer::Buffer) -> String {
    buffer
        .content()
        .chunks(WIDTH as usize)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

thread_local! {
    /// One 120×36 test terminal kept across frames, as the control room keeps its own.
    static TERM: std::cell::RefCell<Terminal<TestBackend>> =
        std::cell::RefCell::new(Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("a test terminal"));
}

/// Renders one frame of `snap` into the 120×36 test terminal; returns the screen text.
pub(crate) fn render_frame(state: &State, snap: &Snapshot, theme: &Theme) -> String {
    TERM.with_borrow_mut(|term| {
        let Ok(frame) = term.draw(|f| gitmoot_ui::render(f, state, snap, theme));
        screen_text(frame.buffer)
    })
}

/// The machine's own limit for a frame: three bordered lists of plain text rows (a tree, a
/// detail, a transcript) drawn into the same kept 120×36 test terminal, with the same
/// buffer-to-text step as `render_frame`: the cheapest honest version of a frame of the
/// same size; the median of 200.
pub(crate) fn bare_frame_ms() -> f64 {
    use ratatui::layout::{Constraint, Layout};
    use ratatui::widgets::{Block, Borders, List};
    let lines: Vec<String> = (0..HEIGHT)
        .map(|i| format!("job-b{i:07}/l{i} [succeeded] reviewer (leg) → approved"))
        .collect();
    let mut times = Vec::with_capacity(200);
    for _ in 0..200 {
        let t = Instant::now();
        let screen = TERM.with_borrow_mut(|term| {
            let Ok(frame) = term.draw(|f| {
                let [left, mid, right] = Layout::horizontal([
                    Constraint::Percentage(40),
                    Constraint::Percentage(30),
                    Constraint::Percentage(30),
                ])
                .areas(f.area());
                for (area, title) in [(left, "Roots"), (mid, "Detail"), (right, "Chat")] {
                    let items = lines.iter().map(String::as_str);
                    f.render_widget(
                        List::new(items).block(Block::default().borders(Borders::ALL).title(title)),
                        area,
                    );
                }
            });
            screen_text(frame.buffer)
        });
        std::hint::black_box(screen);
        times.push(ms(t.elapsed()));
    }
    median(times)
}
