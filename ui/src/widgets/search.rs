//! The Search view (`Ctrl-f`): the query line and the hits best first, each with what it
//! is (prompt, result, activity step or chat message), where it lives (its job, or its
//! thread and message) and its snippet with the matched words highlighted.
//!
//! Owns drawing only; the hits are `Snapshot::search`, the keys `update::search`'s.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::sanitize::clean_line;
use crate::theme::{Slot, Theme};
use crate::view::SearchHit;

/// What marks a matched word in a snippet (`store::search`'s marks).
const MARK_START: char = '«';
const MARK_END: char = '»';

/// Where a hit lives, as its row names it.
pub fn place(h: &SearchHit) -> String {
    match (&h.job, &h.thread) {
        (Some(job), _) => match h.seq {
            Some(seq) => format!("{job} #{seq}"),
            None => job.clone(),
        },
        (None, Some(thread)) => format!("{thread}#{}", h.seq.unwrap_or_default()),
        (None, None) => "-".into(),
    }
}

/// A snippet on one line, its marked words in the match style and the marks dropped.
pub fn snippet_spans(snippet: &str, text: Slot, theme: &Theme) -> Vec<Span<'static>> {
    let flat = clean_line(&snippet.split_whitespace().collect::<Vec<_>>().join(" "));
    let mut spans = Vec::new();
    let (mut buf, mut hit) = (String::new(), false);
    for c in flat.chars() {
        let boundary = (c == MARK_START && !hit) || (c == MARK_END && hit);
        if !boundary {
            buf.push(c);
            continue;
        }
        let slot = if hit { Slot::FilterMatch } else { text };
        spans.push(Span::styled(std::mem::take(&mut buf), theme.style(slot)));
        hit = !hit;
    }
    let slot = if hit { Slot::FilterMatch } else { text };
    spans.push(Span::styled(buf, theme.style(slot)));
    spans
}

/// Draws the view over the body: the query, then one row per hit, `sel` highlighted.
pub fn render(
    frame: &mut Frame,
    body: Rect,
    (query, typing, sel): (&str, bool, usize),
    hits: &[SearchHit],
    theme: &Theme,
) {
    let inner = super::messages::pager_box(
        frame,
        body,
        " search · Enter jump · j/k move · Esc close ".into(),
        theme,
    );
    let cursor = if typing { "▏" } else { "" };
    let mut lines = vec![Line::from(vec![
        Span::styled("search: ", theme.style(Slot::Muted)),
        Span::styled(
            format!("{}{cursor}", clean_line(query)),
            theme.style(Slot::Text),
        ),
    ])];
    if hits.is_empty() && !typing {
        lines.push(Line::styled("no match", theme.style(Slot::Muted)));
    }
    for (i, h) in hits.iter().enumerate() {
        let text = if i == sel {
            Slot::Selection
        } else {
            Slot::Text
        };
        let mut spans = vec![Span::styled(
            format!("{:<8} {:<18} ", h.source.as_str(), place(h)),
            theme.style(if i == sel {
                Slot::Selection
            } else {
                Slot::Muted
            }),
        )];
        spans.extend(snippet_spans(&h.snippet, text, theme));
        lines.push(Line::from(spans));
    }
    let skip = (sel + 2).saturating_sub(inner.height as usize);
    let shown: Vec<Line> = lines.into_iter().skip(skip).collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
