//! `update`: one event in, state changes and actions out; key dispatch and the command table.
//! Must not perform I/O or read the clock: time comes with `Event::Tick` and the snapshot.

mod agents;
mod attention;
mod chat;
mod diff;
mod jobs;
mod line;
mod marks;
mod mouse;
mod overlay;
mod panes;
mod search;
mod select;
mod tree;
mod usage;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent};
use ratatui_textarea::TextArea;

use crate::action::{Action, BulkVerb, ResumeVerb, Term};
use crate::keymap::{Command, Context, KeyChord};
use crate::live::DetailTab;
use crate::sanitize;
use crate::state::{Confirm, Overlay, Pane, State, ToastLevel};
use crate::view::Snapshot;
use attention::{answer, resume};
use chat::{compose, mark_read, promote, reply};
use jobs::{cancel_job, copy, kill};
use line::{command_line_key, filter_key};
use mouse::mouse;
use overlay::{open_messages, overlay_key};
use panes::{back, focus, next_section, open, open_detail, step};
use select::{arrived, selected_job};
use tree::{fold, switch_root, toggle_fold};

/// Everything that can happen to the control room.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Paste(String),
    Resize(u16, u16),
    /// The spinner and "updated Ns ago" clock; `now_ms` is the glue's clock.
    Tick {
        now_ms: i64,
    },
    /// A fresh snapshot was loaded (pass the new one to `update`).
    SnapshotArrived,
}

/// Applies `event` to `state` and returns what the glue must do.
pub fn update(state: &mut State, snap: &Snapshot, event: Event) -> Vec<Action> {
    let mut out = Vec::new();
    match event {
        Event::Key(k) if k.kind != KeyEventKind::Release => key(state, snap, k, &mut out),
        Event::Key(_) => {}
        Event::Mouse(m) => mouse(state, snap, m, &mut out),
        Event::Paste(text) => paste(state, &text),
        Event::Resize(w, h) => state.size = (w, h),
        Event::Tick { now_ms } => {
            state.now_ms = now_ms;
            state.tick = state.tick.wrapping_add(1);
        }
        Event::SnapshotArrived => arrived(state, snap, &mut out),
    }
    chat::seen(state, snap, &mut out);
    // Waiting to quit: done once nothing is left running or queued.
    if matches!(state.overlay, Some(Overlay::Stopping { kill: false }))
        && snap.counts.running + snap.counts.queued == 0
        && !out.contains(&Action::Term(Term::Quit))
    {
        out.push(Action::Term(Term::Quit));
    }
    if state.readonly {
        let before = out.len();
        out.retain(|a| !a.is_write());
        if out.len() != before {
            state.notify(
                ToastLevel::Error,
                "read-only: writes are disabled (--readonly)",
            );
        }
    }
    out
}

fn key(state: &mut State, snap: &Snapshot, k: KeyEvent, out: &mut Vec<Action>) {
    state.touched = true;
    let chord = KeyChord::from_event(&k);
    if state.keymap.lookup(Context::Global, chord) == Some(Command::Quit)
        && chord.mods.contains(KeyModifiers::CONTROL)
    {
        // Ctrl-c always leaves; a second press on the quit question takes its default.
        match state.overlay {
            Some(Overlay::Confirm(Confirm::Quit)) | Some(Overlay::Stopping { .. }) => {
                out.push(Action::Term(Term::Detach))
            }
            _ => quit(state, snap, out),
        }
        return;
    }
    if state.overlay.is_some() {
        overlay_key(state, snap, k, chord, out);
        return;
    }
    if state.command.is_some() {
        command_line_key(state, snap, k, out);
        return;
    }
    if state.filter_editing {
        filter_key(state, snap, k);
        return;
    }
    if state.diff.editing.is_some() {
        diff::search_key(state, snap, k);
        return;
    }
    let ctx = Context::of_pane(state.focus);
    let cmd = state
        .keymap
        .lookup(ctx, chord)
        .or_else(|| state.keymap.lookup(Context::Global, chord));
    if let Some(cmd) = cmd {
        command(state, snap, cmd, out);
    }
}

