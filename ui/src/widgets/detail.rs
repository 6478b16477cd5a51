//! The Detail drawer: one job's prompt, result (decision, summary, findings, delegations),
//! events, error and raw output, pre-wrapped so scrolling is by screen line.
//!
//! Owns drawing of `Snapshot::detail`; loading it is the glue's job (`Load::Detail`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{empty_note, job_glyph, job_slot, pane_block, wrap};
use crate::live::DetailTab;
use crate::sanitize::{clean, clean_line};
use crate::state::{Pane, State};
use crate::theme::{Slot, Theme};
use crate::view::{JobDetail, Snapshot, utc_clock};

/// Every line of the drawer for `width` columns (also used by `update` to bound scrolling).
pub fn content(d: &JobDetail, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let head = |t: &str| {
        Line::from(Span::styled(
            format!("── {t} "),
            theme.style(Slot::PaneTitle),
        ))
    };
    let text = |s: &str, slot: Slot, out: &mut Vec<Line<'static>>| {
        for l in wrap(&clean(s), width.saturating_sub(2)) {
            out.push(Line::from(Span::styled(
                format!("  {l}"),
                theme.style(slot),
            )));
        }
    };
    out.push(Line::from(vec![
        Span::styled(
            format!("{} {} ", job_glyph(d.state, 0), d.state.as_str()),
            theme.style(job_slot(d.state)),
        ),
        Span::styled(d.job_id.clone(), theme.style(Slot::PaneTitle)),
        Span::styled(
            format!(
                "  {} · {} · {} · attempt {}",
                clean_line(&d.agent),
                d.kind.as_str(),
                d.action,
                d.attempt
            ),
            theme.style(Slot::Muted),
        ),
    ]));
    out.push(Line::raw(""));
    out.push(head("prompt"));
    text(&d.prompt, Slot::Text, &mut out);
    out.push(Line::raw(""));
    out.push(head("result"));
    match &d.result {
        None => out.push(Line::from(Span::styled(
            "  (no result yet)",
            theme.style(Slot::Muted),
        ))),
        Some(r) => {
            out.push(Line::from(vec![
                Span::styled("  decision ", theme.style(Slot::Muted)),
                Span::styled(clean_line(&r.decision), theme.style(Slot::Accent)),
            ]));
            // Summaries and findings are Markdown (findings as `report::findings` writes them).
            for md in std::iter::once(&r.summary).chain(&r.findings) {
                let base = theme.style(Slot::Text);
                for l in crate::markdown::lines(&clean(md), width.saturating_sub(2), base, theme) {
                    out.push(Line::from([vec![Span::raw("  ")], l.spans].concat()));
                }
            }
            for n in &r.notes {
                text(n, Slot::Accent, &mut out);
            }
            if !r.delegations.is_empty() {
                out.push(Line::from(Span::styled(
                    format!(
                        "  {:<10} {:<11} {:<7} {:<10} {}",
                        "DELEGATION", "AGENT", "ACTION", "DEPS", "STATE"
                    ),
                    theme.style(Slot::Muted),
                )));
                for row in &r.delegations {
                    let deps = if row.deps.is_empty() {
                        "-".to_string()
                    } else {
                        row.deps.join(",")
                    };
                    let (st, slot) = match row.state {
                        Some(s) => (format!("{} {}", job_glyph(s, 0), s.as_str()), job_slot(s)),
                        None => ("not started".to_string(), Slot::Muted),
                    };
                    out.push(Line::from(vec![
                        Span::styled(
                            format!(
                                "  {:<10} {:<11} {:<7} {:<10} ",
                                super::truncate(&clean_line(&row.id), 10),
                                super::truncate(&clean_line(&row.agent), 11),
                                row.action,
                                super::truncate(&deps, 10)
                            ),
                            theme.style(Slot::Text),
                        ),
                        Span::styled(st, theme.style(slot)),
                    ]));
                }
            }
        }
    }
    out.push(Line::raw(""));
    out.push(head("events (UTC)"));
    for e in &d.events {
        out.push(Line::from(vec![
            Span::styled(
                format!("  {} ", utc_clock(e.ts_ms)),
                theme.style(Slot::Muted),
            ),
            Span::styled(
                format!("{:<20} ", super::truncate(&e.kind, 20)),
                theme.style(Slot::Accent),
            ),
            Span::styled(clean_line(&e.message), theme.style(Slot::Text)),
        ]));
    }
    if let Some(err) = &d.error {
        out.push(Line::raw(""));
        out.push(head("error"));
        text(err, Slot::JobFailed, &mut out);
    }
    if let Some(raw) = &d.raw_output {
        out.push(Line::raw(""));
        out.push(head("raw output"));
        text(raw, Slot::Muted, &mut out);
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let note = state.detail_job.clone().unwrap_or_default();
    let block = pane_block(Pane::Detail, state, theme, note);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(job) = state.detail_job.as_deref() else {
        empty_note(
            frame,
            inner,
            theme,
            " Select a job and press Enter to see its detail.",
        );
        return;
    };
    match snap.detail.as_ref().filter(|d| d.job_id == job) {
        None => empty_note(frame, inner, theme, " loading…"),
        // Jobs that streamed steps get the Activity tab, write jobs the Diff tab; the
        // header takes one line.
        Some(d)
            if !d.activity.is_empty()
                || state.detail_tab != DetailTab::Overview
                || snap.work.rows.contains_key(job) =>
        {
            let diff = snap.work.rows.contains_key(job) || state.detail_tab == DetailTab::Diff;
            let header = super::activity::tabs(
                state.detail_tab,
                diff,
                super::activity::note(state, d),
                theme,
                inner.width as usize,
            );
            let [head, body] = ratatui::layout::Layout::vertical([
                ratatui::layout::Constraint::Length(header.len() as u16),
                ratatui::layout::Constraint::Min(0),
            ])
            .areas(inner);
            frame.render_widget(Paragraph::new(header), head);
            if state.detail_tab == DetailTab::Activity {
                super::activity::render(frame, body, state, d, theme);
            } else if state.detail_tab == DetailTab::Diff {
                match snap.work.diff.as_deref().filter(|x| x.job_id == job) {
                    Some(diff) => super::diff::render(frame, body, state, diff, theme),
                    None => empty_note(frame, body, theme, " reading the diff…"),
                }
            } else {
                overview(frame, body, state, d, theme);
            }
        }
        Some(d) => overview(frame, inner, state, d, theme),
    }
}

/// The overview, scrolled, with its position on the border.
fn overview(frame: &mut Frame, area: Rect, state: &State, d: &JobDetail, theme: &Theme) {
    let lines = content(d, area.width as usize, theme);
    let total = lines.len();
    let max = total.saturating_sub(area.height as usize) as u16;
    let scroll = state.detail_scroll.min(max);
    frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), area);
    super::scrollbar(frame, area, total, scroll as usize, theme);
}
