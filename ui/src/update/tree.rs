//! The job tree's folds (fold, unfold, toggle, walk to parent or child) and the DAG's root.

use super::select::record_hints;
use crate::rows;
use crate::state::{Pane, State};
use crate::view::Snapshot;

/// The selected tree row: id, has children, folded, parent id, first child id.
type RowInfo = (String, bool, bool, Option<String>, Option<String>);

fn tree_row_info(state: &State, snap: &Snapshot) -> Option<RowInfo> {
    let rows = rows::tree_rows(snap, state);
    let i = rows
        .iter()
        .position(|r| Some(&r.node.id) == state.sel.tree.as_ref())?;
    let r = rows[i];
    let parent = rows[..i]
        .iter()
        .rev()
        .find(|p| p.level + 1 == r.level)
        .map(|p| p.node.id.clone());
    let first_child = rows
        .get(i + 1)
        .filter(|c| c.level == r.level + 1)
        .map(|c| c.node.id.clone());
    Some((
        r.node.id.clone(),
        !r.node.children.is_empty(),
        r.folded,
        parent,
        first_child,
    ))
}

pub(super) fn fold(state: &mut State, snap: &Snapshot, folding: bool) {
    if state.focus != Pane::Tree {
        return;
    }
    let Some((id, has_kids, folded, parent, first_child)) = tree_row_info(state, snap) else {
        return;
    };
    if folding {
        if has_kids && !folded {
            state.folds.insert(id, true);
        } else if let Some(p) = parent {
            state.sel.tree = Some(p);
        }
    } else if has_kids && folded {
        state.folds.insert(id, false);
    } else if let Some(c) = first_child {
        state.sel.tree = Some(c);
    }
    record_hints(state, snap);
}

pub(super) fn toggle_fold(state: &mut State, snap: &Snapshot) {
    if let Some((id, true, folded, _, _)) = tree_row_info(state, snap) {
        state.folds.insert(id, !folded);
    }
}

pub(super) fn switch_root(state: &mut State, snap: &Snapshot, d: isize) {
    let roots = state.tree_sort.roots(snap, state.now_ms);
    if roots.is_empty() {
        return;
    }
    let cur = rows::dag_root(snap, state).map(|r| r.id.clone());
    let i = cur
        .and_then(|c| roots.iter().position(|r| r.id == c))
        .unwrap_or(0) as isize;
    let j = (i + d).clamp(0, roots.len() as isize - 1) as usize;
    state.dag_root = Some(roots[j].id.clone());
    state.sel.dag = Some(roots[j].id.clone());
}