fn command(state: &mut State, snap: &Snapshot, cmd: Command, out: &mut Vec<Action>) {
    match cmd {
        Command::Quit => quit(state, snap, out),
        Command::Suspend => out.push(Action::Term(Term::Suspend)),
        Command::Help => open_help(state),
        Command::Filter => state.start_filter(),
        Command::Search => search::open(state),
        Command::Usage => usage::open(state, out),
        // Read-only still opens the line: read verbs run, the rest are refused on Enter, so
        // the characters typed after `:` never fall through as pane commands.
        Command::CommandLine => {
            state.command = Some(String::new());
            state.history_pos = None;
            state.candidates.clear();
        }
        Command::Messages => open_messages(state, snap),
        Command::Pane(p) => focus(state, snap, p, out),
        Command::PaneNext => cycle_pane(state, snap, 1, out),
        Command::PanePrev => cycle_pane(state, snap, -1, out),
        Command::Zoom => state.zoom = !state.zoom,
        Command::Back if marks::active(state) => marks::clear(state),
        Command::Back => back(state, snap),
        Command::Up => step(state, snap, -1, out),
        Command::Down => step(state, snap, 1, out),
        Command::PageUp => step(state, snap, -(page(state) as isize), out),
        Command::PageDown => step(state, snap, page(state) as isize, out),
        Command::Top => step(state, snap, isize::MIN / 2, out),
        Command::Bottom => step(state, snap, isize::MAX / 2, out),
        Command::Open if state.focus == Pane::Detail && state.detail_tab == DetailTab::Activity => {
            state.activity_open = !state.activity_open;
        }
        Command::Open if in_diff(state) => diff::open_row(state, snap),
        Command::Open => open(state, snap, out),
        Command::Detail => {
            if let Some(id) = selected_job(state, snap) {
                open_detail(state, id, out);
            }
        }
        Command::Copy => copy(state, snap, out),
        Command::Kill if marks::active(state) => marks::confirm(state, snap, BulkVerb::Kill),
        Command::Kill => kill(state, snap),
        Command::Answer if state.focus == Pane::Tree => marks::answer(state, snap),
        Command::Answer => answer(state, snap, out),
        Command::Retry => resume(state, snap, ResumeVerb::Retry),
        Command::Continue => resume(state, snap, ResumeVerb::Continue),
        Command::Abort => resume(state, snap, ResumeVerb::Abort),
        Command::Fold => fold(state, snap, true),
        Command::Unfold => fold(state, snap, false),
        Command::ToggleFold => toggle_fold(state, snap),
        Command::CancelJob if marks::active(state) => marks::confirm(state, snap, BulkVerb::Cancel),
        Command::CancelJob => cancel_job(state, snap),
        Command::RetryJob => marks::confirm(state, snap, BulkVerb::Retry),
        Command::Mark => marks::toggle(state, snap),
        Command::LeaveStall => attention::leave(state, snap, out),
        Command::Group => {
            state.grouped = !state.grouped;
            select::reconcile(state, snap);
        }
        Command::MarkAll => marks::mark_all(state, snap),
        Command::RootNext => switch_root(state, snap, 1),
        Command::RootPrev => switch_root(state, snap, -1),
        Command::SectionNext | Command::SectionPrev if state.focus == Pane::Detail => {
            let dir = if cmd == Command::SectionNext { 1 } else { -1 };
            diff::next_tab(state, snap, dir, out);
        }
        Command::SectionNext => state.section = next_section(state, snap, 1),
        Command::SectionPrev => state.section = next_section(state, snap, -1),
        Command::Compose => compose(state, snap, None),
        Command::Reply => reply(state, snap),
        Command::Promote => promote(state, snap),
        Command::MarkRead => mark_read(state, snap, out),
        Command::FileNext | Command::FilePrev | Command::HunkNext | Command::HunkPrev
            if in_diff(state) =>
        {
            diff::jump(state, snap, cmd)
        }
        Command::DiffSearch if in_diff(state) => state.diff.editing = Some(String::new()),
        Command::DiffSearch => state.start_filter(),
        Command::MatchNext if in_diff(state) => diff::find(state, snap, 1),
        Command::MatchPrev if in_diff(state) => diff::find(state, snap, -1),
        Command::Comment if in_diff(state) => diff::comment(state, snap),
        Command::Wrap => state.activity_wrap = !state.activity_wrap,
        Command::Sort(key) => state.tree_sort = state.tree_sort.press(key),
        Command::Review => diff::review(state, snap),
        Command::Land if state.focus == Pane::Tree => marks::confirm(state, snap, BulkVerb::Land),
        Command::Land => diff::land(state, snap),
        Command::Discard if state.focus == Pane::Tree => {
            marks::confirm(state, snap, BulkVerb::Discard)
        }
        Command::Discard => diff::discard(state, snap),
        Command::FileNext
        | Command::FilePrev
        | Command::HunkNext
        | Command::HunkPrev
        | Command::MatchNext
        | Command::MatchPrev
        | Command::Comment => {}
        // Form and dialog commands only mean something inside an overlay.
        Command::Submit
        | Command::Newline
        | Command::NextField
        | Command::PrevField
        | Command::Cancel
        | Command::Confirm
        | Command::Force => {}
    }
}

