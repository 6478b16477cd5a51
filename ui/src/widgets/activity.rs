//! The Detail drawer's Activity tab: a job's steps oldest first, newest at the bottom,
//! following new steps until the operator moves up; calls (→) and results (←) in distinct
//! colours; the selected step's detail opened below it with Enter; long steps cut or, with
//! `w`, wrapped; the `/` filter's steps with their matches highlighted.
//!
//! Owns drawing of `JobDetail::activity` and the tab header; selection lives in `State`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{row_style, truncate, wrap};
use crate::live::{DetailTab, Step};
use crate::rows;
use crate::sanitize::clean;
use crate::search::{Filter, count_note};
use crate::state::{FilterScope, State};
use crate::theme::{Slot, Theme};
use crate::view::{JobDetail, utc_clock};

/// The tab header in `width` columns: the active tab highlighted; `diff` when the job has
/// a worktree; `note` (the Activity tab's state) before the keys, or on a line of its own
/// when it does not fit beside the tabs (the keys are what gets cut).
pub fn tabs(
    tab: DetailTab,
    diff: bool,
    note: String,
    theme: &Theme,
    width: usize,
) -> Vec<Line<'static>> {
    let style = |on: bool| {
        if on {
            theme.style(Slot::Accent)
        } else {
            theme.style(Slot::Muted)
        }
    };
    let mut spans = vec![
        Span::styled(" overview", style(tab == DetailTab::Overview)),
        Span::styled(" │ ", theme.style(Slot::Muted)),
        Span::styled("activity", style(tab == DetailTab::Activity)),
    ];
    if diff {
        spans.push(Span::styled(" │ ", theme.style(Slot::Muted)));
        spans.push(Span::styled("diff", style(tab == DetailTab::Diff)));
    }
    let hint = match tab {
        DetailTab::Overview => " (h/l switch)",
        DetailTab::Activity => " (G follows, Enter step, / search, w wrap, h/l switch)",
        DetailTab::Diff => {
            " (]/[ file, }/{ hunk, / search, c comment, R review, M land, D discard)"
        }
    };
    let note = Span::styled(format!("  {note}"), theme.style(Slot::Accent));
    let names_w: usize = spans.iter().map(Span::width).sum();
    let mut lines = Vec::new();
    if note.width() > 2 && names_w + note.width() > width {
        lines.push(Line::from(vec![note]));
    } else if note.width() > 2 {
        spans.push(note);
    }
    spans.push(Span::styled(hint, theme.style(Slot::Muted)));
    lines.insert(0, Line::from(spans));
    lines
}

/// The Activity tab's state for its header: following the newest step (as `tail -f`) or
/// paused on one (`G` follows again, as the keys after it say), wrapping, and the
/// filter's `n of m`.
pub fn note(state: &State, d: &JobDetail) -> String {
    if state.detail_tab != DetailTab::Activity {
        return String::new();
    }
    let mut parts = vec![if state.activity_sel.is_none() && !state.activity_open {
        "● following".to_string()
    } else {
        "‖ paused".to_string()
    }];
    if state.activity_wrap {
        parts.push("wrapped".to_string());
    }
    let query = state.filter_for(FilterScope::Activity);
    let count = count_note(
        query,
        rows::activity_rows(&d.activity, state).len(),
        d.activity.len(),
    );
    if !count.is_empty() {
        parts.push(count);
    }
    parts.join(" · ")
}

fn slot(step: &Step) -> Slot {
    match step.kind.as_str() {
        "tool_call" | "command" | "file_change" => Slot::Accent,
        "tool_result" | "usage" | "output" | "truncated" => Slot::Muted,
        "error" | "stderr" => Slot::JobFailed,
        _ => Slot::Text,
    }
}

/// The index of the selected step among `steps`: the chosen one, else the newest.
pub fn selected(state: &State, steps: &[&Step]) -> Option<usize> {
    match state.activity_sel {
        Some(seq) => steps.iter().position(|s| s.seq == seq),
        None => steps.len().checked_sub(1),
    }
}

/// A step's one-line summary as the agent wrote it: escapes removed, its indentation kept
/// (a stack trace or indented output keeps its shape).
fn summary_line(step: &Step) -> String {
    let text = clean(&step.summary);
    text.lines().next().unwrap_or("").trim_end().to_string()
}

/// Every line of the tab for `width` columns, and the line of the selected step.
pub fn content(
    d: &JobDetail,
    state: &State,
    width: usize,
    theme: &Theme,
) -> (Vec<Line<'static>>, usize) {
    let mut out = Vec::new();
    let steps = rows::activity_rows(&d.activity, state);
    let sel = selected(state, &steps);
    let mut sel_line = 0;
    let mut filter = Filter::new(state.filter_for(FilterScope::Activity));
    let hit = theme.style(Slot::FilterMatch);
    if steps.is_empty() {
        let msg = if d.activity.is_empty() {
            "  (no activity yet)"
        } else {
            "  No step matches the filter."
        };
        out.push(Line::from(Span::styled(msg, theme.style(Slot::Muted))));
    }
    for (i, step) in steps.iter().enumerate() {
        let is_sel = Some(i) == sel;
        if is_sel {
            sel_line = out.len();
        }
        let mark = if is_sel { "▌" } else { " " };
        let head = format!("{mark}{} {} ", utc_clock(step.ts_ms), step.glyph());
        let head_w = super::str_width(&head);
        let room = width.saturating_sub(head_w);
        let text = summary_line(step);
        let parts = if state.activity_wrap {
            wrap(&text, room)
        } else {
            vec![truncate(&text, room)]
        };
        let style = row_style(theme.style(slot(step)), is_sel, theme);
        for (n, part) in parts.into_iter().enumerate() {
            let lead = if n == 0 {
                head.clone()
            } else {
                " ".repeat(head_w)
            };
            let spans = vec![
                Span::styled(lead, row_style(theme.style(Slot::Muted), is_sel, theme)),
                Span::styled(part, style),
            ];
            out.push(Line::from(filter.mark(spans, hit)));
        }
        if is_sel && state.activity_open {
            let text = step.detail.as_deref().unwrap_or(&step.summary);
            for l in wrap(&clean(text), width.saturating_sub(4)) {
                let spans = vec![Span::styled(format!("    {l}"), theme.style(Slot::Text))];
                out.push(Line::from(filter.mark(spans, hit)));
            }
        }
    }
    (out, sel_line)
}

/// Draws the tab, scrolled so the selected step (the newest when following) is in view.
pub fn render(frame: &mut Frame, area: Rect, state: &State, d: &JobDetail, theme: &Theme) {
    let (lines, sel_line) = content(d, state, area.width as usize, theme);
    let h = area.height as usize;
    let scroll = if state.activity_sel.is_none() && !state.activity_open {
        lines.len().saturating_sub(h)
    } else {
        sel_line
            .saturating_sub(h.saturating_sub(1) / 2)
            .min(lines.len().saturating_sub(h))
    };
    let total = lines.len();
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), area);
    super::scrollbar(frame, area, total, scroll, theme);
}
