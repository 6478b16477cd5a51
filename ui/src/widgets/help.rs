//! The `?` help overlay, built from the keymap: the focused pane's keys, then the global
//! ones, then every other context's, each `desc` wrapped under its keys (never cut);
//! narrowed by its own `/` search, with the rows it shows counted.
//!
//! Owns drawing the overlay and its line layout (which `update` measures to scroll); the
//! rows come from `Keymap::help_rows`. Must not change state.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{centered, draw_overlay, fit, overlay_block, wrap};
use crate::keymap::Context;
use crate::search::{Filter, count_note};
use crate::state::State;
use crate::theme::{Slot, Theme};

/// Columns the keys take before a row's description.
const KEYS_W: usize = 20;

/// Where the overlay goes in the body.
pub fn area(body: Rect) -> Rect {
    centered(body, 72, body.height.saturating_sub(2))
}

/// The help's lines for an inside `width` columns wide, with the rows `query` keeps, and
/// how many rows that is of all of them.
pub fn lines(
    state: &State,
    theme: &Theme,
    width: usize,
    query: &str,
) -> (Vec<Line<'static>>, usize, usize) {
    let mut out = Vec::new();
    let mut filter = Filter::new(query);
    let (mut shown, mut total) = (0, 0);
    let focused = Context::of_pane(state.focus);
    // Every context, so a search finds any key: the focused pane's first, then the global
    // ones, then the rest in the keymap's order.
    let order = [focused, Context::Global].into_iter().chain(
        Context::ALL
            .into_iter()
            .filter(|c| *c != focused && *c != Context::Global),
    );
    for ctx in order {
        let rows = state.keymap.help_rows(ctx);
        total += rows.len();
        let rows: Vec<_> = rows
            .into_iter()
            .filter(|(keys, desc)| filter.matches(&format!("{} {desc}", keys.join(" "))))
            .collect();
        if rows.is_empty() {
            continue;
        }
        shown += rows.len();
        out.push(Line::from(Span::styled(
            ctx.name().to_string(),
            theme.style(Slot::PaneTitle),
        )));
        let (key_style, hit) = (theme.style(Slot::FooterKey), theme.style(Slot::FilterMatch));
        for (keys, desc) in rows {
            let keys = format!("  {}", keys.join(" "));
            // Keys wider than their column get a line of their own.
            let mut lead = if super::str_width(&keys) < KEYS_W {
                Some(fit(&keys, KEYS_W))
            } else {
                out.push(Line::from(
                    filter.mark(vec![Span::styled(keys, key_style)], hit),
                ));
                None
            };
            for part in wrap(&desc, width.saturating_sub(KEYS_W).max(10)) {
                let head = lead.take().unwrap_or_else(|| " ".repeat(KEYS_W));
                let spans = vec![
                    Span::styled(head, key_style),
                    Span::styled(part, theme.style(Slot::Text)),
                ];
                out.push(Line::from(filter.mark(spans, hit)));
            }
        }
        out.push(Line::raw(""));
    }
    (out, shown, total)
}

pub fn render(
    frame: &mut Frame,
    body: Rect,
    state: &State,
    theme: &Theme,
    (scroll, query, typing): (u16, &str, bool),
) {
    let r = area(body);
    let inner_w = r.width.saturating_sub(2) as usize;
    let (all, shown, total) = lines(state, theme, inner_w, query);
    let count = match count_note(query, shown, total) {
        c if c.is_empty() => c,
        c => format!(" {c} ·"),
    };
    let block = overlay_block(
        theme.style(Slot::DialogBorder),
        Span::styled(
            format!(" keys ·{count} / search · j/k scroll · Esc close "),
            theme.style(Slot::PaneTitle),
        ),
    );
    let inner = draw_overlay(frame, r, block);
    let [text, search] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(u16::from(typing || !query.is_empty())),
    ])
    .areas(inner);
    let total = all.len();
    let top = scroll.min(total.saturating_sub(text.height as usize) as u16);
    frame.render_widget(Paragraph::new(all).scroll((top, 0)), text);
    super::scrollbar(frame, text, total, top as usize, theme);
    if search.height > 0 {
        let cursor = if typing { "▏" } else { "" };
        let line = Line::from(vec![
            Span::styled("/ ", theme.style(Slot::FooterKey)),
            Span::styled(query.to_string(), theme.style(Slot::FilterMatch)),
            Span::styled(cursor, theme.style(Slot::Accent)),
        ]);
        frame.render_widget(Paragraph::new(line), search);
    }
}
