//! The Detail drawer's Diff tab: a write job's files with their `+`/`−` counts, then each
//! file's hunks with added and removed lines in their colours (their `+`/`-` marks carry
//! the meaning without colour), binary files and renames said as such, comments waiting to
//! be sent under their lines, and a status line (position, search, keys).
//!
//! Owns drawing of `Snapshot::work.diff`; it draws only the rows on screen, so a 20,000-line
//! diff costs one screen. Selection and scrolling live in `State::diff`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{row_style, truncate};
use crate::sanitize::clean_line;
use crate::state::State;
use crate::theme::{Slot, Theme};
use crate::work::{DiffFile, DiffRow, DiffView, LineOp, keep_in_view, status_word};

/// A file's counts: `+12 −3`, or `binary`; `hunks cut` when its hunks passed the bound.
fn counts(f: &DiffFile) -> String {
    if f.binary {
        "binary".to_string()
    } else if f.hunks_cut {
        format!("+{} −{}, hunks cut", f.added, f.removed)
    } else {
        format!("+{} −{}", f.added, f.removed)
    }
}

/// A file's name as the diff shows it: `old → new` for a rename or copy.
fn name(f: &DiffFile) -> String {
    match &f.old_path {
        Some(old) => format!("{} → {}", clean_line(old), clean_line(&f.path)),
        None => clean_line(&f.path),
    }
}

/// One row's spans, `width` columns wide.
fn row_line(d: &DiffView, row: DiffRow, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let style = |s: Slot| theme.style(s);
    match row {
        DiffRow::Gap => vec![Span::raw("")],
        DiffRow::Summary(f) => {
            let file = &d.files[f];
            let c = counts(file);
            let room = width.saturating_sub(14 + c.len() + 2);
            vec![
                Span::styled(format!(" {:<12} ", status_word(file)), style(Slot::Muted)),
                Span::styled(
                    format!("{:<room$} ", truncate(&name(file), room)),
                    style(Slot::Text),
                ),
                Span::styled(
                    c,
                    style(if file.binary {
                        Slot::Muted
                    } else {
                        Slot::Accent
                    }),
                ),
            ]
        }
        DiffRow::File(f) => {
            let file = &d.files[f];
            vec![
                Span::styled(format!("── {} ", name(file)), style(Slot::PaneTitle)),
                Span::styled(
                    format!("({}, {})", status_word(file), counts(file)),
                    style(Slot::Muted),
                ),
            ]
        }
        DiffRow::Note(f) => {
            let file = &d.files[f];
            let note = match (file.binary, &file.old_path) {
                (true, _) => "binary file: contents not shown".to_string(),
                (false, Some(old)) => format!("renamed from {} without changes", clean_line(old)),
                _ => "no lines changed (mode or empty file)".to_string(),
            };
            vec![Span::styled(format!("   {note}"), style(Slot::Muted))]
        }
        DiffRow::Hunk(f, h) => vec![Span::styled(
            truncate(&clean_line(&d.files[f].hunks[h].header), width),
            style(Slot::DiffHunk),
        )],
        DiffRow::Line(f, h, l) => {
            let line = &d.files[f].hunks[h].lines[l];
            let (mark, slot) = match line.op {
                LineOp::Add => ('+', Slot::DiffAdd),
                LineOp::Remove => ('-', Slot::DiffRemove),
                LineOp::Context => (' ', Slot::Text),
            };
            let num = |n: Option<u64>| n.map_or(String::new(), |n| n.to_string());
            let gutter = format!("{:>5} {:>5} ", num(line.old), num(line.new));
            let room = width.saturating_sub(gutter.len() + 1);
            vec![
                Span::styled(gutter, style(Slot::Muted)),
                Span::styled(
                    format!("{mark}{}", truncate(&clean_line(&line.text), room)),
                    style(slot),
                ),
            ]
        }
    }
}

