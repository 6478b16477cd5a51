//! Toasts: short action results stacked in the top-right corner, newest last.
//!
//! Owns drawing only; expiry is `update`'s (on `Event::Tick`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Clear, Paragraph};

use super::truncate;
use crate::sanitize::clean_line;
use crate::state::{State, ToastLevel};
use crate::theme::{Slot, Theme};

pub fn render(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    for (i, t) in state.toasts.iter().enumerate() {
        let slot = match t.level {
            ToastLevel::Info => Slot::ToastInfo,
            ToastLevel::Success => Slot::ToastSuccess,
            ToastLevel::Error => Slot::ToastError,
        };
        let text = format!(
            " {} ",
            truncate(&clean_line(&t.text), (area.width as usize / 2).max(10))
        );
        let w = super::str_width(&text) as u16;
        let y = area.y + 1 + i as u16;
        if y >= area.y + area.height || w > area.width {
            break;
        }
        let r = Rect::new(area.x + area.width - w - 1, y, w, 1);
        frame.render_widget(Clear, r);
        frame.render_widget(Paragraph::new(Span::styled(text, theme.style(slot))), r);
    }
}
