//! The Job tree pane: a header row, then roots newest first, then legs and continuations,
//! with fold markers, state glyphs and colours, spinners, per-node rollups, elapsed time
//! and tokens; a row the store could not read is marked `!` and names its job and column.
//!
//! Owns drawing of `rows::tree_rows`; folding and filtering live in `rows`. Width
//! priorities: a root's job id (the operator's only handle) is never cut; the fixed
//! columns drop first (tokens, then rollup, then elapsed) before the title shrinks below
//! [`MIN_TITLE`]; a column no row fills is not drawn; titles come before a running row's
//! step and use the blank a row's figures leave.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{fit, job_glyph, job_slot, no_rows, pane_block, root_glyph, row_style};
use crate::rows::{self, TreeRow};
use crate::sanitize::clean_line;
use crate::search::{Filter, count_note};
use crate::state::{FilterScope, Pane, State};
use crate::theme::{Slot, Theme};
use crate::view::{JobKind, JobState, Snapshot, elapsed, node_label, tokens};

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let rows = rows::tree_rows(snap, state);
    let (hits, jobs) = rows::tree_matches(snap, state);
    let count = count_note(state.filter_for(FilterScope::Jobs), hits, jobs);
    let mut note = match state.grouped {
        true => super::groups::note(snap, state.now_ms),
        false => format!("{} roots", snap.roots.len()),
    };
    let marked = match state.marks.len() {
        0 => String::new(),
        n => format!("{n} marked"),
    };
    for part in [state.tree_sort.note(), count, marked] {
        if !part.is_empty() {
            note.push_str(&format!(" · {part}"));
        }
    }
    let block = pane_block(Pane::Tree, state, theme, note);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if rows.is_empty() {
        let empty = if snap.counts.agents == 0 {
            " No agents yet: `:agent add NAME --runtime claude`."
        } else {
            " No jobs yet. `:job run --agent A PROMPT` starts one."
        };
        no_rows(
            frame,
            inner,
            state,
            theme,
            empty,
            " No job matches the filter.",
        );
        return;
    }
    let sel = rows
        .iter()
        .position(|r| Some(&r.node.id) == state.sel.tree.as_ref())
        .unwrap_or(0);
    // A column no row has a figure for is not drawn: its width goes to the titles.
    let any_tokens = rows.iter().any(|r| row_tokens(r, &snap.live) > 0);
    let cols = Columns::for_width(inner.width as usize, any_tokens);
    // The grouped view spends up to one line per group on its heading.
    let headings = if state.grouped { 3 } else { 0 };
    let body_h = inner.height.saturating_sub(HEADER_ROWS + headings) as usize;
    let offset = rows::scroll_offset(sel, body_h);
    let mut lines: Vec<Line> = vec![header(cols, theme, inner.width as usize)];
    let mut filter = Filter::new(state.filter_for(FilterScope::Jobs));
    let hit = theme.style(Slot::FilterMatch);
    // Every root's group is read only when the view is grouped: a frame of the plain tree
    // must not cost a pass over the whole history.
    let counts = if state.grouped {
        crate::groups::counts(snap, state.now_ms)
    } else {
        Default::default()
    };
    let mut group = None;
    for (i, r) in rows.iter().enumerate().skip(offset).take(body_h) {
        if state.grouped && r.level == 0 {
            let g = crate::groups::group_of(snap, r.root, state.now_ms);
            if let Some(g) = g.filter(|g| Some(*g) != group) {
                let n = counts[crate::groups::Group::ALL
                    .iter()
                    .position(|x| *x == g)
                    .unwrap_or(0)];
                lines.push(super::groups::heading(g, n, inner.width as usize, theme));
                group = Some(g);
            }
        }
        let idle = !snap.daemon.runs_jobs();
        let l = row(
            r,
            i == sel,
            idle,
            state,
            snap,
            theme,
            inner.width as usize,
            cols,
        );
        lines.push(Line::from(filter.mark(l.spans, hit)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Rows the header takes above the first job (mouse hit-testing skips them).
pub const HEADER_ROWS: u16 = 1;

/// Titles keep at least this many columns before a fixed column is dropped: enough for a
/// prompt's first words (`Plan the session-r…`), where ten left only `Plan the s…`.
pub const MIN_TITLE: usize = 16;

/// The fewest columns a trailer is drawn in (two of them its gap).
const TRAILER_MIN: usize = 10;

/// Widths of the fixed columns; 0 means dropped at this pane width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    pub rollup: usize,
    pub elapsed: usize,
    pub tokens: usize,
}

impl Columns {
    const ROLLUP: usize = 12;
    const ELAPSED: usize = 7;
    const TOKENS: usize = 6;

    /// Lead (marker, fold, glyph), a whole job id and `MIN_TITLE` come first; then the
    /// columns in the order elapsed, rollup, tokens (when `tokens`: some row has any) while
    /// they fit, so they drop in reverse and a later column never stays where an earlier
    /// one went.
    pub fn for_width(width: usize, tokens: bool) -> Self {
        let label = 5 + 12 + 2 + MIN_TITLE;
        let mut c = Columns {
            rollup: 0,
            elapsed: 0,
            tokens: 0,
        };
        let mut used = label;
        for (slot, w) in [(0, Self::ELAPSED), (1, Self::ROLLUP), (2, Self::TOKENS)] {
            if used + w >= width {
                break;
            }
            if slot == 2 && !tokens {
                continue;
            }
            used += w + 1;
            match slot {
                0 => c.elapsed = w,
                1 => c.rollup = w,
                _ => c.tokens = w,
            }
        }
        c
    }

    fn text(self, rollup: &str, time: &str, toks: &str) -> String {
        let mut s = String::new();
        if self.rollup > 0 {
            s.push_str(&format!(" {rollup:>w$}", w = self.rollup));
        }
        if self.elapsed > 0 {
            s.push_str(&format!(" {time:>w$}", w = self.elapsed));
        }
        if self.tokens > 0 {
            s.push_str(&format!(" {toks:>w$}", w = self.tokens));
        }
        s
    }
}

fn header<'a>(cols: Columns, theme: &Theme, width: usize) -> Line<'a> {
    let right = cols.text("rollup", "elapsed", "tokens");
    let left = width.saturating_sub(super::str_width(&right));
    Line::from(vec![
        Span::styled(fit("  job · title", left), theme.style(Slot::Muted)),
        Span::styled(right, theme.style(Slot::Muted)),
    ])
}

/// One row; `idle` means no daemon will start queued jobs, which their rows then say.
#[allow(clippy::too_many_arguments)]
fn row<'a>(
    r: &TreeRow,
    is_sel: bool,
    idle: bool,
    state: &State,
    snap: &Snapshot,
    theme: &Theme,
    width: usize,
    cols: Columns,
) -> Line<'a> {
    let snap_live = &snap.live;
    let selected = is_sel && state.focus == Pane::Tree;
    let muted = row_style(theme.style(Slot::Muted), selected, theme);
    let edge = row_style(theme.style(Slot::DagEdge), selected, theme);
    let text = row_style(theme.style(Slot::Text), selected, theme);
    let n = r.node;
    let (glyph, gslot) = if n.unreadable.is_some() {
        ("!", Slot::JobFailed)
    } else if n.kind == JobKind::Root {
        root_glyph(r.root, state.tick)
    } else {
        (job_glyph(n.state, state.tick), job_slot(n.state))
    };
    let (mut head, tail) = head_and_tail(r, idle);
    // A write job's work: landed, review rounds, overlaps (part of the head, never cut).
    if n.unreadable.is_none()
        && let Some(w) = snap.work.rows.get(&n.id)
    {
        head.push_str(&work_mark(w));
    }
    if let Some(signal) = snap.stall(&n.id) {
        head.push_str(&format!(" ⧗ {signal}"));
    }
    let (spend, step) = trailer(r, snap_live);
    let right = figures(r, state.now_ms, snap_live, cols);
    let right_w = super::str_width(&right);
    let left_w = width.saturating_sub(right_w);
    let mark = if state.marks.contains(&n.id) {
        "●"
    } else if is_sel {
        "▌"
    } else {
        " "
    };
    let lead = lead(r);
    let lead_w = 1 + super::str_width(&lead) + super::str_width(glyph) + 1;
    let label_style = if n.kind == JobKind::Root {
        row_style(theme.style(Slot::PaneTitle), selected, theme)
    } else {
        text
    };
    let mut spans = vec![
        Span::styled(mark, row_style(theme.style(Slot::Accent), selected, theme)),
        Span::styled(lead, edge),
        Span::styled(
            glyph.to_string(),
            row_style(theme.style(gslot), selected, theme),
        ),
        Span::styled(" ", text),
    ];
    let room = left_w.saturating_sub(lead_w);
    let full_w = super::str_width(&head) + super::str_width(&tail);
    let spend_w = super::str_width(&spend);
    // The spend is a figure: the label yields up to half the row to it (the id's head is
    // never cut for it). Titles come before the running step, which takes what is left
    // when that is enough to read.
    let label_w = if spend_w > 0 && room > 8 {
        full_w
            .min(room.saturating_sub(spend_w).max(room / 2))
            .max(super::str_width(&head).min(room))
    } else {
        full_w.min(room)
    };
    let rest = room.saturating_sub(label_w);
    let mut trailer = spend;
    if !step.is_empty() && rest >= spend_w + TRAILER_MIN {
        trailer.push_str(&step);
    }
    spans.push(Span::styled(label(&head, &tail, label_w), label_style));
    spans.push(Span::styled(fit(&trailer, rest), muted));
    spans.push(Span::styled(right, muted));
    Line::from(spans)
}

