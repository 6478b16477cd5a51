//! Keys while an overlay is open: quit question, pagers, help, dialogs, picker, text forms.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

use super::chat::complete_mention;
use super::page;
use crate::action::{Action, PromoteAction, ResumeVerb, Term, Write};
use crate::keymap::{Command, Context, KeyChord};
use crate::layout;
use crate::state::{AnswerField, Confirm, Overlay, State, ToastLevel};
use crate::view::Snapshot;
use crate::widgets;
use ratatui_textarea::TextArea;

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
            out.push(Action::Term(Term::Detach));
            false
        }
        KeyCode::Enter if asking => {
            out.push(Action::Term(Term::Detach));
            false
        }
        KeyCode::Char('w') if asking => {
            *ov = Overlay::Stopping { kill: false };
            true
        }
        KeyCode::Char('k') if !matches!(ov, Overlay::Stopping { kill: true }) => {
            out.push(Action::Term(Term::QuitKill));
            *ov = Overlay::Stopping { kill: true };
            true
        }
        // Once the kill is under way there is no going back, only detaching.
        _ if cancel => matches!(ov, Overlay::Stopping { kill: true }),
        _ => true,
    }
}

pub(super) fn open_messages(state: &mut State, snap: &Snapshot) {
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

/// The text of a draft the operator would lose by closing the overlay.
fn draft_text(ov: &Overlay) -> String {
    match ov {
        Overlay::Answer { fields, .. } => fields
            .iter()
            .filter(|f| !f.has_choices())
            .map(|f| f.text.lines().join("\n"))
            .collect::<String>(),
        Overlay::Instructions { text, .. }
        | Overlay::Compose { text, .. }
        | Overlay::Comment { text, .. } => text.lines().join("\n"),
        _ => String::new(),
    }
}

pub(super) fn overlay_key(
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
        Overlay::Confirm(Confirm::Quit) | Overlay::Stopping { .. }
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
        Overlay::Search { query, typing, sel } => {
            super::search::key(state, snap, (query, typing, sel), &k, chord, out)
        }
        Overlay::Usage { sel } => super::usage::key(state, snap, sel, chord),
        Overlay::Help {
            scroll,
            query,
            typing,
        } => help_key(state, snap, (scroll, query, typing), k, chord),
        Overlay::Confirm(Confirm::Land {
            job_id, strategy, ..
        }) => super::diff::land_key(state, strategy, job_id, chord, out),
        Overlay::Confirm(Confirm::BulkAnswer { choices, at, .. })
            if matches!(
                state.keymap.lookup(Context::Dialog, chord),
                Some(Command::Up | Command::Down)
            ) =>
        {
            // ↑/↓ pick the one choice every job gets; the lines follow it.
            let n = choices.len();
            *at = match state.keymap.lookup(Context::Dialog, chord) {
                Some(Command::Up) => (*at + n - 1) % n,
                _ => (*at + 1) % n,
            };
            true
        }
        Overlay::Confirm(c) => confirm_key(state, c, chord, out),
        Overlay::Comment {
            job_id,
            anchor,
            text,
        } => match text_box_key(state, text, None, k) {
            BoxKey::Keep => true,
            BoxKey::Close => false,
            BoxKey::Submit(body) if body.is_empty() => {
                state.notify(ToastLevel::Error, "the comment is empty");
                true
            }
            BoxKey::Submit(body) => {
                super::diff::add_comment(state, job_id, anchor, body);
                false
            }
        },
        Overlay::Promote {
            thread_id,
            seq,
            choice,
        } => promote_key(state, thread_id, *seq, choice, chord, out),
        Overlay::Answer {
            job_id,
            fields,
            focus,
        } => answer_key(state, job_id, fields, focus, k, out),
        Overlay::Instructions { job_id, verb, text } => {
            instructions_key(state, job_id, *verb, text, k, out)
        }
        Overlay::Compose {
            thread_id,
            reply_to,
            text,
            agents,
        } => compose_key(state, thread_id, *reply_to, text, agents, k, out),
        // Handled by `quit_key` above.
        Overlay::Stopping { .. } => true,
    };
    if keep {
        state.overlay = Some(ov);
    }
}

