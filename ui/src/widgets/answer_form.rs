//! Text forms over the panes: the ask-gate answer form (one field per question: a picker
//! for choices, a textarea for free text), retry/continue instructions, and chat compose.
//!
//! Owns drawing; key handling is `update`'s.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui_textarea::TextArea;

use super::{centered, draw_overlay, overlay_block, truncate};
use crate::sanitize::clean_line;
use crate::state::AnswerField;
use crate::theme::{Slot, Theme};

fn boxed(frame: &mut Frame, area: Rect, h: u16, title: &str, theme: &Theme) -> Rect {
    let block = overlay_block(
        theme.style(Slot::DialogBorder),
        Span::styled(format!(" {title} "), theme.style(Slot::PaneTitle)),
    );
    draw_overlay(frame, centered(area, form_width(area), h), block)
}

/// The question's lines, wrapped to the form's width so it is never cut, led by its id as
/// `job answer` takes it (`rollout: How should…`).
fn prompt_lines(f: &AnswerField, w: usize) -> Vec<String> {
    let prompt = format!("{}: {}", f.question.id, clean_line(&f.question.prompt));
    super::wrap(&prompt, w.saturating_sub(2).max(10))
}

fn form_width(area: Rect) -> u16 {
    (area.width * 7 / 10).max(50).min(area.width)
}

fn field_height(f: &AnswerField, w: usize) -> u16 {
    prompt_lines(f, w).len() as u16
        + if f.has_choices() {
            f.question.choices.len() as u16
        } else {
            3
        }
}

fn draw_text(frame: &mut Frame, r: Rect, text: &TextArea<'static>, focused: bool, theme: &Theme) {
    let mut t = text.clone();
    t.set_style(theme.style(Slot::InputText));
    t.set_block(
        Block::default()
            .borders(Borders::LEFT)
            .border_style(if focused {
                theme.style(Slot::PaneFocus)
            } else {
                theme.style(Slot::PaneBorder)
            }),
    );
    t.set_placeholder_style(theme.style(Slot::Muted));
    if !focused {
        t.set_cursor_style(theme.style(Slot::InputText));
    } else {
        t.set_cursor_style(
            theme
                .style(Slot::Selection)
                .add_modifier(ratatui::style::Modifier::REVERSED),
        );
    }
    frame.render_widget(&t, r);
}

pub fn render_answer(
    frame: &mut Frame,
    area: Rect,
    job_id: &str,
    fields: &[AnswerField],
    focus: usize,
    theme: &Theme,
) {
    let inner_w = form_width(area).saturating_sub(2) as usize;
    // Only the keys that do something in the focused field; broken over lines, never cut.
    let field = &fields[focus.min(fields.len() - 1)];
    let mut pairs: Vec<(String, &str)> = vec![("Enter".into(), "next / submit")];
    if !field.has_choices() {
        pairs.push(("Alt-Enter".into(), "new line"));
    }
    if fields.len() > 1 {
        pairs.push(("Tab".into(), "next field"));
    }
    if field.has_choices() {
        pairs.push(("↑/↓".into(), "choice"));
    }
    pairs.push(("Esc".into(), "cancel"));
    let hint = super::hint_lines(&pairs, inner_w.saturating_sub(1), theme);
    let h: u16 = fields
        .iter()
        .map(|f| field_height(f, inner_w) + 1)
        .sum::<u16>()
        + 2
        + hint.len() as u16;
    let inner = boxed(frame, area, h, &format!("Answer {job_id}"), theme);
    let mut y = inner.y;
    let w = inner.width as usize;
    for (i, f) in fields.iter().enumerate() {
        let focused = i == focus;
        let label_style = if focused {
            theme.style(Slot::PaneFocus)
        } else {
            theme.style(Slot::Text)
        };
        for l in prompt_lines(f, w) {
            if y >= inner.y + inner.height {
                break;
            }
            frame.render_widget(
                Paragraph::new(Span::styled(format!(" {l}"), label_style)),
                Rect::new(inner.x, y, inner.width, 1),
            );
            y += 1;
        }
        if f.has_choices() {
            for (j, c) in f.question.choices.iter().enumerate() {
                let sel = j == f.choice;
                let style = match (sel, focused) {
                    (true, true) => theme.style(Slot::Selection),
                    (true, false) => theme.style(Slot::Accent),
                    _ => theme.style(Slot::Text),
                };
                let line = format!("   {} {}", if sel { "●" } else { "○" }, clean_line(c));
                frame.render_widget(
                    Paragraph::new(Span::styled(truncate(&line, w), style)),
                    Rect::new(inner.x, y, inner.width, 1),
                );
                y += 1;
            }
        } else {
            draw_text(
                frame,
                Rect::new(inner.x + 3, y, inner.width.saturating_sub(4), 3),
                &f.text,
                focused,
                theme,
            );
            y += 3;
        }
        y += 1;
    }
    let bottom = inner.y + inner.height;
    let rows = (hint.len() as u16).min(bottom.saturating_sub(y));
    frame.render_widget(
        Paragraph::new(hint),
        Rect::new(inner.x + 1, y, inner.width.saturating_sub(1), rows),
    );
}

pub fn render_text(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    note: &str,
    text: &TextArea<'static>,
    submit: &str,
    theme: &Theme,
) {
    let inner = boxed(frame, area, 9, title, theme);
    frame.render_widget(
        Paragraph::new(Span::styled(
            format!(" {}", truncate(note, inner.width as usize)),
            theme.style(Slot::Muted),
        )),
        Rect::new(inner.x, inner.y, inner.width, 1),
    );
    draw_text(
        frame,
        Rect::new(inner.x + 1, inner.y + 2, inner.width.saturating_sub(2), 3),
        text,
        true,
        theme,
    );
    let hint = Line::from(super::hints(
        &[
            ("Enter".into(), submit),
            ("Alt-Enter".into(), "new line"),
            ("Esc".into(), "cancel"),
        ],
        theme,
    ));
    frame.render_widget(
        Paragraph::new(hint),
        Rect::new(inner.x + 1, inner.y + 6, inner.width.saturating_sub(1), 1),
    );
}
