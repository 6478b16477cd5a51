//! Chat posts and results are Markdown (as PR comments are): this lays them out as lines
//! for a pane of a given width. pulldown-cmark parses (headings, emphasis, code spans,
//! fenced code with its language tag, links, lists, block quotes, tables, rules); textwrap's
//! first-fit wraps the styled words; every wrapped line repeats its block's prefix, so a
//! quote keeps its `▏` bar, a list item its hanging indent and code its own indentation.
//! A line break inside a paragraph is kept, as GitHub keeps it in comments.
//!
//! Owns text layout only; colours come from the theme's slots when drawn.

mod look;
mod words;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::theme::Theme;
use crate::widgets::{str_width, truncate, wrap};
use look::{Look, Run, mentions};
use words::{join, split_lines, words};

/// `md` as lines at most `width` columns wide, plain text in `base`.
pub fn lines(md: &str, width: usize, base: Style, theme: &Theme) -> Vec<Line<'static>> {
    layout(md, width)
        .into_iter()
        .map(|row| {
            let mut spans = Vec::new();
            for (text, look) in row {
                let style = look.style(base, theme);
                if look == Look::default() {
                    spans.extend(mentions(&text, style, theme));
                } else {
                    spans.push(Span::styled(text, style));
                }
            }
            Line::from(spans)
        })
        .collect()
}

