//! The message bar (one line above the footer) and the scrollable pagers over the panes:
//! the messages log and the full output of a `:` read verb.
//!
//! Owns drawing only; what is logged is `State::notify`'s, scrolling is `update`'s.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{draw_overlay, overlay_block, str_width, truncate, wrap};
use crate::sanitize::{clean, clean_line};
use crate::state::{LogEntry, State, ToastLevel};
use crate::theme::{Slot, Theme};

fn slot(level: ToastLevel) -> Slot {
    match level {
        ToastLevel::Info => Slot::ToastInfo,
        ToastLevel::Success => Slot::ToastSuccess,
        ToastLevel::Warning => Slot::ToastWarning,
        ToastLevel::Error => Slot::ToastError,
    }
}

/// The newest message on one line; a cut or multi-line one says where the rest is.
pub fn render_bar(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let Some(m) = state.bar_message() else {
        return;
    };
    let text = clean(&m.text);
    let mut lines = text.lines();
    let first = clean_line(lines.next().unwrap_or(""));
    let more = lines.count();
    let log_key = state
        .keymap
        .key_for(
            crate::keymap::Context::Global,
            crate::keymap::Command::Messages,
        )
        .unwrap_or_else(|| ":messages".into());
    let width = area.width as usize;
    let full = if more > 0 {
        format!(" {first}  (+{more} lines · {log_key} messages)")
    } else {
        format!(" {first}")
    };
    let shown = if str_width(&full) <= width {
        full
    } else {
        let tail = format!(" … {log_key} messages");
        let cut = truncate(&format!(" {first}"), width.saturating_sub(str_width(&tail)));
        format!("{}{tail}", cut.trim_end_matches('…'))
    };
    frame.render_widget(
        Paragraph::new(Span::styled(shown, theme.style(slot(m.level)))),
        area,
    );
}

/// The log's lines at `width`: each entry whole, wrapped, newest last.
pub fn log_lines(entries: &[LogEntry], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for m in entries {
        let style = theme.style(slot(m.level));
        let mark = match m.level {
            ToastLevel::Error => "✗ ",
            ToastLevel::Warning => "! ",
            ToastLevel::Info | ToastLevel::Success => "• ",
        };
        for (i, l) in wrap(&clean(&m.text), width.saturating_sub(2))
            .into_iter()
            .enumerate()
        {
            let lead = if i == 0 { mark } else { "  " };
            out.push(Line::from(vec![
                Span::styled(lead, style),
                Span::styled(l, theme.style(Slot::Text)),
            ]));
        }
    }
    out
}

/// Lines of a `:` command's output at `width`, indentation kept.
pub fn output_lines(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    wrap(&clean(text), width)
        .into_iter()
        .map(|l| Line::from(Span::styled(l, theme.style(Slot::Text))))
        .collect()
}

/// The pager's box: nearly the whole body, so long output reads like `less`.
pub fn pager_area(body: Rect) -> Rect {
    let w = body.width.saturating_sub(4).max(20).min(body.width);
    let h = body.height.saturating_sub(2).max(3).min(body.height);
    super::centered(body, w, h)
}

/// Draws an empty pager-sized box titled `title` over the panes; returns its inside, for
/// the views (search, usage) that fill it themselves.
pub fn pager_box(frame: &mut Frame, body: Rect, title: String, theme: &Theme) -> Rect {
    let block = overlay_block(
        theme.style(Slot::DialogBorder),
        Span::styled(title, theme.style(Slot::PaneTitle)),
    );
    draw_overlay(frame, pager_area(body), block)
}

/// How far the pager can scroll for `lines` of content.
pub fn max_scroll(lines: usize, body: Rect) -> u16 {
    let inner_h = pager_area(body).height.saturating_sub(2) as usize;
    lines.saturating_sub(inner_h) as u16
}

/// A scrollable box over the panes; `scroll` is clamped so the last line stays visible.
pub fn render_pager(
    frame: &mut Frame,
    body: Rect,
    title: &str,
    lines: Vec<Line<'static>>,
    scroll: u16,
    theme: &Theme,
) {
    let r = pager_area(body);
    let n = lines.len();
    let inner_h = r.height.saturating_sub(2) as usize;
    let top = scroll.min(n.saturating_sub(inner_h) as u16);
    let pos = if n > inner_h {
        format!(
            " {}-{} of {n} ",
            top as usize + 1,
            (top as usize + inner_h).min(n)
        )
    } else {
        String::new()
    };
    let block = overlay_block(
        theme.style(Slot::DialogBorder),
        Span::styled(
            format!(" {} · j/k scroll · Esc close ", clean_line(title)),
            theme.style(Slot::PaneTitle),
        ),
    )
    .title_bottom(Span::styled(pos, theme.style(Slot::Muted)));
    let inner = draw_overlay(frame, r, block);
    frame.render_widget(Paragraph::new(lines).scroll((top, 0)), inner);
}
