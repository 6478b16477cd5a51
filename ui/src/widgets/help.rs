//! The `?` help overlay, built from the keymap: the focused pane's keys, then the global
//! ones, each with its `desc`.
//!
//! Owns drawing the overlay; the rows come from `Keymap::help_rows`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{centered, draw_overlay, overlay_block};
use crate::keymap::Context;
use crate::state::State;
use crate::theme::{Slot, Theme};

pub fn lines(state: &State, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let focused = Context::of_pane(state.focus);
    for ctx in [
        focused,
        Context::Global,
        Context::AnswerForm,
        Context::Dialog,
    ] {
        let rows = state.keymap.help_rows(ctx);
        if rows.is_empty() {
            continue;
        }
        out.push(Line::from(Span::styled(
            ctx.name().to_string(),
            theme.style(Slot::PaneTitle),
        )));
        for (keys, desc) in rows {
            out.push(Line::from(vec![
                Span::styled(
                    format!("  {:<18}", keys.join(" ")),
                    theme.style(Slot::FooterKey),
                ),
                Span::styled(desc, theme.style(Slot::Text)),
            ]));
        }
        out.push(Line::raw(""));
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme, scroll: u16) {
    let block = overlay_block(
        theme.style(Slot::DialogBorder),
        Span::styled(
            " keys · j/k scroll · Esc close ",
            theme.style(Slot::PaneTitle),
        ),
    );
    let r = centered(area, 64, area.height.saturating_sub(4));
    let inner = draw_overlay(frame, r, block);
    let all = lines(state, theme);
    let max = all.len().saturating_sub(inner.height as usize) as u16;
    frame.render_widget(Paragraph::new(all).scroll((scroll.min(max), 0)), inner);
}
