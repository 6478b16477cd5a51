//! The Diff tab's keys and the write-job verbs of the drawer: moving by line, file, hunk and
//! search match through the loaded diff, attaching review comments to lines, and asking
//! before `job land`, `job discard` and `job review`.
//!
//! Writes nothing itself: each verb opens a dialog that states its consequences, and the
//! dialog's `y` builds the action (`land_key`, `overlay::confirmed`). Never reloads the diff
//! to move in it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

use super::{refuse_readonly, textarea};
use crate::action::{Action, Load, Write};
use crate::keymap::{Command, Context, KeyChord};
use crate::layout;
use crate::live::DetailTab;
use crate::state::{Confirm, Overlay, Pane, State, ToastLevel};
use crate::view::Snapshot;
use crate::work::{DiffRow, DiffView, LandStrategy, ReviewComment, WorktreeState, keep_in_view};

/// The loaded diff of the drawer's job, if it is the one on screen.
pub(crate) fn diff_of<'a>(state: &State, snap: &'a Snapshot) -> Option<&'a DiffView> {
    snap.work
        .diff
        .as_deref()
        .filter(|d| Some(&d.job_id) == state.detail_job.as_ref())
}

/// Rows of the Diff tab on this screen: the drawer's inner height less the tab line and
/// the tab's own status line.
pub(crate) fn diff_height(state: &State, snap: &Snapshot) -> usize {
    let area = Rect::new(0, 0, state.size.0, state.size.1);
    let a = layout::areas(area, state, snap);
    let r = a.pane(Pane::Detail).unwrap_or(a.body);
    (r.height as usize).saturating_sub(4).max(1)
}

/// Selects `row` (clamped to the diff) and scrolls it into view.
fn select(state: &mut State, snap: &Snapshot, row: usize) {
    let Some(d) = diff_of(state, snap) else {
        return;
    };
    let row = row.min(d.rows().len().saturating_sub(1));
    let h = diff_height(state, snap);
    state.diff.row = row;
    state.diff.top = keep_in_view(state.diff.top, row, h);
}

/// Up, down, pages, top and bottom in the Diff tab.
pub(super) fn step_diff(state: &mut State, snap: &Snapshot, delta: isize) {
    let row = (state.diff.row as isize).saturating_add(delta).max(0) as usize;
    select(state, snap, row);
}

/// Opens the Diff tab's data: the loader reads the job's diff once and keeps it.
pub(super) fn enter_tab(state: &mut State, out: &mut Vec<Action>) {
    state.diff.row = 0;
    state.diff.top = 0;
    if let Some(job) = state.detail_job.clone() {
        out.push(Action::Load(Load::Diff(job)));
    }
}

/// Next or previous file (`]`/`[`) and hunk (`}`/`{`).
pub(super) fn jump(state: &mut State, snap: &Snapshot, cmd: Command) {
    let Some(d) = diff_of(state, snap) else {
        return;
    };
    let row = state.diff.row;
    let to = match cmd {
        Command::FileNext => d.step_file(row, 1),
        Command::FilePrev => d.step_file(row, -1),
        Command::HunkNext => d.step_hunk(row, 1),
        Command::HunkPrev => d.step_hunk(row, -1),
        _ => None,
    };
    match to {
        Some(r) => select(state, snap, r),
        None => state.notify(ToastLevel::Info, "no more in that direction"),
    }
}

/// Enter on a summary row goes to that file's section.
pub(super) fn open_row(state: &mut State, snap: &Snapshot) {
    let Some(d) = diff_of(state, snap) else {
        return;
    };
    if let Some(DiffRow::Summary(f)) = d.rows().get(state.diff.row).copied()
        && let Some(r) = d.file_row(f)
    {
        select(state, snap, r);
    }
}

/// A key while the `/` search is typed: Enter finds, Esc closes, the rest edits.
pub(super) fn search_key(state: &mut State, snap: &Snapshot, k: KeyEvent) {
    let Some(q) = state.diff.editing.as_mut() else {
        return;
    };
    match k.code {
        KeyCode::Esc => state.diff.editing = None,
        KeyCode::Enter => {
            state.diff.query = std::mem::take(q);
            state.diff.editing = None;
            find(state, snap, 1);
        }
        KeyCode::Backspace => {
            q.pop();
        }
        KeyCode::Char(c) => q.push(c),
        _ => {}
    }
}

/// `n`/`N`: the next or previous row matching the last search, around the whole diff.
pub(super) fn find(state: &mut State, snap: &Snapshot, dir: isize) {
    let Some(d) = diff_of(state, snap) else {
        return;
    };
    if state.diff.query.is_empty() {
        state.notify(ToastLevel::Info, "search the diff with / first");
        return;
    }
    match d.find(&state.diff.query, state.diff.row, dir) {
        Some(r) => select(state, snap, r),
        None => {
            let q = crate::sanitize::clean_line(&state.diff.query);
            state.notify(ToastLevel::Info, format!("\"{q}\" is not in the diff"));
        }
    }
}

/// `c`: a comment box anchored to the selected line.
pub(super) fn comment(state: &mut State, snap: &Snapshot) {
    if refuse_readonly(state, "review") {
        return;
    }
    let Some(d) = diff_of(state, snap) else {
        state.notify(
            ToastLevel::Info,
            "open the Diff tab (l) to comment on a line",
        );
        return;
    };
    let Some(anchor) = d.anchor(state.diff.row) else {
        state.notify(ToastLevel::Info, "select a line of the diff to comment on");
        return;
    };
    state.overlay = Some(Overlay::Comment {
        job_id: d.job_id.clone(),
        anchor,
        text: textarea("what the agent should change here"),
    });
}

