//! The `:` command line shown in place of the footer: CLI verbs without `gitmoot`.
//!
//! Owns that one line; running the command is the glue's (`Action::RunCommand`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::state::State;
use crate::theme::{Slot, Theme};

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let text = state.command.clone().unwrap_or_default();
    let hint = if text.is_empty() {
        "   e.g. job kill job-abc · job resume job-abc retry · chat send t hi"
    } else {
        ""
    };
    let line = Line::from(vec![
        Span::styled(" :", theme.style(Slot::FooterKey)),
        Span::styled(text, theme.style(Slot::InputText)),
        Span::styled("▏", theme.style(Slot::Accent)),
        Span::styled(hint, theme.style(Slot::FooterDesc)),
        Span::styled("   Enter run · Esc cancel", theme.style(Slot::FooterDesc)),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}
