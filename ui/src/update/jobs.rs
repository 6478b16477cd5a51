//! Commands on the selected job or root: copy it, kill its root, cancel it.
//! Writes nothing itself: kill and cancel ask first, and `overlay` builds their actions.

use super::refuse_readonly;
use super::select::selected_job;
use crate::action::{Action, Term};
use crate::rows;
use crate::sanitize;
use crate::state::{Confirm, Overlay, Pane, State, ToastLevel};
use crate::view::{AttentionKind, JobState, Snapshot};

pub(super) fn copy(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    let text = match state.focus {
        Pane::Attention => rows::attention_rows(snap, state)
            .into_iter()
            .find(|a| state.sel.attention.as_deref() == Some(a.key().as_str()))
            .map(|a| match &a.kind {
                AttentionKind::Ask { questions } => {
                    let q = questions.first().map(|q| q.id.as_str()).unwrap_or("q1");
                    format!("gitmoot job answer {} \"{q}: \"", a.job_id)
                }
                AttentionKind::Failure { .. } => format!("gitmoot job resume {} retry", a.job_id),
                AttentionKind::Preflight { .. } => format!("gitmoot job events {}", a.job_id),
                AttentionKind::Overlap { .. } => "gitmoot worktree list".to_string(),
                AttentionKind::Conflict { on_base: true, .. } => {
                    format!("gitmoot job rebase {}", a.job_id)
                }
                AttentionKind::Conflict { .. } => "gitmoot worktree list".to_string(),
                AttentionKind::Stall { .. } => format!("gitmoot job logs {}", a.job_id),
            }),
        Pane::Threads => state.sel.thread.clone(),
        _ => selected_job(state, snap),
    };
    match text {
        Some(t) => {
            state.notify(ToastLevel::Info, format!("copied {t}"));
            out.push(Action::Term(Term::Copy(t)));
        }
        None => state.notify(ToastLevel::Info, "nothing selected to copy"),
    }
}

pub(super) fn kill(state: &mut State, snap: &Snapshot) {
    if refuse_readonly(state, "kill") {
        return;
    }
    let root = match state.focus {
        Pane::Attention => rows::attention_rows(snap, state)
            .into_iter()
            .find(|a| state.sel.attention.as_deref() == Some(a.key().as_str()))
            .and_then(|a| snap.root(&a.root_id)),
        Pane::Dag => rows::dag_root(snap, state),
        _ => selected_job(state, snap).and_then(|j| snap.root_of(&j)),
    };
    let Some(root) = root else {
        state.notify(ToastLevel::Info, "select a job to kill its root");
        return;
    };
    if root.state.is_terminal() {
        state.notify(
            ToastLevel::Info,
            format!("{} already ended ({})", root.id, root.state.as_str()),
        );
        return;
    }
    let r = root.tree.rollup();
    state.overlay = Some(Overlay::Confirm(Confirm::KillRoot {
        root_id: root.id.clone(),
        title: sanitize::clean_line(&root.title),
        queued: r.queued,
        running: r.running,
    }));
}

pub(super) fn cancel_job(state: &mut State, snap: &Snapshot) {
    if refuse_readonly(state, "cancel") {
        return;
    }
    let Some(id) = selected_job(state, snap) else {
        return;
    };
    match snap.job(&id) {
        Some(j) if !j.state.is_terminal() || j.state == JobState::Blocked => {
            state.overlay = Some(Overlay::Confirm(Confirm::CancelJob { job_id: id }));
        }
        Some(j) => state.notify(
            ToastLevel::Info,
            format!("{id} is already {}", j.state.as_str()),
        ),
        None => {}
    }
}
