//! The Detail drawer's Activity tab: a job's steps oldest first, newest at the bottom,
//! following new steps until the operator moves up; calls (→) and results (←) in distinct
//! colours; the selected step's detail opened below it with Enter.
//!
//! Owns drawing of `JobDetail::activity` and the tab header; selection lives in `State`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{row_style, truncate, wrap};
use crate::live::{DetailTab, Step};
use crate::sanitize::{clean, clean_line};
use crate::state::State;
use crate::theme::{Slot, Theme};
use crate::view::{JobDetail, utc_clock};

/// The tab header: the active tab highlighted; `diff` when the job has a worktree.
pub fn tabs(tab: DetailTab, diff: bool, theme: &Theme) -> Line<'static> {
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
        DetailTab::Activity => " (h/l switch, Enter opens a step)",
        DetailTab::Diff => {
            " (]/[ file, }/{ hunk, / search, c comment, R review, M land, D discard)"
        }
    };
    spans.push(Span::styled(hint, theme.style(Slot::Muted)));
    Line::from(spans)
}

fn slot(step: &Step) -> Slot {
    match step.kind.as_str() {
        "tool_call" | "command" | "file_change" => Slot::Accent,
        "tool_result" | "usage" | "output" | "truncated" => Slot::Muted,
        "error" | "stderr" => Slot::JobFailed,
        _ => Slot::Text,
    }
}

/// The index of the selected step: the chosen one, else the newest.
pub fn selected(state: &State, steps: &[Step]) -> Option<usize> {
    match state.activity_sel {
        Some(seq) => steps.iter().position(|s| s.seq == seq),
        None => steps.len().checked_sub(1),
    }
}

/// Every line of the tab for `width` columns, and the line of the selected step.
pub fn content(
    d: &JobDetail,
    state: &State,
    width: usize,
    theme: &Theme,
) -> (Vec<Line<'static>>, usize) {
    let mut out = Vec::new();
    let sel = selected(state, &d.activity);
    let mut sel_line = 0;
    if d.activity.is_empty() {
        out.push(Line::from(Span::styled(
            "  (no activity yet)",
            theme.style(Slot::Muted),
        )));
    }
    for (i, step) in d.activity.iter().enumerate() {
        let is_sel = Some(i) == sel;
        if is_sel {
            sel_line = out.len();
        }
        let mark = if is_sel { "▌" } else { " " };
        let head = format!("{mark}{} {} ", utc_clock(step.ts_ms), step.glyph());
        let room = width.saturating_sub(super::str_width(&head));
        out.push(Line::from(vec![
            Span::styled(head, row_style(theme.style(Slot::Muted), is_sel, theme)),
            Span::styled(
                truncate(&clean_line(&step.summary), room),
                row_style(theme.style(slot(step)), is_sel, theme),
            ),
        ]));
        if is_sel && state.activity_open {
            let text = step.detail.as_deref().unwrap_or(&step.summary);
            for l in wrap(&clean(text), width.saturating_sub(4)) {
                out.push(Line::from(Span::styled(
                    format!("    {l}"),
                    theme.style(Slot::Text),
                )));
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
    frame.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)), area);
}