fn open_help(state: &mut State) {
    state.overlay = Some(Overlay::Help {
        scroll: 0,
        query: String::new(),
        typing: false,
    })
}

/// Focuses the pane `dir` (±1) from the focused one, round the ring.
fn cycle_pane(state: &mut State, snap: &Snapshot, dir: isize, out: &mut Vec<Action>) {
    let n = Pane::ALL.len() as isize;
    let i = state.focus.number() as isize - 1;
    focus(
        state,
        snap,
        Pane::ALL[(i + dir).rem_euclid(n) as usize],
        out,
    );
}

/// Whether the Diff tab has the keys.
fn in_diff(state: &State) -> bool {
    state.focus == Pane::Detail && state.detail_tab == DetailTab::Diff
}

/// Quits at once unless this control room's daemon has work; then asks what becomes of it.
fn quit(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    let c = snap.counts;
    if snap.daemon.is_own() && c.running + c.queued > 0 {
        state.overlay = Some(Overlay::Confirm(Confirm::Quit));
    } else {
        out.push(Action::Term(Term::Quit));
    }
}

fn refuse_readonly(state: &mut State, what: &str) -> bool {
    if state.readonly {
        state.notify(
            ToastLevel::Error,
            format!("read-only: {what} is disabled (--readonly)"),
        );
    }
    state.readonly
}

fn page(state: &State) -> usize {
    (state.size.1 as usize / 2).max(1)
}

fn textarea(placeholder: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(placeholder.to_string());
    t.set_cursor_line_style(ratatui::style::Style::default());
    t
}

fn paste(state: &mut State, text: &str) {
    // Terminals send pasted line breaks as CR (or CRLF); the textareas want `\n`.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let clean = sanitize::clean(&text);
    if let Some(ov) = state.overlay.as_mut() {
        match ov {
            Overlay::Answer { fields, focus, .. } => {
                if let Some(f) = fields.get_mut(*focus).filter(|f| !f.has_choices()) {
                    f.text.insert_str(&clean);
                }
            }
            Overlay::Instructions { text: t, .. }
            | Overlay::Compose { text: t, .. }
            | Overlay::Comment { text: t, .. } => {
                t.insert_str(&clean);
            }
            _ => {}
        }
    } else if let Some(line) = state.command.as_mut() {
        line.push_str(&sanitize::clean_line(&clean));
    } else if state.filter_editing {
        state.filter.push_str(&sanitize::clean_line(&clean));
    }
}

/// A key while a search is typed (the `/` filter, the help's search): Enter keeps it, Esc
/// drops it, both stop the typing. Returns whether the key was one of these.
fn search_key(text: &mut String, typing: &mut bool, k: &KeyEvent) -> bool {
    match k.code {
        KeyCode::Esc => {
            text.clear();
            *typing = false;
        }
        KeyCode::Enter => *typing = false,
        _ => return edit_key(text, k),
    }
    true
}

/// Backspace or a typed character on a one-line text; returns whether it was one.
fn edit_key(text: &mut String, k: &KeyEvent) -> bool {
    match k.code {
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c)
            if !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            text.push(c)
        }
        _ => return false,
    }
    true
}
