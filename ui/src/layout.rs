//! Where each pane goes on screen, shared by `render` and mouse hit-testing in `update`.
//!
//! Owns the split: status bar on top, context footer at the bottom with the one-line
//! message bar just above it (results never paint over a pane), Attention over the
//! Job tree on the left, one right-column pane (DAG, Threads or Detail) on the right; the
//! zoomed pane takes the whole body; under 80 columns Attention (while anything waits)
//! stays on top of the focused pane.
//! Must not draw.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::rows;
use crate::state::{Pane, State};
use crate::view::{AttentionItem, Snapshot};
use crate::widgets;

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

/// `column` split into Attention, as tall as its items want up to `percent` of it, and
/// what goes below.
fn attention_split(
    column: Rect,
    items: &[&AttentionItem],
    state: &State,
    percent: u16,
) -> [Rect; 2] {
    let sel = widgets::attention::selected(state, items);
    let wanted = widgets::attention::wanted(items, sel, column.width.saturating_sub(2) as usize);
    let att_h = wanted.min(column.height * percent / 100).max(3);
    Layout::vertical([Constraint::Length(att_h), Constraint::Min(1)]).areas(column)
}

pub fn areas(area: Rect, state: &State, snap: &Snapshot) -> Areas {
    let [status, body, message, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let items = rows::attention_rows(snap, state);
    let panes = if state.zoom || (area.width < 80 && items.is_empty()) {
        vec![(state.focus, body)]
    } else if area.width < 80 {
        // What needs a human survives every size: Attention first, then the focused pane
        // (the tree while Attention has the focus).
        let below = match state.focus {
            Pane::Attention => Pane::Tree,
            p => p,
        };
        let [att, rest] = attention_split(body, &items, state, 60);
        vec![(Pane::Attention, att), (below, rest)]
    } else {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(body);
        let [att, tree] = attention_split(left, &items, state, 45);
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
