//! The Agents pane's keys: moving between agents and Enter showing an agent's jobs (the
//! Job tree, filtered to its name, as `/` would).

use super::select::{selected_agent as selected, show_in_tree};
use crate::state::State;
use crate::view::Snapshot;

pub(super) fn step(state: &mut State, snap: &Snapshot, delta: isize) {
    if snap.agents.is_empty() {
        return;
    }
    let i = selected(state, snap)
        .and_then(|a| snap.agents.iter().position(|x| x.name == a.name))
        .unwrap_or(0) as isize;
    let j = i
        .saturating_add(delta)
        .clamp(0, snap.agents.len() as isize - 1) as usize;
    state.sel.agent = Some(snap.agents[j].name.clone());
}

/// Enter: the tree, filtered to the agent's jobs.
pub(super) fn open(state: &mut State, snap: &Snapshot) {
    let Some(a) = selected(state, snap) else {
        return;
    };
    show_in_tree(state, snap, a.name.clone(), a.now_job.clone());
}
