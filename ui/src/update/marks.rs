//! Marking tree rows to act on many at once: `m` toggles the selected job, `M` marks every
//! visible row (only the `/`-filtered ones while a filter is on) or, when they all are
//! marked already, clears the marks. With marks, cancel, kill, retry, land and discard ask
//! once for all of them (`Confirm::Bulk`), and answer asks once which choice they all get
//! (`Confirm::BulkAnswer`), one line per job saying what will happen to it; the executor
//! sends them to the function `job … --where` calls (`engine::bulk::apply`,
//! `worktree::many::apply`, `chat::answer::answer_many`).

use super::refuse_readonly;
use super::select::selected_job;
use crate::action::BulkVerb;
use crate::rows;
use crate::state::{Confirm, Overlay, Pane, State, ToastLevel};
use crate::view::{AttentionKind, JobState, Question, Snapshot};
use crate::work::WorktreeState;

/// Whether a cancel, kill or retry in this pane means the marked jobs.
pub(super) fn active(state: &State) -> bool {
    state.focus == Pane::Tree && !state.marks.is_empty()
}

/// `m`: the selected job in or out of the marks; the cursor steps on so runs of rows are
/// marked with one key each.
pub(super) fn toggle(state: &mut State, snap: &Snapshot) {
    let Some(id) = selected_job(state, snap) else {
        return;
    };
    if !state.marks.remove(&id) {
        state.marks.insert(id.clone());
    }
    let rows = rows::tree_rows(snap, state);
    if let Some(i) = rows.iter().position(|r| r.node.id == id)
        && let Some(next) = rows.get(i + 1)
    {
        state.sel.tree = Some(next.node.id.clone());
    }
}

/// `M`: every visible row marked, or the marks cleared when that is already so.
pub(super) fn mark_all(state: &mut State, snap: &Snapshot) {
    let visible: Vec<String> = rows::tree_rows(snap, state)
        .iter()
        .map(|r| r.node.id.clone())
        .collect();
    if !visible.is_empty() && visible.iter().all(|id| state.marks.contains(id)) {
        return clear(state);
    }
    state.marks.extend(visible);
    let n = state.marks.len();
    state.notify(ToastLevel::Info, format!("{n} marked"));
}

/// Esc in the tree with marks: they are dropped before anything else Esc does.
pub(super) fn clear(state: &mut State) {
    state.marks.clear();
    state.notify(ToastLevel::Info, "marks cleared");
}

/// One confirmation for `verb` on every marked job still on screen, in tree order (the
/// selected job alone when nothing is marked).
pub(super) fn confirm(state: &mut State, snap: &Snapshot, verb: BulkVerb) {
    if refuse_readonly(state, verb.as_str()) {
        return;
    }
    let job_ids = chosen(state, snap);
    let mut lines = Vec::new();
    let mut roots = Vec::new();
    for id in &job_ids {
        match verb {
            BulkVerb::Kill => {
                let Some(root) = snap.root_of(id) else {
                    continue;
                };
                if roots.contains(&root.id) {
                    continue;
                }
                roots.push(root.id.clone());
                lines.push(kill_line(root.id.as_str(), root));
            }
            BulkVerb::Land | BulkVerb::Discard => lines.push(work_line(snap, verb, id)),
            _ => lines.push(job_line(snap, verb, id)),
        }
    }
    if lines.is_empty() {
        state.notify(ToastLevel::Info, "no marked job is on screen");
        return;
    }
    state.overlay = Some(Overlay::Confirm(Confirm::Bulk {
        verb,
        job_ids,
        lines,
    }));
}

/// The marked jobs still on screen, in tree order (roots newest first, so the dialog reads
/// like the pane), or the selected job alone when nothing is marked; the marks of jobs no
/// longer on screen are dropped.
fn chosen(state: &mut State, snap: &Snapshot) -> Vec<String> {
    let chosen = match state.marks.is_empty() {
        true => selected_job(state, snap).into_iter().collect(),
        false => state.marks.clone(),
    };
    let mut job_ids = Vec::new();
    for r in &snap.roots {
        r.tree.walk(&mut |n| {
            if chosen.contains(&n.id) {
                job_ids.push(n.id.clone());
            }
        });
    }
    state.marks.retain(|id| job_ids.contains(id));
    job_ids
}

