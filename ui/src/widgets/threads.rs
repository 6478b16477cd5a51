//! The Threads and inboxes pane: thread list, per-agent inboxes with unread counts, and the
//! open thread's transcript (its posts' Markdown laid out by `markdown`) with mentions
//! highlighted.
//!
//! Owns drawing of chat data; composing is the `answer_form` widget's job.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::{empty_note, fit, pane_block, row_style};
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
        } else if snap.threads.is_empty() {
            " No threads yet: `:chat create NAME --repo OWNER/REPO`."
        } else {
            " No messages yet: `:chat send THREAD TEXT` posts one."
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
        for l in crate::markdown::lines(&clean(&m.body), w, theme.style(body_slot), theme) {
            let mut spans = vec![Span::raw("   ")];
            spans.extend(l.spans);
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
