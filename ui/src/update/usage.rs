//! The Usage view's keys (`$`): moving over its roots then its agents, and Enter opening
//! the selected one in the Job tree (a root selected, an agent's jobs filtered as `/`
//! would).
//!
//! Owns the keys only; the figures are the loader's (`report::usage`, the CLI's words).

use crate::action::{Action, Load};
use crate::keymap::{Command, Context, KeyChord};
use crate::state::{Overlay, State};
use crate::view::Snapshot;

/// Opens the view and asks the loader for its figures.
pub(super) fn open(state: &mut State, out: &mut Vec<Action>) {
    state.overlay = Some(Overlay::Usage { sel: 0 });
    out.push(Action::Load(Load::Usage));
}

/// Handles one key in the open view; returns whether it stays open.
pub(super) fn key(state: &mut State, snap: &Snapshot, sel: &mut usize, chord: KeyChord) -> bool {
    let n = snap
        .usage
        .as_ref()
        .map_or(0, |u| u.roots.len() + u.agents.len());
    match state.keymap.lookup(Context::Global, chord) {
        Some(Command::Down) => *sel = (*sel + 1).min(n.saturating_sub(1)),
        Some(Command::Up) => *sel = sel.saturating_sub(1),
        Some(Command::Open) => return !open_row(state, snap, *sel),
        Some(Command::Back | Command::Quit | Command::Usage) => return false,
        _ => {}
    }
    true
}

/// Opens row `i` (the roots first, then the agents) in the tree; whether there was one.
fn open_row(state: &mut State, snap: &Snapshot, i: usize) -> bool {
    let Some(u) = &snap.usage else {
        return false;
    };
    let agent = i.checked_sub(u.roots.len()).and_then(|j| u.agents.get(j));
    let (filter, job) = match (u.roots.get(i), agent) {
        (Some(root), _) => (String::new(), Some(root.key.clone())),
        (None, Some(agent)) => (agent.key.clone(), None),
        (None, None) => return false,
    };
    super::select::show_in_tree(state, snap, filter, job);
    true
}
