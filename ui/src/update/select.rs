//! Selections on real rows: reconciled on each snapshot, followed from attention, read back.

use crate::action::{Action, Load};
use crate::rows;
use crate::state::{Pane, State};
use crate::view::{AttentionKind, Snapshot};

pub(super) fn arrived(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    state.now_ms = state.now_ms.max(snap.now_ms);
    // Attention first: until the operator takes the wheel, a gate that appears pulls focus.
    if state.landed && !state.touched && !snap.attention.is_empty() {
        state.focus = Pane::Attention;
    }
    if !state.landed {
        state.landed = true;
        state.focus = if snap.attention.is_empty() {
            Pane::Tree
        } else {
            Pane::Attention
        };
    }
    reconcile(state, snap);
    follow_attention(state, snap, out);
    if let Some(t) = state.sel.thread.clone()
        && snap.transcript.as_ref().map(|x| &x.thread_id) != Some(&t)
    {
        out.push(Action::Load(Load::Thread(t)));
    }
    if let Some(j) = state.detail_job.clone()
        && snap.detail.as_ref().map(|d| &d.job_id) != Some(&j)
    {
        out.push(Action::Load(Load::Detail(j)));
    }
}

/// Keeps every selection on an existing row: the same id if it is still visible, else the
/// row at the old index (its neighbour), else the first.
/// Focuses the Job tree filtered by `filter` (empty for none) with `job` selected (the
/// current selection kept when None): where the Agents pane and the Usage view send Enter.
pub(super) fn show_in_tree(
    state: &mut State,
    snap: &Snapshot,
    filter: String,
    job: Option<String>,
) {
    state.filter = filter;
    if job.is_some() {
        state.sel.tree = job;
    }
    state.focus = Pane::Tree;
    reconcile(state, snap);
}

pub(super) fn reconcile(state: &mut State, snap: &Snapshot) {
    let ids: Vec<String> = rows::attention_rows(snap, state)
        .iter()
        .map(|a| a.key())
        .collect();
    state.sel.attention = pick(
        &ids,
        state.sel.attention.take(),
        state.sel.hints.get(&Pane::Attention).copied(),
    );
    let ids: Vec<String> = rows::tree_rows(snap, state)
        .iter()
        .map(|r| r.node.id.clone())
        .collect();
    // Attention first: with no selection yet, the tree starts on the root that waits longest.
    let first_gate = rows::attention_rows(snap, state)
        .first()
        .map(|a| a.root_id.clone());
    let current = state.sel.tree.take().or(first_gate);
    state.sel.tree = pick(&ids, current, state.sel.hints.get(&Pane::Tree).copied());
    let ids: Vec<String> = rows::thread_rows(snap, state)
        .iter()
        .map(|t| t.id.clone())
        .collect();
    state.sel.thread = pick(
        &ids,
        state.sel.thread.take(),
        state.sel.hints.get(&Pane::Threads).copied(),
    );
    let ids: Vec<String> = rows::inbox_rows(snap)
        .iter()
        .map(|i| i.agent.clone())
        .collect();
    state.sel.inbox = pick(&ids, state.sel.inbox.take(), None);
    let ids: Vec<String> = dag_ids(snap, state);
    state.sel.dag = pick(
        &ids,
        state.sel.dag.take(),
        state.sel.hints.get(&Pane::Dag).copied(),
    );
    let seqs: Vec<u64> = rows::message_rows(snap, state)
        .iter()
        .map(|m| m.seq)
        .collect();
    state.sel.message = match state.sel.message {
        Some(s) if seqs.contains(&s) => Some(s),
        _ => seqs.last().copied(),
    };
    record_hints(state, snap);
}

/// The DAG (and the drawer, if open) follow the selected attention item: its root, and
/// the node the item is about (the failed leg, or the job that asked).
pub(super) fn follow_attention(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    if state.focus != Pane::Attention {
        return;
    }
    let Some(item) = selected_gate(state, snap) else {
        return;
    };
    let node = subject(item);
    state.dag_root = Some(item.root_id.clone());
    if state.right == Pane::Detail && state.detail_job.as_ref() != Some(&node) {
        state.detail_job = Some(node.clone());
        state.detail_scroll = 0;
        state.activity_sel = None;
        state.activity_open = false;
        out.push(Action::Load(Load::Detail(node.clone())));
    }
    state.sel.dag = Some(node);
}

