//! The context footer: the few keys that matter in the focused pane, overlay or input
//! mode, read from the keymap so a user override shows its own key.
//!
//! Owns the bottom line when no text line (filter, command) is open.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::hints;
use crate::keymap::{Command, Context};
use crate::state::{Overlay, State};
use crate::theme::Theme;

/// The (context, command, label) hints of each situation, in display order.
pub fn footer_hints(state: &State) -> Vec<(String, &'static str)> {
    use Command::*;
    // The quit question and the stopping frame take plain letters, shown in their box.
    let (ctx, wanted): (Context, &[(Command, &'static str)]) = match &state.overlay {
        Some(Overlay::Confirm(crate::state::Confirm::Quit { .. }))
        | Some(Overlay::Stopping { .. }) => return Vec::new(),
        Some(Overlay::Help { .. }) => (Context::Global, &[(Down, "scroll"), (Back, "close")]),
        Some(Overlay::Confirm(_)) => (
            Context::Dialog,
            &[(Confirm, "confirm"), (Force, "force"), (Cancel, "cancel")],
        ),
        Some(Overlay::Promote { .. }) => (
            Context::Dialog,
            &[(Down, "choose"), (Submit, "promote"), (Cancel, "cancel")],
        ),
        Some(Overlay::Answer { .. }) => (
            Context::AnswerForm,
            &[
                (Submit, "next/submit"),
                (Newline, "new line"),
                (NextField, "next field"),
                (Down, "choice"),
                (Cancel, "cancel"),
            ],
        ),
        Some(Overlay::Instructions { .. }) => (
            Context::AnswerForm,
            &[
                (Submit, "submit"),
                (Newline, "new line"),
                (Cancel, "cancel"),
            ],
        ),
        Some(Overlay::Compose { .. }) => (
            Context::AnswerForm,
            &[
                (Submit, "send"),
                (Newline, "new line"),
                (NextField, "complete @"),
                (Cancel, "cancel"),
            ],
        ),
        None => match state.focus {
            crate::state::Pane::Attention => (
                Context::Attention,
                &[
                    (Answer, "answer"),
                    (Retry, "retry"),
                    (Continue, "continue"),
                    (Abort, "abort"),
                    (Detail, "detail"),
                    (Kill, "kill root"),
                    (Copy, "copy cmd"),
                ],
            ),
            crate::state::Pane::Tree => (
                Context::Tree,
                &[
                    (Open, "detail"),
                    (ToggleFold, "fold"),
                    (Kill, "kill root"),
                    (CancelJob, "cancel"),
                    (Copy, "copy id"),
                    (Filter, "filter"),
                ],
            ),
            crate::state::Pane::Dag => (
                Context::Dag,
                &[
                    (Open, "detail"),
                    (RootNext, "next root"),
                    (Kill, "kill root"),
                    (Copy, "copy id"),
                ],
            ),
            crate::state::Pane::Threads => (
                Context::Threads,
                &[
                    (SectionNext, "section"),
                    (Compose, "write"),
                    (Reply, "reply"),
                    (Promote, "promote"),
                    (MarkRead, "mark read"),
                ],
            ),
            crate::state::Pane::Detail => (
                Context::Detail,
                &[
                    (Down, "scroll"),
                    (Back, "close"),
                    (Copy, "copy id"),
                    (Kill, "kill root"),
                ],
            ),
        },
    };
    let mut out: Vec<(String, &'static str)> = wanted
        .iter()
        .filter_map(|(c, label)| {
            state
                .keymap
                .key_for(ctx, *c)
                .or_else(|| state.keymap.key_for(Context::Global, *c))
                .map(|k| (k, *label))
        })
        .collect();
    if state.overlay.is_none() {
        for (c, label) in [
            (Zoom, "zoom"),
            (CommandLine, "command"),
            (Help, "help"),
            (Quit, "quit"),
        ] {
            if let Some(k) = state.keymap.key_for(Context::Global, c) {
                out.push((k, label));
            }
        }
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let mut spans = vec![ratatui::text::Span::raw(" ")];
    spans.extend(hints(&footer_hints(state), theme));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
