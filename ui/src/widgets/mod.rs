//! Widgets: one file per pane, bar, overlay and dialog, plus the shared bits they use.
//!
//! Owns drawing only: every widget reads `&State`, `&Snapshot` and `&Theme` and writes
//! into a frame region. Agent text passes through `sanitize` before it is drawn. Must not
//! change state (drawing cannot move a selection).

pub mod activity;
pub mod agents;
pub mod answer_form;
pub mod attention;
pub mod command;
pub mod dag;
pub mod detail;
pub mod dialog;
pub mod diff;
pub mod filter;
pub mod footer;
pub mod groups;
pub mod help;
pub mod messages;
pub mod search;
pub mod status;
pub mod threads;
pub mod tree;
pub mod usage;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, BorderType, Borders, Clear, Paragraph, Scrollbar, ScrollbarOrientation, ScrollbarState,
};

use crate::state::{Pane, State};
use crate::theme::{Slot, Theme};
use crate::view::{JobState, RootView, RunState};

/// Spinner frames for running jobs, advanced by the tick.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub fn job_slot(s: JobState) -> Slot {
    match s {
        JobState::Queued => Slot::JobQueued,
        JobState::Running => Slot::JobRunning,
        JobState::Succeeded => Slot::JobSucceeded,
        JobState::Failed => Slot::JobFailed,
        // Waiting on a human, as a blocked job does.
        JobState::Blocked | JobState::Interrupted => Slot::JobBlocked,
        JobState::Cancelled => Slot::JobCancelled,
    }
}

pub fn run_slot(s: RunState) -> Slot {
    match s {
        RunState::Running => Slot::RunRunning,
        RunState::AwaitingHuman => Slot::RunAwaiting,
        RunState::Done => Slot::RunDone,
        RunState::Blocked => Slot::RunBlocked,
        RunState::Failed => Slot::RunFailed,
        RunState::Killed | RunState::Aborted => Slot::RunKilled,
    }
}

/// A state glyph; running jobs spin with the tick.
pub fn job_glyph(s: JobState, tick: u64) -> &'static str {
    match s {
        JobState::Queued => "○",
        JobState::Running => SPINNER[(tick % SPINNER.len() as u64) as usize],
        JobState::Succeeded => "✓",
        JobState::Failed => "✗",
        JobState::Blocked => "◆",
        JobState::Cancelled => "⊘",
        JobState::Interrupted => "◇",
    }
}

pub fn run_glyph(s: RunState, tick: u64) -> &'static str {
    match s {
        RunState::Running => SPINNER[(tick % SPINNER.len() as u64) as usize],
        RunState::AwaitingHuman => "?",
        RunState::Done => "✓",
        RunState::Blocked => "◆",
        RunState::Failed => "✗",
        RunState::Killed => "☠",
        RunState::Aborted => "⊗",
    }
}

/// A root's glyph and slot: its outcome once over; while live, the spinner only when one
/// of its jobs runs, else the queued glyph (nothing is moving).
pub fn root_glyph(root: &RootView, tick: u64) -> (&'static str, Slot) {
    if root.state == RunState::Running && root.tree.rollup().running == 0 {
        ("○", Slot::JobQueued)
    } else {
        (run_glyph(root.state, tick), run_slot(root.state))
    }
}

/// The bordered frame of a pane: `N Title` plus an optional note, focus shown by colour
/// and a heavier border.
pub fn pane_block<'a>(pane: Pane, state: &State, theme: &Theme, note: String) -> Block<'a> {
    let focused = state.focus == pane;
    let border = if focused {
        theme.style(Slot::PaneFocus)
    } else {
        theme.style(Slot::PaneBorder)
    };
    let title_style = if focused {
        theme.style(Slot::PaneFocus)
    } else {
        theme.style(Slot::PaneTitle)
    };
    let mut title = vec![Span::styled(
        format!(" {} {} ", pane.number(), pane.title()),
        title_style,
    )];
    if !note.is_empty() {
        title.push(Span::styled(format!("{note} "), theme.style(Slot::Muted)));
    }
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(border)
        .title(Line::from(title))
}

/// Cuts `s` to `width` display columns, marking the cut with `…`.
/// The one muted line a pane (or part of one) with nothing to list shows in `area`.
pub fn empty_note(frame: &mut Frame, area: Rect, theme: &Theme, msg: &str) {
    frame.render_widget(
        // Wrapped, not cut: a narrow pane still shows the whole hint.
        Paragraph::new(Span::styled(msg.to_string(), theme.style(Slot::Muted)))
            .wrap(ratatui::widgets::Wrap { trim: false }),
        area,
    );
}

/// `empty_note` for a list pane with no rows: `empty` when it has none, `filtered` when
/// the typed filter hides them all.
pub fn no_rows(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    theme: &Theme,
    empty: &str,
    filtered: &str,
) {
    let msg = if state.filter.is_empty() {
        empty
    } else {
        filtered
    };
    empty_note(frame, area, theme, msg);
}

pub fn truncate(s: &str, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw > width {
            if w + 1 > width {
                out.pop();
            }
            out.push('…');
            return out;
        }
        out.push(c);
        w += cw;
    }
    out
}

