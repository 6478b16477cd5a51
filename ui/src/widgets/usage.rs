//! The Usage view (`$`): the last day's settled spend as a bar per UTC hour, its total,
//! today's daily caps, then the roots and the agents that spent most, each root with its
//! budget headroom.
//!
//! Owns drawing only; the figures are `Snapshot::usage`, the keys `update::usage`'s.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{str_width, truncate};
use crate::theme::{Slot, Theme};
use crate::view::{UsageRow, UsageView, tokens, utc_clock};

/// Rows of the hourly bars; each row holds eight levels.
const BAR_ROWS: usize = 3;
const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const HOUR_MS: i64 = 3_600_000;

/// Draws the view over the body, row `sel` (roots first, then agents) highlighted.
pub fn render(frame: &mut Frame, body: Rect, sel: usize, usage: Option<&UsageView>, theme: &Theme) {
    let inner = super::messages::pager_box(
        frame,
        body,
        " usage · last 24 h · Enter open · j/k move · Esc close ".into(),
        theme,
    );
    let Some(u) = usage else {
        let line = Line::styled("reading the store…", theme.style(Slot::Muted));
        frame.render_widget(Paragraph::new(line), inner);
        return;
    };
    let width = inner.width as usize;
    // Each hour's bar as wide as the row allows, up to four cells.
    let cell = (width / u.hours.len().max(1)).clamp(1, 4);
    let mut head = summary(u, cell, theme);
    head.extend(caps(u, theme));
    let rows = rows(u, sel, width, theme);
    // The selected row stays in sight below the fixed head.
    let room = (inner.height as usize).saturating_sub(head.len());
    let sel_line = sel + 2 + usize::from(sel >= u.roots.len());
    let skip = (sel_line + 1).saturating_sub(room);
    head.extend(rows.into_iter().skip(skip));
    frame.render_widget(Paragraph::new(head), inner);
}

/// The day's total, its bars and their time axis.
fn summary(u: &UsageView, cell: usize, theme: &Theme) -> Vec<Line<'static>> {
    let t = &u.total;
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!("since {} UTC  ", hh_mm(u.since_ms)),
            theme.style(Slot::Muted),
        ),
        Span::styled(
            format!(
                "${:.2} · {} jobs · {} tokens",
                t.usd,
                t.jobs,
                tokens(t.tokens)
            ),
            theme.style(Slot::Text),
        ),
    ])];
    for row in bar_rows(&u.hours, BAR_ROWS, cell) {
        lines.push(Line::styled(row, theme.style(Slot::Accent)));
    }
    let peak = u
        .hours
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .filter(|(_, usd)| **usd > 0.0);
    let axis = match peak {
        Some((i, usd)) => format!(
            "{}{:>w$}",
            hh_mm(u.since_ms),
            format!(
                "peak ${usd:.2} at {}",
                hh_mm(u.since_ms + i as i64 * HOUR_MS)
            ),
            w = (u.hours.len() * cell).saturating_sub(5)
        ),
        None => format!("{}  no spend settled in the last day", hh_mm(u.since_ms)),
    };
    lines.push(Line::styled(axis, theme.style(Slot::Muted)));
    lines
}

/// `HH:MM` of a UTC time.
fn hh_mm(ms: i64) -> String {
    utc_clock(ms).chars().take(5).collect()
}

/// Each hour as a bar `cell` cells wide, `height` rows tall, scaled to the day's peak; the
/// top row first.
pub fn bar_rows(hours: &[f64], height: usize, cell: usize) -> Vec<String> {
    let peak = hours.iter().copied().fold(0.0_f64, f64::max);
    let steps = (height * 8) as f64;
    let levels: Vec<usize> = hours
        .iter()
        .map(|usd| match peak > 0.0 {
            // Any spend shows at least the lowest bar.
            true if *usd > 0.0 => ((usd / peak * steps).round() as usize).max(1),
            _ => 0,
        })
        .collect();
    (0..height)
        .rev()
        .map(|row| {
            levels
                .iter()
                .map(|l| {
                    let c = LEVELS[l.saturating_sub(row * 8).min(8)];
                    c.to_string().repeat(cell)
                })
                .collect()
        })
        .collect()
}

fn caps(u: &UsageView, theme: &Theme) -> Vec<Line<'static>> {
    u.caps
        .iter()
        .map(|c| {
            let slot = match c.reached {
                true => Slot::StatusWarn,
                false => Slot::Muted,
            };
            Line::styled(c.text.clone(), theme.style(slot))
        })
        .collect()
}

/// The roots' heading and rows, then the agents'.
fn rows(u: &UsageView, sel: usize, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::default(),
        heading("top roots", u.roots.is_empty(), theme),
    ];
    for (i, r) in u.roots.iter().enumerate() {
        lines.push(row(r, i == sel, width, theme));
    }
    lines.push(heading("top agents", u.agents.is_empty(), theme));
    for (i, r) in u.agents.iter().enumerate() {
        lines.push(row(r, u.roots.len() + i == sel, width, theme));
    }
    lines
}

fn heading(what: &str, empty: bool, theme: &Theme) -> Line<'static> {
    let text = match empty {
        true => format!("{what}: none in the last day"),
        false => format!("{what} by spend"),
    };
    Line::styled(text, theme.style(Slot::PaneTitle))
}

/// `▸ job-… title   $1.20  120.0k tok  12 jobs  $1.20 of $5.00`, the label cut to fit.
fn row(r: &UsageRow, selected: bool, width: usize, theme: &Theme) -> Line<'static> {
    let figures = format!(
        " {:>8} {:>7} tok {:>5} jobs",
        format!("${:.2}", r.usd),
        tokens(r.tokens),
        r.jobs
    );
    let budget = match r.budget.is_empty() {
        true => String::new(),
        false => format!("  {}", r.budget),
    };
    let label = match r.title.is_empty() {
        true => r.key.clone(),
        false => format!("{} {}", r.key, r.title),
    };
    let room = width.saturating_sub(2 + str_width(&figures) + str_width(&budget));
    let label = truncate(&label, room.max(8));
    let pad = room.saturating_sub(str_width(&label));
    let (mark, slot) = match selected {
        true => ("▸ ", Slot::Selection),
        false => ("  ", Slot::Text),
    };
    Line::from(vec![
        Span::styled(
            format!("{mark}{label}{}{figures}", " ".repeat(pad)),
            theme.style(slot),
        ),
        Span::styled(budget, theme.style(Slot::Muted)),
    ])
}
