//! The `/` filter line shown in place of the footer while the operator types a filter.
//!
//! Owns that one line; matching is `search::Filter`, which rows it narrows `rows`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::state::{FilterScope, State};
use crate::theme::{Slot, Theme};

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let what = match state.filter_scope {
        FilterScope::Jobs => "jobs by id, agent, repo, state, title",
        FilterScope::Threads => "threads and the open thread's messages",
        FilterScope::Activity => "the job's activity",
    };
    let line = Line::from(vec![
        Span::styled(" / ", theme.style(Slot::FooterKey)),
        Span::styled(state.filter.clone(), theme.style(Slot::FilterMatch)),
        Span::styled("▏", theme.style(Slot::Accent)),
        Span::styled(
            format!("   {what} · -f fuzzy · Enter keep · Esc clear"),
            theme.style(Slot::FooterDesc),
        ),
    ]);
    frame.render_widget(Paragraph::new(line), area);
}