/// `md` laid out without styles and unwrapped: what `gitmoot chat show` prints.
pub fn plain(md: &str) -> String {
    layout(md, usize::MAX / 4)
        .into_iter()
        .map(|row| row.into_iter().map(|(t, _)| t).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn layout(md: &str, width: usize) -> Vec<Vec<Run>> {
    let mut r = Layout {
        width: width.max(8),
        ..Layout::default()
    };
    let parser = Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    for event in parser {
        r.event(event);
    }
    r.flush();
    r.out
}

/// A table being read: its rows of cells, the header first.
#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
}

#[derive(Default)]
struct Layout {
    width: usize,
    out: Vec<Vec<Run>>,
    /// The inline text of the block being read.
    runs: Vec<Run>,
    look: Look,
    quotes: usize,
    /// Each open list's next number (`None`: bullets).
    lists: Vec<Option<u64>>,
    /// The widths of the open items' markers: a wrapped line hangs under its text.
    items: Vec<usize>,
    /// The marker of an item whose first line is not out yet.
    marker: Option<String>,
    /// Inside a code block: its language tag and text so far.
    code: Option<(String, String)>,
    /// The open link's target and where its text starts in `runs`.
    link: Option<(String, usize)>,
    table: Option<Table>,
    /// A block ended: the next one starts after a blank line.
    gap: bool,
}

impl Layout {
    fn event(&mut self, event: Event) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => match (&mut self.code, &mut self.table) {
                (Some((_, code)), _) => code.push_str(&t),
                (None, Some(table)) => push_cell_text(table, &t),
                (None, None) => self.runs.push((t.to_string(), self.look)),
            },
            Event::Code(t) => match &mut self.table {
                Some(table) => push_cell_text(table, &t),
                None => self.runs.push((
                    t.to_string(),
                    Look {
                        code: true,
                        ..self.look
                    },
                )),
            },
            Event::Html(t) | Event::InlineHtml(t) => self.runs.push((t.to_string(), self.look)),
            Event::SoftBreak | Event::HardBreak => self.runs.push(("\n".into(), self.look)),
            Event::Rule => {
                self.block_start();
                let (prefix, w) = self.prefix(false);
                let rule = (
                    ("─").repeat(self.width.saturating_sub(w).min(40)),
                    Look::MUTED,
                );
                self.out.push([prefix, vec![rule]].concat());
                self.gap = true;
            }
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Heading { .. } => {
                self.flush();
                self.look.heading = true;
            }
            Tag::BlockQuote(_) => {
                self.flush();
                // The gap before a quote is outside it (no bar on its blank line).
                self.block_start();
                self.quotes += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(lang) => {
                        lang.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(first) => {
                self.flush();
                // A list follows the line before it with no gap, as a heading's items
                // (`**Findings**` over its bullets) read best; a block after it has one.
                self.gap = false;
                self.lists.push(first);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => "• ".to_string(),
                };
                self.items.push(str_width(&marker));
                self.marker = Some(marker);
            }
            Tag::Strong => self.look.strong = true,
            Tag::Emphasis => self.look.emphasis = true,
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.look.link = true;
                self.link = Some((dest_url.to_string(), self.runs.len()));
            }
            Tag::Table(_) => {
                self.flush();
                self.table = Some(Table::default());
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(String::new());
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush(),
            TagEnd::Heading(_) => {
                self.flush();
                self.look.heading = false;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quotes = self.quotes.saturating_sub(1);
            }
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::Item => {
                self.flush();
                self.items.pop();
                self.marker = None;
            }
            TagEnd::Strong => self.look.strong = false,
            TagEnd::Emphasis => self.look.emphasis = false,
            TagEnd::Link | TagEnd::Image => {
                self.look.link = false;
                if let Some((url, from)) = self.link.take() {
                    let text: String = self.runs[from..].iter().map(|(t, _)| t.as_str()).collect();
                    if !url.is_empty() && text != url {
                        self.runs.push((format!(" ({url})"), Look::MUTED));
                    }
                }
            }
            TagEnd::Table => self.table_block(),
            _ => {}
        }
    }

    /// Before a block's first line: the blank line after the one before it.
    fn block_start(&mut self) {
        if self.gap && !self.out.is_empty() && self.items.is_empty() {
            let (bars, _) = self.bars();
            self.out.push(bars);
        }
        self.gap = false;
    }

    fn bars(&self) -> (Vec<Run>, usize) {
        let bars = "▏ ".repeat(self.quotes);
        let w = str_width(&bars);
        let runs = if bars.is_empty() {
            Vec::new()
        } else {
            vec![(bars, Look::MUTED)]
        };
        (runs, w)
    }

    /// The prefix of a line and its width: the quote bars, then the item's marker on its
    /// first line (`first`) or the hanging indent under it.
    fn prefix(&mut self, first: bool) -> (Vec<Run>, usize) {
        let (mut runs, mut w) = self.bars();
        let marker = if first { self.marker.take() } else { None };
        let hang: usize = match &marker {
            Some(_) => self.items.iter().rev().skip(1).sum(),
            None => self.items.iter().sum(),
        };
        let lead = format!("{}{}", " ".repeat(hang), marker.unwrap_or_default());
        if !lead.is_empty() {
            w += str_width(&lead);
            runs.push((lead, Look::default()));
        }
        (runs, w)
    }

    /// Wraps the inline text read so far as one block.
    fn flush(&mut self) {
        if self.runs.iter().all(|(t, _)| t.trim().is_empty()) {
            self.runs.clear();
            return;
        }
        self.block_start();
        let runs = std::mem::take(&mut self.runs);
        let mut first = true;
        for piece in split_lines(runs) {
            let (prefix, w) = self.prefix(first);
            let rest_w = self.prefix_width();
            first = false;
            let avail = self.width.saturating_sub(w.max(rest_w)).max(4);
            let words = words(&piece, avail);
            let lines = textwrap::wrap_algorithms::wrap_first_fit(&words, &[avail as f64]);
            for (i, line) in lines.iter().enumerate() {
                let lead = if i == 0 {
                    prefix.clone()
                } else {
                    self.prefix(false).0
                };
                self.out.push([lead, join(line)].concat());
            }
        }
        self.gap = true;
    }

    fn prefix_width(&self) -> usize {
        str_width(&"▏ ".repeat(self.quotes)) + self.items.iter().sum::<usize>()
    }

    fn code_block(&mut self) {
        let Some((lang, text)) = self.code.take() else {
            return;
        };
        self.block_start();
        if !lang.is_empty() {
            let (prefix, _) = self.prefix(true);
            self.out
                .push([prefix, vec![(format!("── {lang}"), Look::MUTED)]].concat());
        }
        let code = Look {
            code: true,
            ..Look::default()
        };
        for line in text.trim_end_matches('\n').split('\n') {
            let (prefix, w) = self.prefix(true);
            let avail = self.width.saturating_sub(w + 2).max(4);
            for (i, piece) in wrap(line, avail).into_iter().enumerate() {
                let lead = if i == 0 {
                    prefix.clone()
                } else {
                    self.prefix(false).0
                };
                self.out
                    .push([lead, vec![(format!("  {piece}"), code)]].concat());
            }
        }
        self.gap = true;
    }

    /// A table as aligned columns; when they do not fit, each column gets an equal share
    /// and its cells are cut to it.
    fn table_block(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        self.block_start();
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths: Vec<usize> = (0..cols)
            .map(|c| {
                table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| str_width(s))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let (_, w) = self.prefix(false);
        let avail = self.width.saturating_sub(w);
        let sep = 3 * cols.saturating_sub(1);
        if widths.iter().sum::<usize>() + sep > avail && cols > 0 {
            let share = (avail.saturating_sub(sep) / cols).max(3);
            widths.iter_mut().for_each(|w| *w = (*w).min(share));
        }
        for (i, row) in table.rows.iter().enumerate() {
            let look = Look {
                strong: i == 0,
                ..Look::default()
            };
            let mut line = self.prefix(false).0;
            for (c, width) in widths.iter().enumerate() {
                if c > 0 {
                    line.push((" │ ".into(), Look::MUTED));
                }
                let cell = truncate(row.get(c).map_or("", String::as_str), *width);
                let pad = width.saturating_sub(str_width(&cell));
                line.push((format!("{cell}{}", " ".repeat(pad)), look));
            }
            self.out.push(line);
            if i == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let mut line = self.prefix(false).0;
                line.push((rule.join("─┼─"), Look::MUTED));
                self.out.push(line);
            }
        }
        self.gap = true;
    }
}