fn pick(ids: &[String], current: Option<String>, hint: Option<usize>) -> Option<String> {
    match current {
        Some(c) if ids.contains(&c) => Some(c),
        Some(_) => hint
            .map(|h| h.min(ids.len().saturating_sub(1)))
            .and_then(|i| ids.get(i).cloned()),
        None => ids.first().cloned(),
    }
}

pub(super) fn record_hints(state: &mut State, snap: &Snapshot) {
    let idx = |ids: Vec<String>, cur: &Option<String>| {
        cur.as_ref().and_then(|c| ids.iter().position(|i| i == c))
    };
    let a = idx(
        rows::attention_rows(snap, state)
            .iter()
            .map(|a| a.key())
            .collect(),
        &state.sel.attention,
    );
    let t = idx(
        rows::tree_rows(snap, state)
            .iter()
            .map(|r| r.node.id.clone())
            .collect(),
        &state.sel.tree,
    );
    let th = idx(
        rows::thread_rows(snap, state)
            .iter()
            .map(|t| t.id.clone())
            .collect(),
        &state.sel.thread,
    );
    let d = idx(dag_ids(snap, state), &state.sel.dag);
    for (p, i) in [
        (Pane::Attention, a),
        (Pane::Tree, t),
        (Pane::Threads, th),
        (Pane::Dag, d),
    ] {
        if let Some(i) = i {
            state.sel.hints.insert(p, i);
        }
    }
}

pub(super) fn dag_ids(snap: &Snapshot, state: &State) -> Vec<String> {
    rows::dag_root(snap, state)
        .map(|r| {
            rows::dag_nodes(r)
                .iter()
                .map(|n| n.node.id.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// The job the focused pane points at.
pub(super) fn selected_job(state: &State, snap: &Snapshot) -> Option<String> {
    match state.focus {
        Pane::Attention => selected_gate(state, snap).map(|a| a.job_id.clone()),
        Pane::Tree => state.sel.tree.clone(),
        Pane::Dag => state.sel.dag.clone(),
        Pane::Detail => state.detail_job.clone(),
        Pane::Agents => selected_agent(state, snap).and_then(|a| a.now_job.clone()),
        Pane::Threads => {
            let m = rows::message_rows(snap, state)
                .into_iter()
                .find(|m| Some(m.seq) == state.sel.message)?;
            m.promoted_job_id.clone()
        }
    }
}

/// The job an attention item is about: the failed leg, or the job that asked or waits.
fn subject(item: &crate::view::AttentionItem) -> String {
    match &item.kind {
        AttentionKind::Failure { failed_leg, .. } => failed_leg.clone(),
        AttentionKind::Ask { .. }
        | AttentionKind::Preflight { .. }
        | AttentionKind::Overlap { .. }
        | AttentionKind::Conflict { .. }
        | AttentionKind::Stall { .. } => item.job_id.clone(),
    }
}

/// The job the drawer opens on when focused (`5`): what the selected attention item is
/// about, as the drawer then follows that selection; else the focused pane's selected job.
/// (`d` opens the selected item's own job, the gate's coordinator.)
pub(super) fn detail_target(state: &State, snap: &Snapshot) -> Option<String> {
    match state.focus {
        Pane::Attention => selected_gate(state, snap).map(subject),
        _ => selected_job(state, snap),
    }
}

pub(super) fn selected_gate<'a>(
    state: &State,
    snap: &'a Snapshot,
) -> Option<&'a crate::view::AttentionItem> {
    if state.focus != Pane::Attention {
        return None;
    }
    rows::attention_rows(snap, state)
        .into_iter()
        .find(|a| state.sel.attention.as_deref() == Some(a.key().as_str()))
}

/// The Agents pane's selected row (the first while none is chosen).
pub(super) fn selected_agent<'a>(
    state: &State,
    snap: &'a Snapshot,
) -> Option<&'a crate::view::AgentLive> {
    let name = state.sel.agent.as_deref();
    snap.agents
        .iter()
        .find(|a| Some(a.name.as_str()) == name)
        .or(snap.agents.first())
}