/// `a` in the tree: one confirmation giving every marked job (or the selected one) the same
/// choice, picked in the dialog among the choices of the selected row's question (else the
/// first marked job's that has one).
pub(super) fn answer(state: &mut State, snap: &Snapshot) {
    if refuse_readonly(state, "answer") {
        return;
    }
    let job_ids = chosen(state, snap);
    let selected = selected_job(state, snap);
    let choices = selected
        .iter()
        .chain(&job_ids)
        .filter_map(|id| questions(snap, id))
        .find_map(|qs| qs.iter().find(|q| !q.choices.is_empty()))
        .map(|q| q.choices.clone())
        .unwrap_or_default();
    if choices.is_empty() {
        state.notify(
            ToastLevel::Info,
            "no chosen job asks a question with choices; answer free text in the Attention pane",
        );
        return;
    }
    let lines = choices
        .iter()
        .map(|c| job_ids.iter().map(|id| answer_line(snap, id, c)).collect())
        .collect();
    state.overlay = Some(Overlay::Confirm(Confirm::BulkAnswer {
        job_ids,
        choices,
        at: 0,
        lines,
    }));
}

/// The questions `id` waits on, when it waits on an ask round.
fn questions<'a>(snap: &'a Snapshot, id: &str) -> Option<&'a [Question]> {
    snap.attention.iter().find_map(|a| match &a.kind {
        AttentionKind::Ask { questions } if a.job_id == id => Some(questions.as_slice()),
        _ => None,
    })
}

/// What giving `choice` to `id`'s questions will do; the engine has the last word.
fn answer_line(snap: &Snapshot, id: &str, choice: &str) -> String {
    let Some(qs) = questions(snap, id) else {
        return format!("refused {id}: not waiting on a question");
    };
    let offers = |q: &&Question| q.choices.iter().any(|c| c.eq_ignore_ascii_case(choice));
    match qs.iter().find(|q| !offers(q)) {
        Some(q) if q.choices.is_empty() => {
            format!("refused {id}: {} takes free text, not a choice", q.id)
        }
        Some(q) => format!("refused {id}: {} does not offer {choice:?}", q.id),
        None => format!("answer {id} {choice:?} (it resumes)"),
    }
}

/// What land or discard will do to one write job's work, from its worktree row.
fn work_line(snap: &Snapshot, verb: BulkVerb, id: &str) -> String {
    let Some(w) = snap.work.rows.get(id) else {
        return format!("refused {id}: not a write job (it has no worktree)");
    };
    match w.state {
        Some(WorktreeState::Open) => {}
        Some(s) => return format!("refused {id}: its work was already {}", s.as_str()),
        None => return format!("refused {id}: its worktree is not open yet"),
    }
    if let Some(j) = snap.job(id)
        && matches!(j.state, JobState::Queued | JobState::Running)
    {
        return format!(
            "refused {id}: {}; {verb} it once it has ended",
            j.state.as_str()
        );
    }
    match verb {
        BulkVerb::Land => format!(
            "land {id}: merges branch {} into {} of repo {} (refused, changing nothing, if it conflicts)",
            w.branch, w.base, w.repo
        ),
        _ => format!(
            "discard {id}: deletes its worktree and branch {}; loses {}",
            w.branch,
            w.loss.as_deref().unwrap_or("all its work not landed")
        ),
    }
}

fn kill_line(id: &str, root: &crate::view::RootView) -> String {
    if root.state.is_terminal() {
        return format!("refused {id}: already {}", root.state.as_str());
    }
    let r = root.tree.rollup();
    format!(
        "kill tree {id}: {} queued cancelled, {} running finish their turn, then one finalize",
        r.queued, r.running
    )
}

/// What cancel or retry will do to one job, as far as the screen knows; the engine has
/// the last word and the outcome names any job it refused.
fn job_line(snap: &Snapshot, verb: BulkVerb, id: &str) -> String {
    let Some(j) = snap.job(id) else {
        return format!("{verb} {id}");
    };
    let state = j.state.as_str();
    let waits_for_human = j.state == JobState::Interrupted
        || snap.attention.iter().any(|a| {
            matches!(&a.kind, AttentionKind::Failure { failed_leg, .. } if failed_leg == id)
                || (a.job_id == id && matches!(a.kind, AttentionKind::Failure { .. }))
        });
    match verb {
        BulkVerb::Cancel if j.state.is_terminal() => format!("refused {id}: already {state}"),
        BulkVerb::Cancel => {
            let then = match j.state {
                JobState::Queued => "it never starts",
                JobState::Running => "its process is terminated",
                _ => "its wait ends",
            };
            format!("cancel {id} ({state}, {}): {then}", j.agent)
        }
        BulkVerb::Retry if waits_for_human => {
            format!(
                "retry {id} ({state}, {}): runs again as a new attempt",
                j.agent
            )
        }
        _ => format!("refused {id}: nothing waits for a human to {verb} it ({state})"),
    }
}
