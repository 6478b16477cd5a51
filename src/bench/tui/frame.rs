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

/// Renders one frame of `snap` into a 120×36 test terminal; returns the screen text.
pub(crate) fn render_frame(state: &State, snap: &Snapshot, theme: &Theme) -> String {
    let Ok(mut term) = Terminal::new(TestBackend::new(WIDTH, HEIGHT));
    let Ok(frame) = term.draw(|f| gitmoot_ui::render(f, state, snap, theme));
    frame
        .buffer
        .content()
        .chunks(WIDTH as usize)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The machine's own limit for a frame: three bordered panes of plain text lines (a tree,
/// a detail, a transcript) drawn into a 120×36 test terminal with the same crates and the
/// same buffer-to-text step as `render_frame`; the median of 200.
pub(crate) fn bare_frame_ms() -> f64 {
    use ratatui::layout::{Constraint, Layout};
    use ratatui::widgets::{Block, Borders, Paragraph};
    let lines: Vec<String> = (0..HEIGHT)
        .map(|i| format!("job-b{i:07}/l{i} [succeeded] reviewer (leg) → approved"))
        .collect();
    let text = lines.join("\n");
    let mut times = Vec::with_capacity(200);
    for _ in 0..200 {
        let t = Instant::now();
        let Ok(mut term) = Terminal::new(TestBackend::new(WIDTH, HEIGHT));
        let Ok(frame) = term.draw(|f| {
            let [left, mid, right] = Layout::horizontal([
                Constraint::Percentage(40),
                Constraint::Percentage(30),
                Constraint::Percentage(30),
            ])
            .areas(f.area());
            for (area, title) in [(left, "Roots"), (mid, "Detail"), (right, "Chat")] {
                f.render_widget(
                    Paragraph::new(text.as_str())
                        .block(Block::default().borders(Borders::ALL).title(title)),
                    area,
                );
            }
        });
        let screen: String = frame
            .buffer
            .content()
            .chunks(WIDTH as usize)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n");
        std::hint::black_box(screen);
        times.push(ms(t.elapsed()));
    }
    median(times)
}