/// What a write job's row says of its work: `⇡ landed` or `discarded`, `↻N` review
/// rounds, `⚠ overlaps` while another open job of its repo changes some of the same files
/// and the two merge cleanly, `⚠ conflicts` while its work conflicts with another's or
/// with its base branch's tip.
pub fn work_mark(w: &crate::work::WorkRow) -> String {
    use crate::work::WorktreeState;
    let mut s = String::new();
    match w.state {
        Some(WorktreeState::Landed) => s.push_str(" ⇡ landed"),
        Some(WorktreeState::Discarded) => s.push_str(" discarded"),
        _ => {}
    }
    if w.review_rounds > 0 {
        s.push_str(&format!(" ↻{}", w.review_rounds));
    }
    match w.clash {
        Some(crate::work::Clash::Conflicts) => s.push_str(" ⚠ conflicts"),
        _ if !w.overlaps.is_empty() => s.push_str(" ⚠ overlaps"),
        _ => {}
    }
    s
}

/// The tree guides down to the row and its fold mark.
fn lead(r: &TreeRow) -> String {
    let mut guide = String::new();
    for l in 1..r.level {
        guide.push_str(if r.guides[l.min(15)] { "│ " } else { "  " });
    }
    if r.level > 0 {
        guide.push_str(if r.last { "└─" } else { "├─" });
    }
    let fold = if r.node.children.is_empty() {
        " "
    } else if r.folded {
        "▸"
    } else {
        "▾"
    };
    format!("{guide}{fold}")
}

