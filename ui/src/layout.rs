//! Where each pane goes on screen, shared by `render` and mouse hit-testing in `update`.
//!
//! Owns the split: status bar on top, context footer at the bottom with the one-line
//! message bar just above it (results never paint over a pane), Attention over the
//! Job tree on the left, one right-column pane (DAG, Threads or Detail) on the right; the
//! zoomed (or, on a terminal under 80 columns, the focused) pane takes the whole body.
//! Must not draw.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::rows;
use crate::state::{Pane, State};
use crate::view::Snapshot;

/// Screen regions for one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Areas {
    pub status: Rect,
    /// Results and errors, one line; the whole text is in the messages log.
    pub message: Rect,
    pub footer: Rect,
    pub body: Rect,
    pub panes: Vec<(Pane, Rect)>,
}

impl Areas {
    pub fn pane(&self, p: Pane) -> Option<Rect> {
        self.panes
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, r)| r)
            .copied()
    }

    pub fn pane_at(&self, col: u16, row: u16) -> Option<(Pane, Rect)> {
        self.panes
            .iter()
            .find(|(_, r)| col >= r.x && col < r.x + r.width && row >= r.y && row < r.y + r.height)
            .copied()
    }
}

/// Lines each attention item takes (header, question or reason, choices or why).
pub const ATTENTION_ITEM_LINES: u16 = 3;

pub fn areas(area: Rect, state: &State, snap: &Snapshot) -> Areas {
    let [status, body, message, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let panes = if state.zoom || area.width < 80 {
        vec![(state.focus, body)]
    } else {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(body);
        let items = rows::attention_rows(snap, state).len() as u16;
        let wanted = 2 + items.max(1) * ATTENTION_ITEM_LINES + items.saturating_sub(1);
        let att_h = wanted.min(left.height * 45 / 100).max(3);
        let [att, tree] =
            Layout::vertical([Constraint::Length(att_h), Constraint::Min(1)]).areas(left);
        vec![
            (Pane::Attention, att),
            (Pane::Tree, tree),
            (state.right_pane(), right),
        ]
    };
    Areas {
        status,
        message,
        footer,
        body,
        panes,
    }
}