/// Keeps a submitted comment until `R` sends the job's comments.
pub(super) fn add_comment(state: &mut State, job_id: &str, anchor: &str, text: String) {
    state.diff.comments.push(ReviewComment {
        job_id: job_id.to_string(),
        anchor: anchor.to_string(),
        text,
    });
    let n = state.diff.comments_for(job_id).count();
    state.notify(
        ToastLevel::Info,
        format!("comment on {anchor} kept ({n} for {job_id}); R sends them back to the agent"),
    );
}

/// The drawer's job and its work, or a note saying why there is none.
fn drawer_work<'a>(
    state: &mut State,
    snap: &'a Snapshot,
    verb: &str,
) -> Option<&'a crate::work::JobWork> {
    if refuse_readonly(state, verb) {
        return None;
    }
    let job = state.detail_job.clone()?;
    let work = snap.work.job.as_ref().filter(|w| w.job_id == job);
    let Some(work) = work else {
        if snap.work.rows.contains_key(&job) {
            state.notify(
                ToastLevel::Info,
                format!("still reading {job}'s work; {verb} again in a moment"),
            );
            return None;
        }
        state.notify(
            ToastLevel::Info,
            format!("{job} has no worktree of its own: only an implement job on a registered checkout does"),
        );
        return None;
    };
    if work.state != WorktreeState::Open {
        state.notify(
            ToastLevel::Info,
            format!("{job}'s work was already {}", work.state.as_str()),
        );
        return None;
    }
    if snap
        .job(&job)
        .is_some_and(|j| !j.state.is_terminal() && j.state != crate::view::JobState::Interrupted)
    {
        state.notify(
            ToastLevel::Info,
            format!("{job} is still at work; {verb} it once it has ended"),
        );
        return None;
    }
    Some(work)
}

/// `R`: asks before sending the job's comments back to its agent.
pub(super) fn review(state: &mut State, snap: &Snapshot) {
    let Some(w) = drawer_work(state, snap, "review") else {
        return;
    };
    let comments: Vec<String> = state
        .diff
        .comments_for(&w.job_id)
        .map(ReviewComment::line)
        .collect();
    if comments.is_empty() {
        state.notify(
            ToastLevel::Info,
            "no comments yet: select a line in the Diff tab and press c",
        );
        return;
    }
    let agent = snap
        .job(&w.job_id)
        .map(|j| j.agent.clone())
        .unwrap_or_default();
    state.overlay = Some(Overlay::Confirm(Confirm::Review {
        job_id: w.job_id.clone(),
        agent,
        round: w.review_rounds + 1,
        comments,
    }));
}

/// `M`: asks before landing, naming the strategy and the base branch.
pub(super) fn land(state: &mut State, snap: &Snapshot) {
    let Some(w) = drawer_work(state, snap, "land") else {
        return;
    };
    let conflict = snap
        .work
        .base_conflicts
        .iter()
        .find(|c| c.job == w.job_id)
        .map(|c| {
            format!(
                "would conflict in {} with work landed on {}",
                crate::work::places(&c.files, &c.hunks),
                c.base
            )
        });
    state.overlay = Some(Overlay::Confirm(Confirm::Land {
        job_id: w.job_id.clone(),
        strategy: LandStrategy::Auto,
        branch: w.branch.clone(),
        base: w.base.clone(),
        files: w.files.len(),
        added: w.added,
        removed: w.removed,
        conflict,
    }));
}

/// `D`: asks before discarding, saying what is lost.
pub(super) fn discard(state: &mut State, snap: &Snapshot) {
    let Some(w) = drawer_work(state, snap, "discard") else {
        return;
    };
    state.overlay = Some(Overlay::Confirm(Confirm::Discard {
        job_id: w.job_id.clone(),
        loss: w.loss.clone(),
    }));
}

/// A key in the land dialog: ↑/↓ pick the strategy, `y`/Enter land, `n`/Esc keep it.
/// Returns whether the dialog stays open.
pub(super) fn land_key(
    state: &State,
    strategy: &mut LandStrategy,
    job_id: &str,
    chord: KeyChord,
    out: &mut Vec<Action>,
) -> bool {
    let all = LandStrategy::ALL;
    let i = all.iter().position(|s| s == strategy).unwrap_or(0);
    match state.keymap.lookup(Context::Dialog, chord) {
        Some(Command::Up) => *strategy = all[(i + all.len() - 1) % all.len()],
        Some(Command::Down) => *strategy = all[(i + 1) % all.len()],
        Some(Command::Confirm | Command::Submit) => {
            out.push(Action::Write(Write::Land {
                job_id: job_id.to_string(),
                strategy: *strategy,
            }));
            return false;
        }
        Some(Command::Cancel) => return false,
        _ => {}
    }
    true
}

/// Switching the drawer's tab: overview → activity → diff (for a write job) → overview.
pub(super) fn next_tab(state: &mut State, snap: &Snapshot, dir: isize, out: &mut Vec<Action>) {
    let write_job = state
        .detail_job
        .as_ref()
        .is_some_and(|j| snap.work.rows.contains_key(j));
    let mut tabs = vec![DetailTab::Overview, DetailTab::Activity];
    if write_job || state.detail_tab == DetailTab::Diff {
        tabs.push(DetailTab::Diff);
    }
    let i = tabs
        .iter()
        .position(|t| *t == state.detail_tab)
        .unwrap_or(0) as isize;
    state.detail_tab = tabs[(i + dir).rem_euclid(tabs.len() as isize) as usize];
    state.activity_sel = None;
    state.activity_open = false;
    if state.detail_tab == DetailTab::Diff {
        enter_tab(state, out);
    }
}