/// A key in the help: `/` searches it (typing until Enter; Esc drops the search), the
/// scroll keys move it to its end and no further, any other key closes it.
fn help_key(
    state: &State,
    snap: &Snapshot,
    (scroll, query, typing): (&mut u16, &mut String, &mut bool),
    k: KeyEvent,
    chord: KeyChord,
) -> bool {
    let cmd = state.keymap.lookup(Context::Global, chord);
    if *typing {
        super::search_key(query, typing, &k);
        *scroll = 0;
        return true;
    }
    match cmd {
        Some(Command::Filter) => {
            *typing = true;
            true
        }
        Some(Command::Back) if !query.is_empty() => {
            query.clear();
            true
        }
        _ => {
            let max = help_max(state, snap, query);
            scroll_by(scroll, cmd, page(state) as u16, Some(max))
        }
    }
}

/// How far the help can scroll on this screen with `query` narrowing it.
fn help_max(state: &State, snap: &Snapshot, query: &str) -> u16 {
    let area = Rect::new(0, 0, state.size.0, state.size.1);
    let body = layout::areas(area, state, snap).body;
    let r = widgets::help::area(body);
    let theme = crate::theme::Theme::monochrome();
    let (lines, ..) =
        widgets::help::lines(state, &theme, r.width.saturating_sub(2) as usize, query);
    // The search line, once there is one, takes a row of the inside.
    let inside = r.height.saturating_sub(2 + u16::from(!query.is_empty())) as usize;
    lines.len().saturating_sub(inside) as u16
}

/// A key in a yes/no dialog; `true` keeps it open.
fn confirm_key(state: &mut State, c: &Confirm, chord: KeyChord, out: &mut Vec<Action>) -> bool {
    match state.keymap.lookup(Context::Dialog, chord) {
        Some(Command::Confirm) => {
            out.push(confirmed(c, false));
            // Sent comments leave the drawer's list (a refusal is on the bar to retry).
            if let Confirm::Review { job_id, .. } = c {
                state.diff.comments.retain(|x| &x.job_id != job_id);
            }
            // Marks acted on are spent; a refused one is named on the bar.
            if let Confirm::Bulk { .. } | Confirm::BulkAnswer { .. } = c {
                state.marks.clear();
            }
            false
        }
        Some(Command::Force) if matches!(c, Confirm::KillRoot { .. }) => {
            out.push(confirmed(c, true));
            false
        }
        Some(Command::Cancel) => false,
        _ => true,
    }
}

/// A key in the promote dialog (pick the action a chat message runs as).
fn promote_key(
    state: &State,
    thread_id: &str,
    seq: u64,
    choice: &mut usize,
    chord: KeyChord,
    out: &mut Vec<Action>,
) -> bool {
    match state.keymap.lookup(Context::Dialog, chord) {
        Some(Command::Up) => {
            *choice = choice.saturating_sub(1);
            true
        }
        Some(Command::Down) => {
            *choice = (*choice + 1).min(PromoteAction::ALL.len() - 1);
            true
        }
        Some(Command::Submit) | Some(Command::Confirm) => {
            out.push(Action::Write(Write::Promote {
                thread_id: thread_id.to_string(),
                seq,
                action: Overlay::promote_action(*choice),
            }));
            false
        }
        Some(Command::Cancel) => false,
        _ => true,
    }
}

/// What a key means in a text form (the answer form's bindings serve every form).
fn form_command(state: &State, k: &KeyEvent) -> Option<Command> {
    state
        .keymap
        .lookup(Context::AnswerForm, KeyChord::from_event(k))
}

/// A key in the answer form of an ask round: move between questions, pick a choice, type,
/// and submit once every answer is filled.
fn answer_key(
    state: &mut State,
    job_id: &str,
    fields: &mut [AnswerField],
    focus: &mut usize,
    k: KeyEvent,
    out: &mut Vec<Action>,
) -> bool {
    let cmd = form_command(state, &k);
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
        Some(Command::Submit) => submit_answers(state, job_id, fields, focus, out),
        _ => {
            if !field.has_choices() {
                field.text.input(k);
            }
            true
        }
    }
}

