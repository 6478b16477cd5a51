//! The grouped view's parts of the Job tree pane: the counts in its title and the heading
//! over each group (`groups` decides which root goes where).

use ratatui::text::{Line, Span};

use crate::groups::{self, Group};
use crate::theme::{Slot, Theme};
use crate::view::Snapshot;

/// The pane title's note: every group with its count.
pub fn note(snap: &Snapshot, now: i64) -> String {
    let n = groups::counts(snap, now);
    Group::ALL
        .iter()
        .zip(n)
        .map(|(g, n)| format!("{} {n}", g.title().to_lowercase()))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The line over a group's first root.
pub fn heading(group: Group, count: usize, width: usize, theme: &Theme) -> Line<'static> {
    let slot = match group {
        Group::NeedsYou => Slot::AttentionAsk,
        Group::Working => Slot::JobRunning,
        Group::DoneToday => Slot::JobSucceeded,
    };
    let text = format!(" {} ({count}) ", group.title());
    let rule = "─".repeat(width.saturating_sub(super::str_width(&text) + 1));
    Line::from(vec![
        Span::styled(text, theme.style(slot)),
        Span::styled(rule, theme.style(Slot::Muted)),
    ])
}
