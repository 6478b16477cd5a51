//! The Job tree pane: roots newest first, then legs and continuations, with fold markers,
//! state glyphs and colours, spinners, per-node rollups, elapsed time and tokens.
//!
//! Owns drawing of `rows::tree_rows`; folding and filtering live in `rows`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{fit, job_glyph, job_slot, pane_block, root_glyph, row_style};
use crate::rows::{self, TreeRow};
use crate::sanitize::clean_line;
use crate::state::{Pane, State};
use crate::theme::{Slot, Theme};
use crate::view::{JobKind, JobState, Snapshot, elapsed, tokens};

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let rows = rows::tree_rows(snap, state);
    let note = format!("{} roots", snap.roots.len());
    let block = pane_block(Pane::Tree, state, theme, note);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if rows.is_empty() {
        let msg = if state.filter.is_empty() {
            " No jobs yet. `:job run --agent A PROMPT` starts one."
        } else {
            " No job matches the filter."
        };
        frame.render_widget(
            Paragraph::new(Span::styled(msg, theme.style(Slot::Muted))),
            inner,
        );
        return;
    }
    let sel = rows
        .iter()
        .position(|r| Some(&r.node.id) == state.sel.tree.as_ref())
        .unwrap_or(0);
    let offset = rows::scroll_offset(sel, inner.height as usize);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(inner.height as usize)
        .map(|(i, r)| {
            let idle = !snap.daemon.runs_jobs();
            row(
                r,
                i == sel,
                idle,
                state,
                &snap.live,
                theme,
                inner.width as usize,
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// One row; `idle` means no daemon will start queued jobs, which their rows then say.
fn row<'a>(
    r: &TreeRow,
    is_sel: bool,
    idle: bool,
    state: &State,
    snap_live: &crate::live::Live,
    theme: &Theme,
    width: usize,
) -> Line<'a> {
    let selected = is_sel && state.focus == Pane::Tree;
    let muted = row_style(theme.style(Slot::Muted), selected, theme);
    let edge = row_style(theme.style(Slot::DagEdge), selected, theme);
    let text = row_style(theme.style(Slot::Text), selected, theme);
    let n = r.node;
    let mut guide = String::new();
    for l in 1..r.level {
        guide.push_str(if r.guides[l.min(15)] { "│ " } else { "  " });
    }
    if r.level > 0 {
        guide.push_str(if r.last { "└─" } else { "├─" });
    }
    let fold = if n.children.is_empty() {
        " "
    } else if r.folded {
        "▸"
    } else {
        "▾"
    };
    let (glyph, gslot) = if n.kind == JobKind::Root {
        root_glyph(r.root, state.tick)
    } else {
        (job_glyph(n.state, state.tick), job_slot(n.state))
    };
    let waiting = if n.kind == JobKind::Root {
        r.root.state.is_live() && n.rollup().queued > 0
    } else {
        n.state == JobState::Queued
    };
    // Said before the title, which is what gets cut on a narrow pane.
    let note = if idle && waiting {
        "will not run · "
    } else {
        ""
    };
    let label = if n.kind == JobKind::Root {
        format!("{}  {note}{}", n.id, clean_line(&r.root.title))
    } else {
        format!("{} · {note}{}", n.label(), n.agent)
    };
    // Dimmed after the label: a root's spend against its budget, a running job's newest step.
    let mut trailer = String::new();
    if n.kind == JobKind::Root
        && let Some(spend) = snap_live.root_spend(&r.root.id, r.root.cost_usd)
    {
        trailer.push_str(&format!("  {spend}"));
    }
    if n.state == JobState::Running
        && let Some(step) = snap_live.latest.get(&n.id)
    {
        trailer.push_str(&format!("  {}", clean_line(step)));
    }
    let trailer = (!trailer.is_empty()).then_some(trailer);
    let rollup = if n.children.is_empty() {
        String::new()
    } else {
        let ru = n.rollup();
        let mut parts = Vec::new();
        for (c, g) in [
            (ru.running, "▶"),
            (ru.queued, "○"),
            (ru.done, "✓"),
            (ru.failed, "✗"),
        ] {
            if c > 0 {
                parts.push(format!("{c}{g}"));
            }
        }
        parts.join(" ")
    };
    let end = match (n.started_ms, n.finished_ms) {
        (Some(s), Some(f)) => elapsed(f - s),
        (Some(s), None) => elapsed(state.now_ms - s),
        // A queued job shows how long it has waited.
        (None, _) if n.state == JobState::Queued => elapsed(state.now_ms - n.created_ms),
        _ => "-".to_string(),
    };
    let (time, toks) = if n.kind == JobKind::Root {
        let end = r.root.finished_ms.unwrap_or(state.now_ms);
        (
            elapsed(end - r.root.created_ms),
            tokens(snap_live.root_tokens(&r.root.id, r.root.tokens)),
        )
    } else {
        (end, tokens(n.tokens))
    };
    let right = format!("{:>12} {:>6} {:>5}", rollup, time, toks);
    let right_w = super::str_width(&right);
    let left_w = width.saturating_sub(right_w + 1);
    let mark = if is_sel { "▌" } else { " " };
    let lead = format!("{guide}{fold}");
    let lead_w = 1 + super::str_width(&lead) + super::str_width(glyph) + 1;
    let label_style = if n.kind == JobKind::Root {
        row_style(theme.style(Slot::PaneTitle), selected, theme)
    } else {
        text
    };
    let mut spans = vec![
        Span::styled(mark, row_style(theme.style(Slot::Accent), selected, theme)),
        Span::styled(lead, edge),
        Span::styled(
            glyph.to_string(),
            row_style(theme.style(gslot), selected, theme),
        ),
        Span::styled(" ", text),
    ];
    let room = left_w.saturating_sub(lead_w);
    match trailer {
        // The label yields up to half the row to the trailer, which is what changes.
        Some(t) if room > 8 => {
            let label_w = super::str_width(&label)
                .min(room.saturating_sub(super::str_width(&t)).max(room / 2));
            spans.push(Span::styled(fit(&label, label_w), label_style));
            spans.push(Span::styled(fit(&t, room - label_w), muted));
        }
        _ => spans.push(Span::styled(fit(&label, room), label_style)),
    }
    spans.push(Span::styled(" ", text));
    spans.push(Span::styled(right, muted));
    Line::from(spans)
}
