//! `update`: one input event in, state changes and actions for the glue out.
//!
//! Owns the mapping from keys (through the keymap), mouse, paste, ticks and snapshot
//! arrivals to [`State`] changes and [`Action`]s. Must not perform I/O or read the clock:
//! time comes in with `Event::Tick` and the snapshot.

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use crate::action::{Action, PromoteAction, ResumeVerb};
use crate::keymap::{Command, Context, KeyChord};
use crate::layout;
use crate::live::DetailTab;
use crate::rows;
use crate::sanitize;
use crate::state::{AnswerField, Confirm, Overlay, Pane, Section, State, ToastLevel};
use crate::view::{AttentionKind, JobState, Snapshot};
use crate::widgets;

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
    // Waiting to quit: done once nothing is left running or queued.
    if matches!(state.overlay, Some(Overlay::Stopping { kill: false }))
        && snap.counts.running + snap.counts.queued == 0
        && !out.contains(&Action::Quit)
    {
        out.push(Action::Quit);
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

fn arrived(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
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
    follow_attention(state, snap);
    if let Some(t) = state.sel.thread.clone()
        && snap.transcript.as_ref().map(|x| &x.thread_id) != Some(&t)
    {
        out.push(Action::LoadThread(t));
    }
    if let Some(j) = state.detail_job.clone()
        && snap.detail.as_ref().map(|d| &d.job_id) != Some(&j)
    {
        out.push(Action::LoadDetail(j));
    }
}

/// Keeps every selection on an existing row: the same id if it is still visible, else the
/// row at the old index (its neighbour), else the first.
fn reconcile(state: &mut State, snap: &Snapshot) {
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
fn follow_attention(state: &mut State, snap: &Snapshot) {
    if state.focus != Pane::Attention {
        return;
    }
    let Some(item) = selected_gate(state, snap) else {
        return;
    };
    let node = match &item.kind {
        AttentionKind::Failure { failed_leg, .. } => failed_leg.clone(),
        AttentionKind::Ask { .. } | AttentionKind::Preflight { .. } => item.job_id.clone(),
    };
    state.dag_root = Some(item.root_id.clone());
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

fn record_hints(state: &mut State, snap: &Snapshot) {
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

fn dag_ids(snap: &Snapshot, state: &State) -> Vec<String> {
    rows::dag_root(snap, state)
        .map(|r| {
            rows::dag_nodes(r)
                .iter()
                .map(|n| n.node.id.clone())
                .collect()
        })
        .unwrap_or_default()
}

fn key(state: &mut State, snap: &Snapshot, k: KeyEvent, out: &mut Vec<Action>) {
    state.touched = true;
    let chord = KeyChord::from_event(&k);
    if state.keymap.lookup(Context::Global, chord) == Some(Command::Quit)
        && chord.mods.contains(KeyModifiers::CONTROL)
    {
        // Ctrl-c always leaves; a second press on the quit question takes its default.
        match state.overlay {
            Some(Overlay::Confirm(Confirm::Quit { .. })) | Some(Overlay::Stopping { .. }) => {
                out.push(Action::Detach)
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
        Command::Suspend => out.push(Action::Suspend),
        Command::Help => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Command::Filter => state.filter_editing = true,
        // Read-only still opens the line: read verbs run, the rest are refused on Enter, so
        // the characters typed after `:` never fall through as pane commands.
        Command::CommandLine => {
            state.command = Some(String::new());
            state.history_pos = None;
            state.candidates.clear();
        }
        Command::Messages => open_messages(state, snap),
        Command::Pane(p) => focus(state, snap, p, out),
        Command::PaneNext | Command::PanePrev => {
            let i = state.focus.number() - 1;
            let n = Pane::ALL.len();
            let j = if cmd == Command::PaneNext {
                (i + 1) % n
            } else {
                (i + n - 1) % n
            };
            focus(state, snap, Pane::ALL[j], out);
        }
        Command::Zoom => state.zoom = !state.zoom,
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
        Command::Open => open(state, snap, out),
        Command::Detail => {
            if let Some(id) = selected_job(state, snap) {
                open_detail(state, id, out);
            }
        }
        Command::Copy => copy(state, snap, out),
        Command::Kill => kill(state, snap),
        Command::Answer => answer(state, snap, out),
        Command::Retry => resume(state, snap, ResumeVerb::Retry),
        Command::Continue => resume(state, snap, ResumeVerb::Continue),
        Command::Abort => resume(state, snap, ResumeVerb::Abort),
        Command::Fold => fold(state, snap, true),
        Command::Unfold => fold(state, snap, false),
        Command::ToggleFold => toggle_fold(state, snap),
        Command::CancelJob => cancel_job(state, snap),
        Command::RootNext => switch_root(state, snap, 1),
        Command::RootPrev => switch_root(state, snap, -1),
        Command::SectionNext | Command::SectionPrev if state.focus == Pane::Detail => {
            state.detail_tab = match state.detail_tab {
                DetailTab::Overview => DetailTab::Activity,
                DetailTab::Activity => DetailTab::Overview,
            };
            state.activity_sel = None;
            state.activity_open = false;
        }
        Command::SectionNext => state.section = next_section(state.section, 1),
        Command::SectionPrev => state.section = next_section(state.section, -1),
        Command::Compose => compose(state, snap, None),
        Command::Reply => reply(state, snap),
        Command::Promote => promote(state, snap),
        Command::MarkRead => mark_read(state, snap, out),
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

/// Quits at once unless this control room's daemon has work; then asks what becomes of it.
fn quit(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    let c = snap.counts;
    if snap.daemon.is_own() && c.running + c.queued > 0 {
        state.overlay = Some(Overlay::Confirm(Confirm::Quit {
            running: c.running,
            queued: c.queued,
        }));
    } else {
        out.push(Action::Quit);
    }
}

/// Keys of the quit question and of the stopping frame: `d`/Enter detach, `w` wait,
/// `k` kill, Esc stays. Returns whether the overlay stays open.
fn quit_key(state: &mut State, ov: &mut Overlay, k: KeyEvent, out: &mut Vec<Action>) -> bool {
    let cancel = state
        .keymap
        .lookup(Context::Dialog, KeyChord::from_event(&k))
        == Some(Command::Cancel);
    let asking = matches!(ov, Overlay::Confirm(_));
    match k.code {
        KeyCode::Char('d') => {
            out.push(Action::Detach);
            false
        }
        KeyCode::Enter if asking => {
            out.push(Action::Detach);
            false
        }
        KeyCode::Char('w') if asking => {
            *ov = Overlay::Stopping { kill: false };
            true
        }
        KeyCode::Char('k') if !matches!(ov, Overlay::Stopping { kill: true }) => {
            out.push(Action::QuitKill);
            *ov = Overlay::Stopping { kill: true };
            true
        }
        // Once the kill is under way there is no going back, only detaching.
        _ if cancel => matches!(ov, Overlay::Stopping { kill: true }),
        _ => true,
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

fn focus(state: &mut State, snap: &Snapshot, p: Pane, out: &mut Vec<Action>) {
    if p == Pane::Detail && state.focus != Pane::Detail {
        state.return_to = state.focus;
        if state.detail_job.is_none()
            && let Some(id) = selected_job(state, snap)
        {
            open_detail(state, id, out);
            return;
        }
    }
    if p.is_right() {
        state.right = p;
    }
    state.focus = p;
    follow_attention(state, snap);
}

fn back(state: &mut State, snap: &Snapshot) {
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

fn next_section(s: Section, d: isize) -> Section {
    const ORDER: [Section; 3] = [Section::Threads, Section::Inbox, Section::Transcript];
    let i = ORDER.iter().position(|x| *x == s).unwrap_or(0) as isize;
    ORDER[(i + d).rem_euclid(3) as usize]
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

fn step(state: &mut State, snap: &Snapshot, delta: isize, out: &mut Vec<Action>) {
    match state.focus {
        Pane::Attention => {
            let ids: Vec<String> = rows::attention_rows(snap, state)
                .iter()
                .map(|a| a.key())
                .collect();
            state.sel.attention = moved(&ids, state.sel.attention.as_deref(), delta);
            follow_attention(state, snap);
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
                    out.extend(new.map(Action::LoadThread));
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
    let Some(cur) = widgets::activity::selected(state, &d.activity) else {
        return;
    };
    let last = d.activity.len() - 1;
    let next = (cur as isize).saturating_add(delta).clamp(0, last as isize) as usize;
    state.activity_sel = (next != last).then(|| d.activity[next].seq);
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

/// The job the focused pane points at.
fn selected_job(state: &State, snap: &Snapshot) -> Option<String> {
    match state.focus {
        Pane::Attention => selected_gate(state, snap).map(|a| a.job_id.clone()),
        Pane::Tree => state.sel.tree.clone(),
        Pane::Dag => state.sel.dag.clone(),
        Pane::Detail => state.detail_job.clone(),
        Pane::Threads => {
            let m = rows::message_rows(snap, state)
                .into_iter()
                .find(|m| Some(m.seq) == state.sel.message)?;
            m.promoted_job_id.clone()
        }
    }
}

fn open_detail(state: &mut State, id: String, out: &mut Vec<Action>) {
    if state.focus != Pane::Detail {
        state.return_to = state.focus;
    }
    state.detail_job = Some(id.clone());
    state.detail_scroll = 0;
    state.activity_sel = None;
    state.activity_open = false;
    state.focus = Pane::Detail;
    state.right = Pane::Detail;
    out.push(Action::LoadDetail(id));
}

fn open(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    match (state.focus, state.section) {
        (Pane::Threads, Section::Threads) => {
            state.section = Section::Transcript;
            if state.sel.message.is_none() {
                state.sel.message = rows::message_rows(snap, state).last().map(|m| m.seq);
            }
            if let Some(t) = state.sel.thread.clone()
                && snap.transcript.as_ref().map(|x| &x.thread_id) != Some(&t)
            {
                out.push(Action::LoadThread(t));
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
                out.push(Action::LoadThread(item.thread_id.clone()));
            }
        }
        _ => {
            if let Some(id) = selected_job(state, snap) {
                open_detail(state, id, out);
            }
        }
    }
}

fn copy(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
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
            }),
        Pane::Threads => state.sel.thread.clone(),
        _ => selected_job(state, snap),
    };
    match text {
        Some(t) => {
            state.notify(ToastLevel::Info, format!("copied {t}"));
            out.push(Action::Copy(t));
        }
        None => state.notify(ToastLevel::Info, "nothing selected to copy"),
    }
}

fn kill(state: &mut State, snap: &Snapshot) {
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
    if !root.state.is_live() {
        state.notify(
            ToastLevel::Info,
            format!("{} already ended ({})", root.id, root.state.name()),
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

fn selected_gate<'a>(state: &State, snap: &'a Snapshot) -> Option<&'a crate::view::AttentionItem> {
    if state.focus != Pane::Attention {
        return None;
    }
    rows::attention_rows(snap, state)
        .into_iter()
        .find(|a| state.sel.attention.as_deref() == Some(a.key().as_str()))
}

fn textarea(placeholder: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(placeholder.to_string());
    t.set_cursor_line_style(ratatui::style::Style::default());
    t
}

fn answer(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
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
        AttentionKind::Preflight { .. } => {
            let job = item.job_id.clone();
            open_detail(state, job, out);
        }
    }
}

fn resume(state: &mut State, snap: &Snapshot, verb: ResumeVerb) {
    let Some(item) = selected_gate(state, snap) else {
        return;
    };
    if !matches!(item.kind, AttentionKind::Failure { .. }) {
        state.notify(
            ToastLevel::Info,
            format!(
                "{} applies to failure escalations; this is a question (a answers)",
                verb.name()
            ),
        );
        return;
    }
    if refuse_readonly(state, verb.name()) {
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

fn fold(state: &mut State, snap: &Snapshot, folding: bool) {
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

fn toggle_fold(state: &mut State, snap: &Snapshot) {
    if let Some((id, true, folded, _, _)) = tree_row_info(state, snap) {
        state.folds.insert(id, !folded);
    }
}

fn cancel_job(state: &mut State, snap: &Snapshot) {
    if refuse_readonly(state, "cancel") {
        return;
    }
    let Some(id) = selected_job(state, snap) else {
        return;
    };
    match snap.job(&id) {
        Some(j) if !j.state.is_settled() || j.state == JobState::Blocked => {
            state.overlay = Some(Overlay::Confirm(Confirm::CancelJob { job_id: id }));
        }
        Some(j) => state.notify(
            ToastLevel::Info,
            format!("{id} is already {}", j.state.name()),
        ),
        None => {}
    }
}

fn switch_root(state: &mut State, snap: &Snapshot, d: isize) {
    let roots = snap.roots_newest_first();
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

fn known_agents(snap: &Snapshot) -> Vec<String> {
    let mut v: Vec<String> = snap.inboxes.iter().map(|i| i.agent.clone()).collect();
    for r in &snap.roots {
        r.tree.walk(&mut |n| v.push(n.agent.clone()));
    }
    v.sort();
    v.dedup();
    v
}

fn compose(state: &mut State, snap: &Snapshot, reply_to: Option<(u64, String)>) {
    if refuse_readonly(state, "sending") {
        return;
    }
    let Some(thread_id) = state.sel.thread.clone() else {
        state.notify(ToastLevel::Info, "select a thread first");
        return;
    };
    let mut text = textarea("message; @agent mentions, Tab completes");
    if let Some((_, author)) = &reply_to {
        text.insert_str(format!("@{author} "));
    }
    state.overlay = Some(Overlay::Compose {
        thread_id,
        reply_to: reply_to.map(|(s, _)| s),
        text,
        agents: known_agents(snap),
    });
}

fn selected_message<'a>(state: &State, snap: &'a Snapshot) -> Option<&'a crate::view::Message> {
    rows::message_rows(snap, state)
        .into_iter()
        .find(|m| Some(m.seq) == state.sel.message)
}

fn reply(state: &mut State, snap: &Snapshot) {
    let target = selected_message(state, snap).map(|m| (m.seq, sanitize::clean_line(&m.author)));
    if target.is_none() {
        state.notify(ToastLevel::Info, "select a message to reply to");
        return;
    }
    compose(state, snap, target);
}

fn promote(state: &mut State, snap: &Snapshot) {
    if refuse_readonly(state, "promote") {
        return;
    }
    match (selected_message(state, snap), state.sel.thread.clone()) {
        (Some(m), Some(thread_id)) => {
            state.overlay = Some(Overlay::Promote {
                thread_id,
                seq: m.seq,
                choice: 0,
            })
        }
        _ => state.notify(ToastLevel::Info, "select a message to promote"),
    }
}

fn mark_read(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    let Some(inbox) = rows::inbox_rows(snap)
        .into_iter()
        .find(|i| Some(&i.agent) == state.sel.inbox.as_ref())
    else {
        state.notify(ToastLevel::Info, "select an inbox (h/l to the inbox list)");
        return;
    };
    let mut threads: Vec<&str> = inbox
        .items
        .iter()
        .filter(|i| !i.read)
        .map(|i| i.thread_id.as_str())
        .collect();
    threads.dedup();
    threads.sort();
    threads.dedup();
    for t in threads {
        let seqs = inbox
            .items
            .iter()
            .filter(|i| !i.read && i.thread_id == t)
            .map(|i| i.seq)
            .collect();
        out.push(Action::MarkRead {
            agent: inbox.agent.clone(),
            thread_id: t.to_string(),
            seqs,
        });
    }
    if out.is_empty() {
        state.notify(
            ToastLevel::Info,
            format!("{}'s inbox has nothing unread", inbox.agent),
        );
    }
}

fn open_messages(state: &mut State, snap: &Snapshot) {
    state.overlay = Some(Overlay::Messages { scroll: 0 });
    let max = pager_max(state, snap);
    if let Some(Overlay::Messages { scroll }) = state.overlay.as_mut() {
        *scroll = max;
    }
}

/// Moves a scrolled overlay by one line or one page; with a known end (`max`) also to the
/// top or the bottom, and never past the end. Returns whether `cmd` was a scroll key.
fn scroll_by(scroll: &mut u16, cmd: Option<Command>, page: u16, max: Option<u16>) -> bool {
    let end = max.unwrap_or(u16::MAX);
    *scroll = match (cmd, max) {
        (Some(Command::Down), _) => scroll.saturating_add(1).min(end),
        (Some(Command::Up), _) => scroll.saturating_sub(1),
        (Some(Command::PageDown), _) => scroll.saturating_add(page).min(end),
        (Some(Command::PageUp), _) => scroll.saturating_sub(page),
        (Some(Command::Top), Some(_)) => 0,
        (Some(Command::Bottom), Some(max)) => max,
        _ => return false,
    };
    true
}

/// How far the open pager (messages log or `:` output) can scroll on this screen.
fn pager_max(state: &State, snap: &Snapshot) -> u16 {
    let area = Rect::new(0, 0, state.size.0, state.size.1);
    let body = layout::areas(area, state, snap).body;
    let w = widgets::messages::pager_area(body).width.saturating_sub(2) as usize;
    let theme = crate::theme::Theme::monochrome();
    let n = match &state.overlay {
        Some(Overlay::Messages { .. }) => {
            widgets::messages::log_lines(&state.messages, w, &theme).len()
        }
        Some(Overlay::Output { text, .. }) => {
            widgets::messages::output_lines(text, w, &theme).len()
        }
        _ => 0,
    };
    widgets::messages::max_scroll(n, body)
}

fn command_line_key(state: &mut State, snap: &Snapshot, k: KeyEvent, out: &mut Vec<Action>) {
    let Some(line) = state.command.as_mut() else {
        return;
    };
    if k.code != KeyCode::Tab {
        state.candidates.clear();
    }
    match k.code {
        KeyCode::Esc => state.command = None,
        KeyCode::Enter => {
            let text = line
                .trim()
                .trim_start_matches("gitmoot ")
                .trim()
                .to_string();
            state.command = None;
            if text.is_empty() {
                return;
            }
            state.remember(&text);
            if text == "messages" {
                open_messages(state, snap);
            } else if state.readonly && !crate::complete::is_read_command(&text) {
                state.notify(
                    ToastLevel::Error,
                    format!("read-only: `{text}` writes; only read verbs run (--readonly)"),
                );
            } else {
                out.push(Action::RunCommand(text));
            }
        }
        KeyCode::Tab => {
            let (done, cands) = crate::complete::complete(&state.completions, line);
            *line = done;
            state.candidates = cands;
        }
        KeyCode::Up | KeyCode::Down => {
            let n = state.history.len();
            if n == 0 {
                return;
            }
            let pos = match (k.code, state.history_pos) {
                (KeyCode::Up, None) => Some(n - 1),
                (KeyCode::Up, Some(p)) => Some(p.saturating_sub(1)),
                (_, Some(p)) if p + 1 < n => Some(p + 1),
                _ => None,
            };
            state.history_pos = pos;
            *line = pos.map(|p| state.history[p].clone()).unwrap_or_default();
        }
        KeyCode::Backspace => {
            line.pop();
        }
        KeyCode::Char(c)
            if !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            line.push(c)
        }
        _ => {}
    }
}

fn filter_key(state: &mut State, snap: &Snapshot, k: KeyEvent) {
    match k.code {
        KeyCode::Esc => {
            state.filter.clear();
            state.filter_editing = false;
        }
        KeyCode::Enter => state.filter_editing = false,
        KeyCode::Backspace => {
            state.filter.pop();
        }
        KeyCode::Char(c)
            if !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            state.filter.push(c)
        }
        _ => return,
    }
    reconcile(state, snap);
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
            Overlay::Instructions { text: t, .. } | Overlay::Compose { text: t, .. } => {
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

/// The text of a draft the operator would lose by closing the overlay.
fn draft_text(ov: &Overlay) -> String {
    match ov {
        Overlay::Answer { fields, .. } => fields
            .iter()
            .filter(|f| !f.has_choices())
            .map(|f| f.text.lines().join("\n"))
            .collect::<String>(),
        Overlay::Instructions { text, .. } | Overlay::Compose { text, .. } => {
            text.lines().join("\n")
        }
        _ => String::new(),
    }
}

fn overlay_key(
    state: &mut State,
    snap: &Snapshot,
    k: KeyEvent,
    chord: KeyChord,
    out: &mut Vec<Action>,
) {
    let Some(mut ov) = state.overlay.take() else {
        return;
    };
    if matches!(
        ov,
        Overlay::Confirm(Confirm::Quit { .. }) | Overlay::Stopping { .. }
    ) {
        if quit_key(state, &mut ov, k, out) {
            state.overlay = Some(ov);
        }
        return;
    }
    // Esc on a draft asks first: the bar says so, a second Esc discards, any other key
    // goes on editing.
    let cancels = state.keymap.lookup(Context::AnswerForm, chord) == Some(Command::Cancel);
    if cancels && !draft_text(&ov).trim().is_empty() && !state.discard_armed {
        state.discard_armed = true;
        state.notify(
            ToastLevel::Info,
            "discard the draft? Esc again discards, any other key keeps editing",
        );
        state.overlay = Some(ov);
        return;
    }
    state.discard_armed = false;
    if matches!(ov, Overlay::Messages { .. } | Overlay::Output { .. }) {
        state.overlay = Some(ov);
        let max = pager_max(state, snap);
        let cmd = state.keymap.lookup(Context::Global, chord);
        let page = page(state) as u16;
        let Some(Overlay::Messages { scroll } | Overlay::Output { scroll, .. }) =
            state.overlay.as_mut()
        else {
            return;
        };
        if !scroll_by(scroll, cmd, page, Some(max)) {
            state.overlay = None;
        }
        return;
    }
    let keep = match &mut ov {
        Overlay::Messages { .. } | Overlay::Output { .. } => false,
        Overlay::Help { scroll } => scroll_by(
            scroll,
            state.keymap.lookup(Context::Global, chord),
            10,
            None,
        ),
        Overlay::Confirm(c) => match state.keymap.lookup(Context::Dialog, chord) {
            Some(Command::Confirm) => {
                out.push(confirmed(c, false));
                false
            }
            Some(Command::Force) if matches!(c, Confirm::KillRoot { .. }) => {
                out.push(confirmed(c, true));
                false
            }
            Some(Command::Cancel) => false,
            _ => true,
        },
        Overlay::Promote {
            thread_id,
            seq,
            choice,
        } => match state.keymap.lookup(Context::Dialog, chord) {
            Some(Command::Up) => {
                *choice = choice.saturating_sub(1);
                true
            }
            Some(Command::Down) => {
                *choice = (*choice + 1).min(PromoteAction::ALL.len() - 1);
                true
            }
            Some(Command::Submit) | Some(Command::Confirm) => {
                out.push(Action::Promote {
                    thread_id: thread_id.clone(),
                    seq: *seq,
                    action: Overlay::promote_action(*choice),
                });
                false
            }
            Some(Command::Cancel) => false,
            _ => true,
        },
        Overlay::Answer {
            job_id,
            fields,
            focus,
        } => {
            let cmd = state.keymap.lookup(Context::AnswerForm, chord);
            let field = &mut fields[*focus];
            match cmd {
                Some(Command::Cancel) => false,
                Some(Command::Up) if field.has_choices() => {
                    field.choice = field.choice.saturating_sub(1);
                    true
                }
                Some(Command::Down) if field.has_choices() => {
                    field.choice = (field.choice + 1).min(field.question.choices.len() - 1);
                    true
                }
                Some(Command::Newline) if !field.has_choices() => {
                    field.text.insert_newline();
                    true
                }
                Some(Command::NextField) => {
                    *focus = (*focus + 1) % fields.len();
                    true
                }
                Some(Command::PrevField) => {
                    *focus = (*focus + fields.len() - 1) % fields.len();
                    true
                }
                Some(Command::Submit) => {
                    if field.value().is_empty() {
                        let id = field.question.id.clone();
                        state.notify(ToastLevel::Error, format!("answer \"{id}\" is empty"));
                        true
                    } else if *focus + 1 < fields.len() {
                        *focus += 1;
                        true
                    } else if let Some(empty) = fields.iter().position(|f| f.value().is_empty()) {
                        *focus = empty;
                        let id = fields[empty].question.id.clone();
                        state.notify(ToastLevel::Error, format!("answer \"{id}\" is empty"));
                        true
                    } else {
                        let answers = fields
                            .iter()
                            .map(|f| (f.question.id.clone(), f.value()))
                            .collect();
                        out.push(Action::AnswerAsk {
                            job_id: job_id.clone(),
                            answers,
                        });
                        false
                    }
                }
                _ => {
                    if !field.has_choices() {
                        field.text.input(k);
                    }
                    true
                }
            }
        }
        Overlay::Instructions { job_id, verb, text } => {
            match state.keymap.lookup(Context::AnswerForm, chord) {
                Some(Command::Cancel) => false,
                Some(Command::Newline) => {
                    text.insert_newline();
                    true
                }
                Some(Command::Submit) => {
                    let instructions = text.lines().join("\n").trim().to_string();
                    out.push(Action::Resume {
                        job_id: job_id.clone(),
                        verb: *verb,
                        instructions,
                    });
                    false
                }
                _ => {
                    text.input(k);
                    true
                }
            }
        }
        Overlay::Compose {
            thread_id,
            reply_to,
            text,
            agents,
        } => match state.keymap.lookup(Context::AnswerForm, chord) {
            Some(Command::Cancel) => false,
            Some(Command::Newline) => {
                text.insert_newline();
                true
            }
            Some(Command::NextField) => {
                complete_mention(text, agents);
                true
            }
            Some(Command::Submit) => {
                let body = text.lines().join("\n").trim().to_string();
                if body.is_empty() {
                    state.notify(ToastLevel::Error, "message is empty");
                    true
                } else {
                    out.push(Action::SendChat {
                        thread_id: thread_id.clone(),
                        body,
                        reply_to: *reply_to,
                    });
                    false
                }
            }
            _ => {
                text.input(k);
                true
            }
        },
        // Handled by `quit_key` above.
        Overlay::Stopping { .. } => true,
    };
    if keep {
        state.overlay = Some(ov);
    }
}

fn confirmed(c: &Confirm, force: bool) -> Action {
    match c {
        Confirm::KillRoot { root_id, .. } => Action::KillRoot {
            root_id: root_id.clone(),
            force,
        },
        Confirm::CancelJob { job_id } => Action::CancelJob {
            job_id: job_id.clone(),
        },
        Confirm::Abort { job_id } => Action::Resume {
            job_id: job_id.clone(),
            verb: ResumeVerb::Abort,
            instructions: String::new(),
        },
        Confirm::Quit { .. } => Action::Detach,
    }
}

/// Completes the `@word` before the cursor with the first agent it prefixes.
fn complete_mention(text: &mut TextArea<'static>, agents: &[String]) {
    let ratatui_textarea::DataCursor(row, col) = text.cursor();
    let line: Vec<char> = text.lines()[row].chars().collect();
    let before: String = line[..col.min(line.len())].iter().collect();
    let Some(at) = before.rfind('@') else { return };
    let partial = &before[at + 1..];
    if partial.contains(char::is_whitespace) {
        return;
    }
    if let Some(agent) = agents
        .iter()
        .find(|a| a.starts_with(partial) && a.as_str() != partial)
    {
        text.insert_str(format!("{} ", &agent[partial.len()..]));
    }
}

fn mouse(state: &mut State, snap: &Snapshot, m: MouseEvent, out: &mut Vec<Action>) {
    if state.overlay.is_some() {
        return;
    }
    let area = Rect::new(0, 0, state.size.0, state.size.1);
    let a = layout::areas(area, state, snap);
    let Some((pane, rect)) = a.pane_at(m.column, m.row) else {
        return;
    };
    match m.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            if pane != state.focus {
                focus(state, snap, pane, out);
            }
            let inner_row = m.row.saturating_sub(rect.y + 1) as usize;
            let height = rect.height.saturating_sub(2) as usize;
            if pane == Pane::Tree {
                let rows = rows::tree_rows(snap, state);
                let sel = rows
                    .iter()
                    .position(|r| Some(&r.node.id) == state.sel.tree.as_ref())
                    .unwrap_or(0);
                let header = widgets::tree::HEADER_ROWS as usize;
                let offset = rows::scroll_offset(sel, height.saturating_sub(header));
                let hit = inner_row
                    .checked_sub(header)
                    .and_then(|i| rows.get(offset + i));
                if let Some(r) = hit {
                    state.sel.tree = Some(r.node.id.clone());
                    state.dag_root = None;
                }
                record_hints(state, snap);
            } else if pane == Pane::Attention {
                let items = rows::attention_rows(snap, state);
                let per = (layout::ATTENTION_ITEM_LINES + 1) as usize;
                if let Some(item) = items.get(inner_row / per) {
                    state.sel.attention = Some(item.key());
                }
                follow_attention(state, snap);
            }
        }
        MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
            let d = if m.kind == MouseEventKind::ScrollDown {
                1
            } else {
                -1
            };
            let prev = state.focus;
            state.focus = pane;
            step(state, snap, d, out);
            state.focus = prev;
        }
        _ => {}
    }
}