/// The label's two parts: the head (the id, never cut) and the tail (title or agent).
fn head_and_tail(r: &TreeRow, idle: bool) -> (String, String) {
    let n = r.node;
    // A damaged row names its whole job id and the column: nothing else in it can be trusted.
    if let Some(column) = &n.unreadable {
        return (format!("{}  unreadable: {column}", n.id), String::new());
    }
    let waiting = if n.kind == JobKind::Root {
        !r.root.state.is_terminal() && n.rollup().queued > 0
    } else {
        n.state == JobState::Queued
    };
    // Said before the title, which is what gets cut on a narrow pane.
    let note = if idle && waiting {
        "will not run · "
    } else {
        ""
    };
    // The note belongs to the part that is never cut (the id's), so it always shows.
    match (n.kind == JobKind::Root, note.is_empty()) {
        (true, true) => (n.id.clone(), format!("  {}", clean_line(&r.root.title))),
        (true, false) => (
            format!("{}  {}", n.id, note.trim_end()),
            format!(" {}", clean_line(&r.root.title)),
        ),
        (false, true) => (node_label(n).to_string(), format!(" · {}", n.agent)),
        (false, false) => (
            format!("{} · {}", node_label(n), note.trim_end()),
            format!(" {}", n.agent),
        ),
    }
}