/// The tab's status line: the file and row, the search being typed or the last one, and
/// the comments waiting.
fn status(d: &DiffView, state: &State, theme: &Theme) -> Line<'static> {
    let (added, removed) = d.totals();
    let file = d
        .file_of(state.diff.row)
        .map(|f| format!("file {}/{}", f + 1, d.files.len()))
        .unwrap_or_else(|| format!("{} files", d.files.len()));
    let mut spans = vec![Span::styled(
        format!(
            " {file} · +{added} −{removed} · row {}/{} ",
            state.diff.row + 1,
            d.rows().len()
        ),
        theme.style(Slot::Muted),
    )];
    if let Some(q) = &state.diff.editing {
        spans.push(Span::styled(
            format!("/{}▏", clean_line(q)),
            theme.style(Slot::InputText),
        ));
    } else {
        if !state.diff.query.is_empty() {
            spans.push(Span::styled(
                format!("/{} (n/N) ", clean_line(&state.diff.query)),
                theme.style(Slot::FilterMatch),
            ));
        }
        let n = state.diff.comments_for(&d.job_id).count();
        if n > 0 {
            spans.push(Span::styled(
                format!("· {n} comment(s): R sends them "),
                theme.style(Slot::Accent),
            ));
        }
    }
    Line::from(spans)
}

/// Draws the visible window of the diff and its status line.
pub fn render(frame: &mut Frame, area: Rect, state: &State, d: &DiffView, theme: &Theme) {
    let [body, foot] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    if let Some(e) = &d.error {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!("  {}", clean_line(e)),
                theme.style(Slot::Muted),
            )),
            body,
        );
        return;
    }
    if d.files.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                "  no changes against its base yet",
                theme.style(Slot::Muted),
            )),
            body,
        );
        return;
    }
    let h = body.height as usize;
    let w = body.width as usize;
    let rows = d.rows();
    let sel = state.diff.row.min(rows.len().saturating_sub(1));
    let top = keep_in_view(state.diff.top, sel, h).min(rows.len().saturating_sub(1));
    let mut lines: Vec<Line<'static>> = Vec::with_capacity(h);
    for (i, row) in rows.iter().enumerate().skip(top) {
        if lines.len() >= h {
            break;
        }
        let selected = i == sel;
        let spans = row_line(d, *row, w.saturating_sub(1), theme)
            .into_iter()
            .map(|s| {
                let st = row_style(s.style, selected, theme);
                Span::styled(s.content, st)
            });
        let mark = Span::styled(if selected { "▌" } else { " " }, theme.style(Slot::Accent));
        lines.push(Line::from(
            std::iter::once(mark).chain(spans).collect::<Vec<_>>(),
        ));
        if let Some(anchor) = d.anchor(i).filter(|_| matches!(row, DiffRow::Line(..))) {
            for c in state
                .diff
                .comments_for(&d.job_id)
                .filter(|c| c.anchor == anchor)
            {
                lines.push(Line::from(Span::styled(
                    truncate(&format!("        ✎ {}", clean_line(&c.text)), w),
                    comment_style(theme),
                )));
            }
        }
    }
    lines.truncate(h);
    frame.render_widget(Paragraph::new(lines), body);
    frame.render_widget(Paragraph::new(status(d, state, theme)), foot);
}

/// The box a review comment is typed in, naming the line it is anchored to.
pub fn render_comment(
    frame: &mut Frame,
    area: Rect,
    (job_id, anchor): (&str, &str),
    text: &ratatui_textarea::TextArea<'static>,
    theme: &Theme,
) {
    super::answer_form::render_text(
        frame,
        area,
        &format!("Comment on {anchor}"),
        &format!(
            "Kept with {job_id}'s other comments; R in the drawer sends them back to its agent (job review)."
        ),
        text,
        "keep",
        theme,
    )
}

fn comment_style(theme: &Theme) -> Style {
    theme.style(Slot::Accent)
}
