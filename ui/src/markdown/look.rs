//! How a run of Markdown text looks (strong, code, a link…), turned into a theme's style
//! only when drawn, and the highlighting of `@mentions` in plain text.

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::theme::{Slot, Theme};

/// How a run of text looks, turned into a style only when drawn (the CLI's plain form
/// shares the layout and drops the looks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Look {
    pub strong: bool,
    pub emphasis: bool,
    pub code: bool,
    pub link: bool,
    pub heading: bool,
    pub muted: bool,
}

impl Look {
    pub const MUTED: Look = Look {
        strong: false,
        emphasis: false,
        code: false,
        link: false,
        heading: false,
        muted: true,
    };

    pub fn style(self, base: Style, theme: &Theme) -> Style {
        let mut s = match self {
            Look { muted: true, .. } => theme.style(Slot::Muted),
            Look { code: true, .. } => theme.style(Slot::Accent),
            Look { heading: true, .. } => theme.style(Slot::PaneTitle),
            Look { link: true, .. } => theme.style(Slot::Accent).add_modifier(Modifier::UNDERLINED),
            _ => base,
        };
        if self.strong || self.heading {
            s = s.add_modifier(Modifier::BOLD);
        }
        if self.emphasis {
            s = s.add_modifier(Modifier::ITALIC);
        }
        s
    }
}

pub(super) type Run = (String, Look);

/// Splits a line into spans with `@name` mentions highlighted.
pub(super) fn mentions<'a>(
    line: &str,
    base: ratatui::style::Style,
    theme: &Theme,
) -> Vec<Span<'a>> {
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
