//! The `:` command line shown in place of the footer: CLI verbs without `gitmoot`.
//!
//! Owns that one line and Tab's candidates after it; running the command is the glue's
//! (`Write::RunCommand`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::state::State;
use crate::theme::{Slot, Theme};

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let text = state.command.clone().unwrap_or_default();
    let hint = if !state.candidates.is_empty() {
        format!("   {}", state.candidates.join(" "))
    } else if text.is_empty() {
        "   e.g. job list · job show job-abc · Tab completes · ↑/↓ history".to_string()
    } else {
        String::new()
    };
    let line = Line::from(vec![
        Span::styled(" :", theme.style(Slot::FooterKey)),
        Span::styled(text, theme.style(Slot::InputText)),
        Span::styled("▏", theme.style(Slot::Accent)),
        Span::styled(hint, theme.style(Slot::FooterDesc)),
        Span::styled("   Enter run · Esc cancel", theme.style(Slot::FooterDesc)),
        Span::styled(
            if state.readonly {
                "   (read-only: read verbs only)"
            } else {
                ""
            },
            theme.style(Slot::FooterDesc),
        ),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}
