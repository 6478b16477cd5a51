//! Attention gates: answering an ask, resuming (retry, continue, abort) a failure.
//! Writes nothing itself: the form or dialog it opens builds the action in `overlay`.

use super::panes::open_detail;
use super::select::selected_gate;
use super::{refuse_readonly, textarea};
use crate::action::{Action, ResumeVerb};
use crate::state::{AnswerField, Confirm, Overlay, State, ToastLevel};
use crate::view::{AttentionKind, Snapshot};

pub(super) fn answer(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    let Some(item) = selected_gate(state, snap) else {
        return;
    };
    match &item.kind {
        AttentionKind::Ask { questions } => {
            if refuse_readonly(state, "answering") {
                return;
            }
            let fields = questions
                .iter()
                .map(|q| AnswerField {
                    question: q.clone(),
                    choice: 0,
                    text: textarea("type the answer"),
                })
                .collect();
            state.overlay = Some(Overlay::Answer {
                job_id: item.job_id.clone(),
                fields,
                focus: 0,
            });
        }
        AttentionKind::Failure { failed_leg, .. } => {
            let leg = failed_leg.clone();
            open_detail(state, leg, out);
        }
        AttentionKind::Preflight { .. }
        | AttentionKind::Overlap { .. }
        | AttentionKind::Conflict { .. }
        | AttentionKind::Stall { .. } => {
            let job = item.job_id.clone();
            open_detail(state, job, out);
        }
    }
}

/// `l` on a stalled job: left running, its item gone until it stalls anew (no dialog:
/// nothing changes but the item).
pub(super) fn leave(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    let Some(item) = selected_gate(state, snap) else {
        return;
    };
    if !matches!(item.kind, AttentionKind::Stall { .. }) {
        state.notify(ToastLevel::Info, "leave applies to a stalled job");
        return;
    }
    if refuse_readonly(state, "leave") {
        return;
    }
    out.push(Action::Write(crate::action::Write::LeaveStall {
        job_id: item.job_id.clone(),
    }));
}

pub(super) fn resume(state: &mut State, snap: &Snapshot, verb: ResumeVerb) {
    let Some(item) = selected_gate(state, snap) else {
        return;
    };
    if !matches!(item.kind, AttentionKind::Failure { .. }) {
        state.notify(
            ToastLevel::Info,
            format!(
                "{} applies to failure escalations; this is a question (a answers)",
                verb.as_str()
            ),
        );
        return;
    }
    if refuse_readonly(state, verb.as_str()) {
        return;
    }
    let job_id = item.job_id.clone();
    state.overlay = Some(match verb {
        ResumeVerb::Abort => Overlay::Confirm(Confirm::Abort { job_id }),
        _ => Overlay::Instructions {
            job_id,
            verb,
            text: textarea("optional instructions for the agent"),
        },
    });
}
