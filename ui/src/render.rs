//! `render`: draws one frame from the state, the snapshot and the theme.
//!
//! Owns composition — status bar, panes per `layout`, message bar, footer or text line,
//! overlays — never data loading. Rendering is a pure function of its inputs, so a frame
//! drawn twice is identical (no flicker from redraws).

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::action::ResumeVerb;
use crate::layout;
use crate::state::{Overlay, Pane, State};
use crate::theme::Theme;
use crate::view::Snapshot;
use crate::widgets;

pub fn render(frame: &mut Frame, state: &State, snap: &Snapshot, theme: &Theme) {
    let area = frame.area();
    let a = layout::areas(area, state, snap);
    widgets::status::render(frame, a.status, state, snap, theme);
    for (pane, r) in &a.panes {
        match pane {
            Pane::Attention => widgets::attention::render(frame, *r, state, snap, theme),
            Pane::Tree => widgets::tree::render(frame, *r, state, snap, theme),
            Pane::Dag => widgets::dag::render(frame, *r, state, snap, theme),
            Pane::Threads => widgets::threads::render(frame, *r, state, snap, theme),
            Pane::Detail => widgets::detail::render(frame, *r, state, snap, theme),
            Pane::Agents => widgets::agents::render(frame, *r, state, snap, theme),
        }
    }
    widgets::messages::render_bar(frame, a.message, state, theme);
    if state.command.is_some() {
        widgets::command::render(frame, a.footer, state, theme);
    } else if state.filter_editing {
        widgets::filter::render(frame, a.footer, state, theme);
    } else {
        widgets::footer::render(frame, a.footer, state, snap, theme);
    }
    if let Some(overlay) = &state.overlay {
        render_overlay(frame, a.body, overlay, state, snap, theme);
    }
}

/// The overlay over the panes, in `body`.
fn render_overlay(
    frame: &mut Frame,
    body: Rect,
    overlay: &Overlay,
    state: &State,
    snap: &Snapshot,
    theme: &Theme,
) {
    match overlay {
        Overlay::Help {
            scroll,
            query,
            typing,
        } => widgets::help::render(frame, body, state, theme, (*scroll, query, *typing)),
        Overlay::Search { query, typing, sel } => {
            widgets::search::render(frame, body, (query, *typing, *sel), &snap.search, theme)
        }
        Overlay::Usage { sel } => {
            widgets::usage::render(frame, body, *sel, snap.usage.as_ref(), theme)
        }
        Overlay::Confirm(c) => widgets::dialog::render_confirm(frame, body, c, snap.counts, theme),
        Overlay::Stopping { kill } => {
            widgets::dialog::render_stopping(frame, body, *kill, snap, theme)
        }
        Overlay::Promote {
            thread_id,
            seq,
            choice,
        } => {
            let m = snap
                .transcript
                .as_ref()
                .filter(|t| &t.thread_id == thread_id)
                .and_then(|t| t.messages.iter().find(|m| m.seq == *seq));
            let (text, mentions) = m.map_or(("", &[][..]), |m| (m.body.as_str(), &m.mentions[..]));
            widgets::dialog::render_promote(frame, body, (*seq, text, mentions), *choice, theme)
        }
        Overlay::Messages { scroll } => {
            let w = widgets::messages::pager_area(body).width.saturating_sub(2) as usize;
            let lines = widgets::messages::log_lines(&state.messages, w, theme);
            widgets::messages::render_pager(frame, body, "messages", lines, *scroll, theme)
        }
        Overlay::Output {
            title,
            text,
            scroll,
        } => {
            let w = widgets::messages::pager_area(body).width.saturating_sub(2) as usize;
            let lines = widgets::messages::output_lines(text, w, theme);
            widgets::messages::render_pager(frame, body, title, lines, *scroll, theme)
        }
        Overlay::Answer {
            job_id,
            fields,
            focus,
        } => widgets::answer_form::render_answer(frame, body, job_id, fields, *focus, theme),
        Overlay::Instructions { job_id, verb, text } => {
            let note = match verb {
                ResumeVerb::Retry => {
                    "A new attempt of the failed leg runs with these instructions (optional)."
                }
                _ => "The coordinator continues without the failed leg; instructions are optional.",
            };
            let title = format!("{} {job_id}", verb.as_str());
            widgets::answer_form::render_text(frame, body, &title, note, text, verb.as_str(), theme)
        }
        Overlay::Comment {
            job_id,
            anchor,
            text,
        } => widgets::diff::render_comment(frame, body, (job_id, anchor), text, theme),
        Overlay::Compose {
            thread_id,
            reply_to,
            text,
            ..
        } => {
            // The thread's one name is its title (the id only when it is not loaded).
            let name = snap
                .threads
                .iter()
                .find(|t| &t.id == thread_id)
                .map(|t| crate::sanitize::clean_line(&t.title))
                .unwrap_or_else(|| thread_id.clone());
            let title = match reply_to {
                Some(s) => format!("Reply to #{s} in {name}"),
                None => format!("Message to {name}"),
            };
            let note = "A message is a row, never compute: @mentions land in inboxes; p promotes to a job.";
            widgets::answer_form::render_text(frame, body, &title, note, text, "send", theme)
        }
    }
}