/// Pads (or cuts) `s` to exactly `width` columns.
pub fn fit(s: &str, width: usize) -> String {
    let t = truncate(s, width);
    let w = str_width(&t);
    format!("{t}{}", " ".repeat(width.saturating_sub(w)))
}

pub fn char_width(c: char) -> usize {
    Span::raw(c.to_string()).width()
}

pub fn str_width(s: &str) -> usize {
    Span::raw(s).width()
}

/// Word-wraps `s` to `width` columns (long words are split); a line's leading whitespace
/// is repeated on its continuation lines, so code, JSON, YAML and diffs keep their shape.
///
/// For verbatim text (prompts, raw output, code): runs of spaces inside a line stay as
/// they are and a long word fills the line it starts on, which textwrap's word splitting
/// would not keep; Markdown prose is wrapped by `markdown` with textwrap's first-fit.
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for para in s.split('\n') {
        let body = para.trim_start_matches([' ', '\t']);
        let indent: String = para[..para.len() - body.len()].replace('\t', "    ");
        // An indent as wide as the line would leave no room: wrap flush instead.
        let indent = if str_width(&indent) * 2 > width {
            String::new()
        } else {
            indent
        };
        let iw = str_width(&indent);
        let mut line = indent.clone();
        let mut w = iw;
        for word in body.split(' ') {
            let ww = str_width(word);
            if w > iw && w + 1 + ww > width {
                out.push(std::mem::replace(&mut line, indent.clone()));
                w = iw;
            }
            if w > iw {
                line.push(' ');
                w += 1;
            }
            for c in word.chars() {
                let cw = char_width(c);
                if w + cw > width && w > iw {
                    out.push(std::mem::replace(&mut line, indent.clone()));
                    w = iw;
                }
                line.push(c);
                w += cw;
            }
        }
        out.push(line);
    }
    out
}

/// Centres a `w`×`h` rectangle in `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// The rounded, titled border every overlay (dialog, form, pager, help) is drawn in.
pub fn overlay_block<'a>(border: Style, title: Span<'a>) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(title)
}

/// Clears `r` of the panes beneath and draws `block` there; returns its inside.
pub fn draw_overlay(frame: &mut Frame, r: Rect, block: Block) -> Rect {
    frame.render_widget(Clear, r);
    let inner = block.inner(r);
    frame.render_widget(block, r);
    inner
}

/// `key desc` pairs as styled spans, for footers and dialog hints.
pub fn hints<'a>(pairs: &[(String, &str)], theme: &Theme) -> Vec<Span<'a>> {
    let mut v = Vec::new();
    for (i, (k, d)) in pairs.iter().enumerate() {
        if i > 0 {
            v.push(Span::styled("  ", theme.style(Slot::FooterDesc)));
        }
        v.push(Span::styled(k.clone(), theme.style(Slot::FooterKey)));
        v.push(Span::styled(format!(" {d}"), theme.style(Slot::FooterDesc)));
    }
    v
}

/// lazygit's scroll position: a thumb on the border right of `view` (the rows a text is
/// drawn in) when its `total` lines do not fit, at `top` (the first line shown); nothing
/// when they all fit.
pub fn scrollbar(frame: &mut Frame, view: Rect, total: usize, top: usize, theme: &Theme) {
    let rows = view.height as usize;
    if total <= rows {
        return;
    }
    let edge = Rect::new(view.x, view.y, view.width + 1, view.height);
    let mut at = ScrollbarState::new(total - rows + 1)
        .position(top.min(total - rows))
        .viewport_content_length(rows);
    let bar = Scrollbar::new(ScrollbarOrientation::VerticalRight)
        .begin_symbol(None)
        .end_symbol(None)
        .track_symbol(None)
        .thumb_symbol("█")
        .thumb_style(theme.style(Slot::Accent));
    frame.render_stateful_widget(bar, edge, &mut at);
}

/// `hints` laid out in lines of `width` columns, broken between pairs so none is cut.
pub fn hint_lines<'a>(pairs: &[(String, &str)], width: usize, theme: &Theme) -> Vec<Line<'a>> {
    let mut out: Vec<Line<'a>> = Vec::new();
    let mut line: Vec<(String, &str)> = Vec::new();
    let mut w = 0;
    for (k, d) in pairs {
        let pw = str_width(k) + 1 + str_width(d);
        if !line.is_empty() && w + 2 + pw > width {
            out.push(Line::from(hints(&std::mem::take(&mut line), theme)));
            w = 0;
        }
        w += if line.is_empty() { pw } else { 2 + pw };
        line.push((k.clone(), d));
    }
    if !line.is_empty() {
        out.push(Line::from(hints(&line, theme)));
    }
    out
}

/// A row style: the selection style patched over the base when selected.
pub fn row_style(base: Style, selected: bool, theme: &Theme) -> Style {
    if selected {
        base.patch(theme.style(Slot::Selection))
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_and_wrap() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(wrap("one two three", 7), vec!["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
    }

    #[test]
    fn wrap_keeps_indentation() {
        assert_eq!(
            wrap("{\n    \"key\": \"a long value here\"\n}", 20),
            vec!["{", "    \"key\": \"a long", "    value here\"", "}"]
        );
        assert_eq!(wrap("  - item one two", 10), vec!["  - item", "  one two"]);
    }
}