fn push_cell_text(table: &mut Table, text: &str) {
    if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
        cell.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(md: &str, width: usize) -> Vec<String> {
        layout(md, width)
            .into_iter()
            .map(|row| row.into_iter().map(|(t, _)| t).collect())
            .collect()
    }

    #[test]
    fn result_posts_render_without_their_markers() {
        let body = "> Agent: `codex`\n\n**Decision:** `approved`\n**Findings**\n- one";
        assert_eq!(
            plain(body),
            "▏ Agent: codex\n\nDecision: approved\nFindings\n• one"
        );
        let rows = layout("**Decision:** `approved`", 80);
        assert!(rows[0][0].1.strong);
        assert!(rows[0][2].1.code);
    }

    #[test]
    fn headings_code_fences_links_and_tables_are_laid_out() {
        let md = "## Plan\n\nSee [the docs](https://x.dev/a) or <https://x.dev>.\n\n\
                  ```rust\nfn main() {\n    run();\n}\n```\n\n\
                  | name | state |\n|---|---|\n| scout | done |\n| lead | failed |";
        assert_eq!(
            text(md, 60),
            [
                "Plan",
                "",
                "See the docs (https://x.dev/a) or https://x.dev.",
                "",
                "── rust",
                "  fn main() {",
                "      run();",
                "  }",
                "",
                "name  │ state ",
                "──────┼───────",
                "scout │ done  ",
                "lead  │ failed",
            ]
        );
        assert!(layout("## Plan", 60)[0][0].1.heading);
    }

    #[test]
    fn wrapped_lines_keep_the_quote_bar_and_the_indentation() {
        let md = "> a quoted line long enough to wrap twice at this width\n\n\
                  - an item long enough to wrap\n  - a nested item that wraps too";
        assert_eq!(
            text(md, 20),
            [
                "▏ a quoted line long",
                "▏ enough to wrap",
                "▏ twice at this",
                "▏ width",
                "• an item long",
                "  enough to wrap",
                "  • a nested item",
                "    that wraps too",
            ]
        );
        // Code keeps its own indentation on a wrapped line.
        assert_eq!(
            text("```\n    let total = first + second;\n```", 24),
            ["      let total = first", "      + second;"]
        );
    }
}
