//! The context footer: the keys that matter in the focused pane (for the Attention pane,
//! the selected item's kind), overlay or input mode, read from the keymap so a user
//! override shows its own key.
//!
//! Owns the bottom line when no text line (filter, command) is open. When the line is too
//! narrow, pane keys drop from the end first; help and quit always stay.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::hints;
use crate::keymap::{Command, Context};
use crate::rows;
use crate::state::{Overlay, State};
use crate::theme::Theme;
use crate::view::{AttentionKind, Snapshot};

/// What the selected attention item is, for its keys.
fn selected_kind<'a>(state: &State, snap: &'a Snapshot) -> Option<&'a AttentionKind> {
    rows::attention_rows(snap, state)
        .into_iter()
        .find(|a| state.sel.attention.as_deref() == Some(a.key().as_str()))
        .map(|a| &a.kind)
}

/// The keys a situation offers: the context they are looked up in and (command, label)
/// pairs in display order.
type Wanted = (Context, &'static [(Command, &'static str)]);

/// The (key, label) hints of each situation, in display order; help and quit last.
pub fn footer_hints(state: &State, snap: &Snapshot) -> Vec<(String, &'static str)> {
    use Command::*;
    let (ctx, wanted) = match &state.overlay {
        // The quit question and the stopping frame take plain letters, shown in their box.
        Some(Overlay::Confirm(crate::state::Confirm::Quit)) | Some(Overlay::Stopping { .. }) => {
            return Vec::new();
        }
        Some(ov) => overlay_keys(ov),
        None => pane_keys(state, snap),
    };
    let key = |c: Command, ctx: Context| {
        state
            .keymap
            .key_for(ctx, c)
            .or_else(|| state.keymap.key_for(Context::Global, c))
    };
    let mut out: Vec<(String, &'static str)> = wanted
        .iter()
        .filter_map(|(c, label)| key(*c, ctx).map(|k| (k, *label)))
        .collect();
    if state.overlay.is_none() {
        for (c, label) in [
            (Zoom, "zoom"),
            (CommandLine, "command"),
            (Messages, "messages"),
            (Help, "help"),
            (Quit, "quit"),
        ] {
            if let Some(k) = key(c, Context::Global) {
                out.push((k, label));
            }
        }
    }
    out
}

/// The keys of an open overlay (the caller shows none for the quit question and the
/// stopping frame, which list their letters in their own box).
fn overlay_keys(ov: &Overlay) -> Wanted {
    use Command::*;
    match ov {
        Overlay::Help { .. } => (Context::Global, &[(Down, "scroll"), (Back, "close")]),
        Overlay::Usage { .. } => (
            Context::Global,
            &[(Down, "move"), (Open, "open"), (Back, "close")],
        ),
        Overlay::Search { .. } => (
            Context::Global,
            &[(Down, "move"), (Open, "jump"), (Back, "close")],
        ),
        Overlay::Messages { .. } | Overlay::Output { .. } => (
            Context::Global,
            &[
                (Down, "scroll"),
                (PageDown, "page"),
                (Bottom, "end"),
                (Back, "close"),
            ],
        ),
        // Only a kill has a forced form (`job kill --force`); land and discard have none.
        Overlay::Confirm(crate::state::Confirm::KillRoot { .. }) => (
            Context::Dialog,
            &[(Confirm, "confirm"), (Force, "force"), (Cancel, "cancel")],
        ),
        Overlay::Confirm(_) => (Context::Dialog, &[(Confirm, "confirm"), (Cancel, "cancel")]),
        Overlay::Promote { .. } => (
            Context::Dialog,
            &[(Down, "choose"), (Submit, "promote"), (Cancel, "cancel")],
        ),
        Overlay::Answer { .. } => (
            Context::AnswerForm,
            &[
                (Submit, "next/submit"),
                (Newline, "new line"),
                (NextField, "next field"),
                (Down, "choice"),
                (Cancel, "cancel"),
            ],
        ),
        Overlay::Instructions { .. } | Overlay::Comment { .. } => (
            Context::AnswerForm,
            &[
                (Submit, "submit"),
                (Newline, "new line"),
                (Cancel, "cancel"),
            ],
        ),
        Overlay::Compose { .. } => (
            Context::AnswerForm,
            &[
                (Submit, "send"),
                (Newline, "new line"),
                (NextField, "complete @"),
                (Cancel, "cancel"),
            ],
        ),
        Overlay::Stopping { .. } => (Context::Global, &[]),
    }
}

/// The keys of the focused pane (and of the selected attention item's kind).
fn pane_keys(state: &State, snap: &Snapshot) -> Wanted {
    use Command::*;
    match state.focus {
        crate::state::Pane::Attention => match selected_kind(state, snap) {
            Some(AttentionKind::Ask { .. }) => (
                Context::Attention,
                &[
                    (Answer, "answer"),
                    (Detail, "detail"),
                    (Kill, "kill root"),
                    (Copy, "copy cmd"),
                ],
            ),
            Some(AttentionKind::Failure { .. }) => (
                Context::Attention,
                &[
                    (Retry, "retry"),
                    (Continue, "continue"),
                    (Abort, "abort"),
                    (Answer, "failed leg"),
                    (Kill, "kill root"),
                    (Copy, "copy cmd"),
                ],
            ),
            Some(AttentionKind::Stall { .. }) => (
                Context::Attention,
                &[
                    (CancelJob, "cancel"),
                    (LeaveStall, "leave it"),
                    (Detail, "detail"),
                    (Kill, "kill root"),
                ],
            ),
            Some(
                AttentionKind::Preflight { .. }
                | AttentionKind::Overlap { .. }
                | AttentionKind::Conflict { .. },
            ) => (
                Context::Attention,
                &[(Detail, "detail"), (Kill, "kill root"), (Copy, "copy cmd")],
            ),
            None => (Context::Attention, &[]),
        },
        crate::state::Pane::Tree => (
            Context::Tree,
            &[
                (Open, "detail"),
                (ToggleFold, "fold"),
                (Kill, "kill root"),
                (CancelJob, "cancel"),
                (Mark, "mark"),
                (Copy, "copy id"),
                (Filter, "filter"),
                (Sort(crate::sort::SortKey::State), "sort"),
            ],
        ),
        crate::state::Pane::Agents => (Context::Agents, &[(Open, "its jobs"), (Copy, "copy id")]),
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
        crate::state::Pane::Detail if state.detail_tab == crate::live::DetailTab::Diff => (
            Context::Detail,
            &[
                (FileNext, "file"),
                (HunkNext, "hunk"),
                (DiffSearch, "search"),
                (Comment, "comment"),
                (Review, "review"),
                (Land, "land"),
                (Discard, "discard"),
                (Back, "close"),
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
    }
}

/// How many keys of a hint list are kept at `width`: the last two (help and quit outside
/// overlays) always, then as many of the rest, in order, as fit.
pub fn fit_hints(
    all: &[(String, &'static str)],
    width: usize,
    keep_tail: usize,
) -> Vec<(String, &'static str)> {
    let cost = |h: &(String, &str)| super::str_width(&h.0) + 1 + super::str_width(h.1) + 2;
    let split = all.len().saturating_sub(keep_tail);
    let (head, tail) = all.split_at(split);
    let mut used: usize = 1 + tail.iter().map(cost).sum::<usize>();
    let mut out = Vec::new();
    for h in head {
        if used + cost(h) > width {
            break;
        }
        used += cost(h);
        out.push(h.clone());
    }
    out.extend(tail.iter().cloned());
    out
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let all = footer_hints(state, snap);
    let keep = if state.overlay.is_none() { 2 } else { 1 };
    let shown = fit_hints(&all, area.width as usize, keep);
    let mut spans = vec![ratatui::text::Span::raw(" ")];
    spans.extend(hints(&shown, theme));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
