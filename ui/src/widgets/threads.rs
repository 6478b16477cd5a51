//! The Threads and inboxes pane: thread list, per-agent inboxes with unread counts, and the
//! open thread's transcript with mentions highlighted.
//!
//! Owns drawing of chat data; composing is the `answer_form` widget's job.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::{empty_note, fit, pane_block, row_style, wrap};
use crate::rows;
use crate::sanitize::{clean, clean_line};
use crate::search::{Filter, count_note};
use crate::state::{FilterScope, Pane, Section, State};
use crate::theme::{Slot, Theme};
use crate::view::{MessageKind, Snapshot, ThreadState, age};

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let unread: u32 = snap.threads.iter().map(|t| t.unread).sum();
    let note = if unread > 0 {
        format!("{unread} unread")
    } else {
        String::new()
    };
    let block = pane_block(Pane::Threads, state, theme, note);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(inner);
    let [tl, il] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(left);
    threads(frame, tl, state, snap, theme);
    inboxes(frame, il, state, snap, theme);
    transcript(frame, right, state, snap, theme);
}

fn section_block<'a>(
    title: &str,
    section: Section,
    state: &State,
    theme: &Theme,
    borders: Borders,
) -> Block<'a> {
    let active = state.focus == Pane::Threads && state.section == section;
    let style = if active {
        theme.style(Slot::PaneFocus)
    } else {
        theme.style(Slot::Muted)
    };
    Block::default()
        .borders(borders)
        // The thread list's corner joins the rule that goes on down beside the inboxes.
        .border_set(symbols::border::Set {
            bottom_right: symbols::line::VERTICAL_LEFT,
            ..symbols::border::PLAIN
        })
        .border_style(theme.style(Slot::PaneBorder))
        .title(Span::styled(format!(" {title} "), style))
}