/// Submit on a field: the next field, the first empty one, or the answers themselves.
fn submit_answers(
    state: &mut State,
    job_id: &str,
    fields: &mut [AnswerField],
    focus: &mut usize,
    out: &mut Vec<Action>,
) -> bool {
    if fields[*focus].value().is_empty() {
        let id = fields[*focus].question.id.clone();
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
        out.push(Action::Write(Write::AnswerAsk {
            job_id: job_id.to_string(),
            answers,
        }));
        false
    }
}

/// What a key did in a free-text box.
enum BoxKey {
    Keep,
    Close,
    /// Submitted, with the text trimmed.
    Submit(String),
}

/// A key in a free-text box: Esc closes, Enter submits, the rest edits; Tab completes a
/// mention where the box offers `agents`.
fn text_box_key(
    state: &State,
    text: &mut TextArea<'static>,
    agents: Option<&[String]>,
    k: KeyEvent,
) -> BoxKey {
    match (form_command(state, &k), agents) {
        (Some(Command::Cancel), _) => BoxKey::Close,
        (Some(Command::Newline), _) => {
            text.insert_newline();
            BoxKey::Keep
        }
        (Some(Command::NextField), Some(agents)) => {
            complete_mention(text, agents);
            BoxKey::Keep
        }
        (Some(Command::Submit), _) => BoxKey::Submit(text.lines().join("\n").trim().to_string()),
        _ => {
            text.input(k);
            BoxKey::Keep
        }
    }
}

/// A key in the instructions box of `retry`/`continue`.
fn instructions_key(
    state: &State,
    job_id: &str,
    verb: ResumeVerb,
    text: &mut TextArea<'static>,
    k: KeyEvent,
    out: &mut Vec<Action>,
) -> bool {
    match text_box_key(state, text, None, k) {
        BoxKey::Keep => true,
        BoxKey::Close => false,
        BoxKey::Submit(instructions) => {
            out.push(Action::Write(Write::Resume {
                job_id: job_id.to_string(),
                verb,
                instructions,
            }));
            false
        }
    }
}

/// A key in the chat compose box.
fn compose_key(
    state: &mut State,
    thread_id: &str,
    reply_to: Option<u64>,
    text: &mut TextArea<'static>,
    agents: &[String],
    k: KeyEvent,
    out: &mut Vec<Action>,
) -> bool {
    match text_box_key(state, text, Some(agents), k) {
        BoxKey::Keep => true,
        BoxKey::Close => false,
        BoxKey::Submit(body) if body.is_empty() => {
            state.notify(ToastLevel::Error, "message is empty");
            true
        }
        BoxKey::Submit(body) => {
            out.push(Action::Write(Write::SendChat {
                thread_id: thread_id.to_string(),
                body,
                reply_to,
            }));
            false
        }
    }
}

fn confirmed(c: &Confirm, force: bool) -> Action {
    match c {
        Confirm::KillRoot { root_id, .. } => Action::Write(Write::KillRoot {
            root_id: root_id.clone(),
            force,
        }),
        Confirm::CancelJob { job_id } => Action::Write(Write::CancelJob {
            job_id: job_id.clone(),
        }),
        Confirm::Abort { job_id } => Action::Write(Write::Resume {
            job_id: job_id.clone(),
            verb: ResumeVerb::Abort,
            instructions: String::new(),
        }),
        Confirm::Quit => Action::Term(Term::Detach),
        Confirm::Land {
            job_id, strategy, ..
        } => Action::Write(Write::Land {
            job_id: job_id.clone(),
            strategy: *strategy,
        }),
        Confirm::Discard { job_id, .. } => Action::Write(Write::Discard {
            job_id: job_id.clone(),
        }),
        Confirm::Bulk { verb, job_ids, .. } => Action::Write(Write::Bulk {
            verb: *verb,
            job_ids: job_ids.clone(),
        }),
        Confirm::BulkAnswer {
            job_ids,
            choices,
            at,
            ..
        } => Action::Write(Write::BulkAnswer {
            job_ids: job_ids.clone(),
            choice: choices[*at].clone(),
        }),
        Confirm::Review {
            job_id, comments, ..
        } => Action::Write(Write::Review {
            job_id: job_id.clone(),
            comments: comments.join("\n"),
        }),
    }
}