/// Dimmed after the label: a root's spend against its budget, a running job's newest step.
/// Its two parts: the spend (a figure, as wide as the budget's) and the running step.
fn trailer(r: &TreeRow, live: &crate::live::Live) -> (String, String) {
    let n = r.node;
    let spend = match live.root_spend(&r.root.id, r.root.cost_usd, r.root.tokens) {
        Some(spend) if n.kind == JobKind::Root => format!("  {spend}"),
        _ => String::new(),
    };
    let step = match live.latest.get(&n.id) {
        Some(step) if n.state == JobState::Running => format!("  {}", clean_line(step)),
        _ => String::new(),
    };
    (spend, step)
}

/// The right-hand columns: rollup, elapsed and tokens.
fn figures(r: &TreeRow, now_ms: i64, live: &crate::live::Live, cols: Columns) -> String {
    let n = r.node;
    let rollup = if n.children.is_empty() {
        String::new()
    } else {
        let ru = n.rollup();
        let mut parts = Vec::new();
        for (c, g) in [
            (ru.running, "▶"),
            (ru.queued, "○"),
            (ru.done, "✓"),
            (ru.failed, "✗"),
        ] {
            if c > 0 {
                parts.push(format!("{c}{g}"));
            }
        }
        parts.join(" ")
    };
    let end = match (n.started_ms, n.finished_ms) {
        (Some(s), Some(f)) => elapsed(f - s),
        (Some(s), None) => elapsed(now_ms - s),
        // A queued job shows how long it has waited.
        (None, _) if n.state == JobState::Queued => elapsed(now_ms - n.created_ms),
        _ => "-".to_string(),
    };
    let time = if n.kind == JobKind::Root {
        elapsed(r.root.finished_ms.unwrap_or(now_ms) - r.root.created_ms)
    } else {
        end
    };
    let toks = row_tokens(r, live);
    // No usage reported (a shell agent, a runtime without token counts) reads `-`, not 0.
    let toks = if toks == 0 {
        "-".to_string()
    } else {
        tokens(toks)
    };
    // The columns are right-aligned, so a row's blank lead (a short or missing rollup) is
    // the label's to use; the figures stay in their columns.
    match cols.text(&rollup, &time, &toks).trim_start() {
        "" => String::new(),
        text => format!(" {text}"),
    }
}

/// A row's tokens: a root's settled plus its running legs', a leg's own.
fn row_tokens(r: &TreeRow, live: &crate::live::Live) -> u64 {
    if r.node.kind == JobKind::Root {
        live.root_tokens(&r.root.id, r.root.tokens)
    } else {
        r.node.tokens
    }
}

/// `head` (the id) whole, then as much of `tail` as fits, padded to `width`.
fn label(head: &str, tail: &str, width: usize) -> String {
    let hw = super::str_width(head);
    if hw >= width {
        return head.to_string();
    }
    fit(&format!("{head}{}", tail), width)
}

#[cfg(test)]
mod tests {
    use super::{Columns, MIN_TITLE};

    /// The title's share of a row once the lead, the id and the kept columns are paid for.
    fn title_width(width: usize, c: Columns) -> usize {
        let kept = [c.elapsed, c.rollup, c.tokens]
            .iter()
            .filter(|w| **w > 0)
            .map(|w| w + 1)
            .sum::<usize>();
        width - (5 + 12 + 2) - kept
    }

    #[test]
    fn columns_drop_tokens_then_rollup_then_elapsed_before_the_title_shrinks() {
        let wide = Columns::for_width(100, true);
        assert!(wide.elapsed > 0 && wide.rollup > 0 && wide.tokens > 0);
        // The left column of a 120-wide screen: tokens go, the title keeps its minimum.
        let half = Columns::for_width(58, true);
        assert!(half.elapsed > 0 && half.rollup > 0, "{half:?}");
        assert_eq!(half.tokens, 0, "{half:?}");
        assert!(title_width(58, half) >= MIN_TITLE);
        // Where the rollup does not fit, tokens do not take its place.
        let narrow = Columns::for_width(50, true);
        assert_eq!((narrow.rollup, narrow.tokens), (0, 0), "{narrow:?}");
        assert!(narrow.elapsed > 0);
        assert!(title_width(50, narrow) >= MIN_TITLE);
        let tiny = Columns::for_width(38, true);
        assert_eq!(tiny.elapsed + tiny.rollup + tiny.tokens, 0, "{tiny:?}");
    }
}
