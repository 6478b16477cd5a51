//! Moving between and within panes: focus, back, sections, stepping, opening the selected row.

use ratatui::layout::Rect;

use super::select::{
    dag_ids, detail_target, follow_attention, reconcile, record_hints, selected_job,
};
use crate::action::{Action, Load};
use crate::layout;
use crate::live::DetailTab;
use crate::rows;
use crate::state::{Pane, Section, State};
use crate::view::Snapshot;
use crate::widgets;

pub(super) fn focus(state: &mut State, snap: &Snapshot, p: Pane, out: &mut Vec<Action>) {
    if p == Pane::Detail && state.focus != Pane::Detail {
        state.return_to = state.focus;
        if state.detail_job.is_none()
            && let Some(id) = detail_target(state, snap)
        {
            open_detail(state, id, out);
            return;
        }
    }
    if p.is_right() {
        state.right = p;
    }
    if p == Pane::Agents {
        out.push(Action::Load(Load::Agents));
    }
    state.focus = p;
    follow_attention(state, snap, out);
}

pub(super) fn back(state: &mut State, snap: &Snapshot) {
    if !state.filter.is_empty() {
        state.filter.clear();
        reconcile(state, snap);
    } else if state.zoom {
        state.zoom = false;
    } else if state.focus == Pane::Detail {
        state.focus = state.return_to;
        if state.right == Pane::Detail {
            state.right = Pane::Dag;
        }
    }
}

/// The next section of the Threads pane in direction `d`, skipping one with nothing to
/// select (no inboxes, a thread with no messages): the focus marker never lands where no
/// row can show it.
pub(super) fn next_section(state: &State, snap: &Snapshot, d: isize) -> Section {
    const ORDER: [Section; 3] = [Section::Threads, Section::Inbox, Section::Transcript];
    let has_rows = |s: Section| match s {
        Section::Threads => true,
        Section::Inbox => !rows::inbox_rows(snap).is_empty(),
        Section::Transcript => !rows::message_rows(snap, state).is_empty(),
    };
    let i = ORDER.iter().position(|x| *x == state.section).unwrap_or(0) as isize;
    (1..=3)
        .map(|k| ORDER[(i + d * k).rem_euclid(3) as usize])
        .find(|s| has_rows(*s))
        .unwrap_or(state.section)
}

fn moved(ids: &[String], current: Option<&str>, delta: isize) -> Option<String> {
    if ids.is_empty() {
        return None;
    }
    let i = current
        .and_then(|c| ids.iter().position(|x| x == c))
        .unwrap_or(0) as isize;
    let j = (i.saturating_add(delta)).clamp(0, ids.len() as isize - 1) as usize;
    Some(ids[j].clone())
}

pub(super) fn step(state: &mut State, snap: &Snapshot, delta: isize, out: &mut Vec<Action>) {
    match state.focus {
        Pane::Attention => {
            let ids: Vec<String> = rows::attention_rows(snap, state)
                .iter()
                .map(|a| a.key())
                .collect();
            state.sel.attention = moved(&ids, state.sel.attention.as_deref(), delta);
            follow_attention(state, snap, out);
        }
        Pane::Tree => {
            let ids: Vec<String> = rows::tree_rows(snap, state)
                .iter()
                .map(|r| r.node.id.clone())
                .collect();
            state.sel.tree = moved(&ids, state.sel.tree.as_deref(), delta);
            state.dag_root = None;
        }
        Pane::Dag => {
            let ids = dag_ids(snap, state);
            state.sel.dag = moved(&ids, state.sel.dag.as_deref(), delta);
        }
        Pane::Threads => match state.section {
            Section::Threads => {
                let ids: Vec<String> = rows::thread_rows(snap, state)
                    .iter()
                    .map(|t| t.id.clone())
                    .collect();
                let new = moved(&ids, state.sel.thread.as_deref(), delta);
                if new != state.sel.thread {
                    state.sel.thread = new.clone();
                    state.sel.message = None;
                    out.extend(new.map(|t| Action::Load(Load::Thread(t))));
                }
            }
            Section::Inbox => {
                let ids: Vec<String> = rows::inbox_rows(snap)
                    .iter()
                    .map(|i| i.agent.clone())
                    .collect();
                state.sel.inbox = moved(&ids, state.sel.inbox.as_deref(), delta);
            }
            Section::Transcript => {
                let seqs: Vec<String> = rows::message_rows(snap, state)
                    .iter()
                    .map(|m| m.seq.to_string())
                    .collect();
                let cur = state.sel.message.map(|s| s.to_string());
                state.sel.message =
                    moved(&seqs, cur.as_deref(), delta).and_then(|s| s.parse().ok());
            }
        },
        Pane::Detail if state.detail_tab == DetailTab::Activity => {
            step_activity(state, snap, delta);
        }
        Pane::Detail if state.detail_tab == DetailTab::Diff => {
            super::diff::step_diff(state, snap, delta);
        }
        Pane::Agents => super::agents::step(state, snap, delta),
        Pane::Detail => {
            let max = detail_max_scroll(state, snap) as isize;
            state.detail_scroll = (state.detail_scroll as isize)
                .saturating_add(delta)
                .clamp(0, max) as u16;
        }
    }
    record_hints(state, snap);
}

