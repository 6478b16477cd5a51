//! The `/` filter line shown in place of the footer while the operator types a filter.
//!
//! Owns that one line; matching is `rows::Filter`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::state::State;
use crate::theme::{Slot, Theme};

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let line = Line::from(vec![
        Span::styled(" / ", theme.style(Slot::FooterKey)),
        Span::styled(state.filter.clone(), theme.style(Slot::FilterMatch)),
        Span::styled("▏", theme.style(Slot::Accent)),
        Span::styled(
            "   fuzzy by id, agent, repo, state · Enter keep · Esc clear",
            theme.style(Slot::FooterDesc),
        ),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}