fn threads(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let block = section_block(
        "threads",
        Section::Threads,
        state,
        theme,
        Borders::RIGHT | Borders::BOTTOM,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = rows::thread_rows(snap, state);
    let mut filter = Filter::new(state.filter_for(FilterScope::Threads));
    let sel = rows
        .iter()
        .position(|t| Some(&t.id) == state.sel.thread.as_ref())
        .unwrap_or(0);
    let active = state.focus == Pane::Threads && state.section == Section::Threads;
    let w = inner.width as usize;
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(rows::scroll_offset(sel, inner.height as usize))
        .map(|(i, t)| {
            let selected = active && i == sel;
            let base = if t.state == ThreadState::Archived {
                theme.style(Slot::Muted)
            } else {
                theme.style(Slot::Text)
            };
            let badge = if t.unread > 0 {
                format!(" {}●", t.unread)
            } else {
                String::new()
            };
            let ago = age(state.now_ms - t.last_activity_ms);
            // One marker on screen: only the section that has the keys shows its own.
            let mark = if i == sel && state.section == Section::Threads {
                "▌"
            } else {
                " "
            };
            let name_w = w.saturating_sub(1 + badge.chars().count() + ago.len() + 1);
            let name = Span::styled(
                fit(&clean_line(&t.title), name_w),
                row_style(base, selected, theme),
            );
            let mut spans = vec![Span::styled(mark, theme.style(Slot::Accent))];
            spans.extend(filter.mark(vec![name], theme.style(Slot::FilterMatch)));
            spans.extend([
                Span::styled(
                    badge,
                    row_style(theme.style(Slot::ChatUnread), selected, theme),
                ),
                Span::styled(
                    format!(" {ago}"),
                    row_style(theme.style(Slot::Muted), selected, theme),
                ),
            ]);
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn inboxes(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let block = section_block("inboxes", Section::Inbox, state, theme, Borders::RIGHT);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let rows = rows::inbox_rows(snap);
    let active = state.focus == Pane::Threads && state.section == Section::Inbox;
    let sel = rows
        .iter()
        .position(|i| Some(&i.agent) == state.sel.inbox.as_ref())
        .unwrap_or(0);
    let w = inner.width as usize;
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(i, inbox)| {
            let selected = active && i == sel;
            let badge = if inbox.unread > 0 {
                format!("{} unread", inbox.unread)
            } else {
                "read".to_string()
            };
            let slot = if inbox.unread > 0 {
                Slot::ChatUnread
            } else {
                Slot::Muted
            };
            let mark = if i == sel && state.section == Section::Inbox {
                "▌"
            } else {
                " "
            };
            Line::from(vec![
                Span::styled(mark, theme.style(Slot::Accent)),
                Span::styled(
                    fit(
                        &format!("@{}", clean_line(&inbox.agent)),
                        w.saturating_sub(1 + badge.len() + 1),
                    ),
                    row_style(theme.style(Slot::ChatMention), selected, theme),
                ),
                Span::styled(
                    format!(" {badge}"),
                    row_style(theme.style(slot), selected, theme),
                ),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn transcript(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let title = state
        .sel
        .thread
        .as_deref()
        .and_then(|id| snap.threads.iter().find(|t| t.id == id))
        .map(|t| clean_line(&t.title))
        .unwrap_or_else(|| "transcript".to_string());
    let query = state.filter_for(FilterScope::Threads);
    let msgs = rows::message_rows(snap, state);
    let all = rows::all_messages(snap, state).len();
    let count = count_note(query, msgs.len(), all);
    // The count first: a narrow transcript cuts its title, and the title is the selected
    // thread's, already shown in the list.
    let title = match count.is_empty() {
        true => title,
        false => format!("{count} · {title}"),
    };
    let block = section_block(&title, Section::Transcript, state, theme, Borders::NONE);
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    frame.render_widget(block, head);
    let mut filter = Filter::new(query);
    if msgs.is_empty() {
        let msg = if all > 0 {
            " No message matches the filter."
        } else if state.sel.thread.is_some()
            && snap
                .transcript
                .as_ref()
                .map(|t| Some(&t.thread_id) != state.sel.thread.as_ref())
                .unwrap_or(true)
        {
            " loading…"
        } else {
            " No messages."
        };
        empty_note(frame, body, theme, msg);
        return;
    }
    let active = state.focus == Pane::Threads && state.section == Section::Transcript;
    let w = (body.width as usize).saturating_sub(3);
    let mut blocks: Vec<Vec<Line>> = Vec::new();
    let mut sel_block = 0;
    for m in &msgs {
        let selected = active && Some(m.seq) == state.sel.message;
        if Some(m.seq) == state.sel.message {
            sel_block = blocks.len();
        }
        let mark = if Some(m.seq) == state.sel.message && state.section == Section::Transcript {
            "▌"
        } else {
            " "
        };
        let kind = match m.kind {
            MessageKind::Chat => "",
            MessageKind::PromotionRequest => " ⇢ promotion",
            MessageKind::JobResult => " ⇠ result",
            MessageKind::System => " · system",
        };
        let mut extra = String::new();
        if let Some(r) = m.reply_to {
            extra.push_str(&format!(" ↩#{r}"));
        }
        if let Some(j) = &m.promoted_job_id {
            extra.push_str(&format!(" → {j}"));
        }
        let mut lines = vec![Line::from(vec![
            Span::styled(mark, theme.style(Slot::Accent)),
            Span::styled(
                format!("#{} ", m.seq),
                row_style(theme.style(Slot::Muted), selected, theme),
            ),
            Span::styled(
                clean_line(&m.author),
                row_style(theme.style(Slot::ChatAuthor), selected, theme),
            ),
            Span::styled(
                format!("{kind}{extra}"),
                row_style(theme.style(Slot::Muted), selected, theme),
            ),
            Span::styled(
                format!("  {}", age(state.now_ms - m.ts_ms)),
                row_style(theme.style(Slot::Muted), selected, theme),
            ),
        ])];
        let body_slot = if m.kind == MessageKind::System {
            Slot::ChatSystem
        } else {
            Slot::Text
        };
        let mut md = Inline::default();
        for l in wrap(&markdown_blocks(&clean(&m.body)), w) {
            let mut spans = vec![Span::raw("   ")];
            spans.extend(md.spans(&l, theme.style(body_slot), theme));
            lines.push(Line::from(
                filter.mark(spans, theme.style(Slot::FilterMatch)),
            ));
        }
        blocks.push(lines);
    }
    // Keep the selected message in view: drop whole messages from the top until it fits.
    let height = body.height as usize;
    let mut start = 0;
    while start < sel_block
        && blocks[start..=sel_block]
            .iter()
            .map(Vec::len)
            .sum::<usize>()
            > height
    {
        start += 1;
    }
    let lines: Vec<Line> = blocks.into_iter().skip(start).flatten().collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// Splits a line into spans with `@name` mentions highlighted.
pub fn mentions<'a>(line: &str, base: ratatui::style::Style, theme: &Theme) -> Vec<Span<'a>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_mention = false;
    for c in line.chars() {
        if c == '@' && !in_mention {
            if !cur.is_empty() {
                out.push(Span::styled(std::mem::take(&mut cur), base));
            }
            in_mention = true;
            cur.push(c);
        } else if in_mention && !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.') {
            out.push(Span::styled(
                std::mem::take(&mut cur),
                theme.style(Slot::ChatMention),
            ));
            in_mention = false;
            cur.push(c);
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(Span::styled(
            cur,
            if in_mention {
                theme.style(Slot::ChatMention)
            } else {
                base
            },
        ));
    }
    out
}

/// Block-level Markdown of chat posts as text: `> ` quotes become a bar, `- `/`* ` list
/// items a bullet (job-result posts are written in this Markdown, as PR comments are).
///
/// Hand-written rather than `pulldown-cmark`: posts use only quotes, bullets, bold and
/// inline code, and the transcript must wrap them at the pane's width itself.
pub fn markdown_blocks(body: &str) -> String {
    body.lines()
        .map(|l| {
            let indent = &l[..l.len() - l.trim_start().len()];
            let t = l.trim_start();
            if let Some(q) = t
                .strip_prefix("> ")
                .or(t.strip_prefix('>').filter(|q| q.is_empty()))
            {
                format!("{indent}▏ {q}")
            } else if let Some(item) = t.strip_prefix("- ").or(t.strip_prefix("* ")) {
                format!("{indent}• {item}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A chat post as the CLI prints it: the transcript's rendering without styles, so
/// `chat show` and the control room read the same.
pub fn plain_markdown(body: &str) -> String {
    markdown_blocks(body).replace("**", "").replace('`', "")
}

/// Inline Markdown state carried across a message's wrapped lines: `**bold**` and
/// `` `code` `` become styles, their markers are dropped.
#[derive(Debug, Default)]
pub struct Inline {
    bold: bool,
    code: bool,
}

impl Inline {
    pub fn spans<'a>(
        &mut self,
        line: &str,
        base: ratatui::style::Style,
        theme: &Theme,
    ) -> Vec<Span<'a>> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars().peekable();
        let flush = |cur: &mut String, out: &mut Vec<Span<'a>>, bold: bool, code: bool| {
            if cur.is_empty() {
                return;
            }
            let mut style = if code {
                theme.style(Slot::Accent)
            } else {
                base
            };
            if bold {
                style = style.add_modifier(ratatui::style::Modifier::BOLD);
            }
            if code {
                out.push(Span::styled(std::mem::take(cur), style));
            } else {
                out.extend(mentions(&std::mem::take(cur), style, theme));
            }
        };
        while let Some(c) = chars.next() {
            if c == '`' {
                flush(&mut cur, &mut out, self.bold, self.code);
                self.code = !self.code;
            } else if c == '*' && !self.code && chars.peek() == Some(&'*') {
                chars.next();
                flush(&mut cur, &mut out, self.bold, self.code);
                self.bold = !self.bold;
            } else {
                cur.push(c);
            }
        }
        flush(&mut cur, &mut out, self.bold, self.code);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_markdown_renders_without_its_markers() {
        let body = "> Agent: `codex`\n\n**Decision:** `approved`\n**Findings**\n- one";
        let blocks = markdown_blocks(body);
        assert_eq!(
            blocks,
            "▏ Agent: `codex`\n\n**Decision:** `approved`\n**Findings**\n• one"
        );
        let theme = Theme::monochrome();
        let mut md = Inline::default();
        let spans = md.spans(
            "**Decision:** `approved`",
            ratatui::style::Style::default(),
            &theme,
        );
        let text: String = spans.iter().map(|s| s.content.to_string()).collect();
        assert_eq!(text, "Decision: approved");
        assert_eq!(
            plain_markdown(body),
            "▏ Agent: codex\n\nDecision: approved\nFindings\n• one"
        );
        assert!(
            spans[0]
                .style
                .add_modifier
                .contains(ratatui::style::Modifier::BOLD)
        );
    }
}
