//! Mouse clicks and wheel turns, hit-tested against the layout; ignored under an overlay.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::panes::{focus, step};
use super::select::{follow_attention, record_hints};
use crate::action::Action;
use crate::layout;
use crate::rows;
use crate::state::{Pane, State};
use crate::view::Snapshot;
use crate::widgets;

pub(super) fn mouse(state: &mut State, snap: &Snapshot, m: MouseEvent, out: &mut Vec<Action>) {
    if state.overlay.is_some() {
        return;
    }
    let area = Rect::new(0, 0, state.size.0, state.size.1);
    let a = layout::areas(area, state, snap);
    let Some((pane, rect)) = a.pane_at(m.column, m.row) else {
        return;
    };
    match m.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            if pane != state.focus {
                focus(state, snap, pane, out);
            }
            let inner_row = m.row.saturating_sub(rect.y + 1) as usize;
            let height = rect.height.saturating_sub(2) as usize;
            if pane == Pane::Tree {
                let rows = rows::tree_rows(snap, state);
                let sel = rows
                    .iter()
                    .position(|r| Some(&r.node.id) == state.sel.tree.as_ref())
                    .unwrap_or(0);
                let header = widgets::tree::HEADER_ROWS as usize;
                let offset = rows::scroll_offset(sel, height.saturating_sub(header));
                let hit = inner_row
                    .checked_sub(header)
                    .and_then(|i| rows.get(offset + i));
                if let Some(r) = hit {
                    state.sel.tree = Some(r.node.id.clone());
                    state.dag_root = None;
                }
                record_hints(state, snap);
            } else if pane == Pane::Attention {
                let items = rows::attention_rows(snap, state);
                let sel = widgets::attention::selected(state, &items);
                let width = rect.width.saturating_sub(2) as usize;
                let hit = widgets::attention::placement(&items, sel, width, height)
                    .into_iter()
                    .rfind(|(_, top)| *top <= inner_row);
                if let Some((i, _)) = hit {
                    state.sel.attention = Some(items[i].key());
                }
                follow_attention(state, snap, out);
            }
        }
        MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
            let d = if m.kind == MouseEventKind::ScrollDown {
                1
            } else {
                -1
            };
            let prev = state.focus;
            state.focus = pane;
            step(state, snap, d, out);
            state.focus = prev;
        }
        _ => {}
    }
}