/// Moves the Activity tab's selection; reaching the newest step follows new ones again.
fn step_activity(state: &mut State, snap: &Snapshot, delta: isize) {
    let Some(d) = snap
        .detail
        .as_ref()
        .filter(|d| Some(&d.job_id) == state.detail_job.as_ref())
    else {
        return;
    };
    let steps = rows::activity_rows(&d.activity, state);
    let Some(cur) = widgets::activity::selected(state, &steps) else {
        return;
    };
    let last = steps.len() - 1;
    let next = (cur as isize).saturating_add(delta).clamp(0, last as isize) as usize;
    state.activity_sel = (next != last).then(|| steps[next].seq);
}

fn detail_max_scroll(state: &State, snap: &Snapshot) -> u16 {
    let area = Rect::new(0, 0, state.size.0, state.size.1);
    let a = layout::areas(area, state, snap);
    let r = a.pane(Pane::Detail).unwrap_or(a.body);
    let (w, h) = (
        r.width.saturating_sub(2) as usize,
        r.height.saturating_sub(2) as usize,
    );
    let lines = match &snap.detail {
        Some(d) => widgets::detail::content(d, w, &crate::theme::Theme::monochrome()).len(),
        None => 0,
    };
    lines.saturating_sub(h) as u16
}

pub(super) fn open_detail(state: &mut State, id: String, out: &mut Vec<Action>) {
    if state.focus != Pane::Detail {
        state.return_to = state.focus;
    }
    state.detail_job = Some(id.clone());
    state.detail_scroll = 0;
    state.activity_sel = None;
    state.activity_open = false;
    state.focus = Pane::Detail;
    state.right = Pane::Detail;
    out.push(Action::Load(Load::Detail(id)));
    if state.detail_tab == DetailTab::Diff {
        super::diff::enter_tab(state, out);
    }
}

pub(super) fn open(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    match (state.focus, state.section) {
        (Pane::Threads, Section::Threads) => {
            state.section = Section::Transcript;
            if state.sel.message.is_none() {
                state.sel.message = rows::message_rows(snap, state).last().map(|m| m.seq);
            }
            if let Some(t) = state.sel.thread.clone()
                && snap.transcript.as_ref().map(|x| &x.thread_id) != Some(&t)
            {
                out.push(Action::Load(Load::Thread(t)));
            }
        }
        (Pane::Threads, Section::Inbox) => {
            let item = rows::inbox_rows(snap)
                .into_iter()
                .find(|i| Some(&i.agent) == state.sel.inbox.as_ref())
                .and_then(|i| i.items.iter().rev().find(|x| !x.read).or(i.items.last()));
            if let Some(item) = item {
                state.sel.thread = Some(item.thread_id.clone());
                state.sel.message = Some(item.seq);
                state.section = Section::Transcript;
                out.push(Action::Load(Load::Thread(item.thread_id.clone())));
            }
        }
        (Pane::Agents, _) => super::agents::open(state, snap),
        _ => {
            if let Some(id) = selected_job(state, snap) {
                open_detail(state, id, out);
            }
        }
    }
}
