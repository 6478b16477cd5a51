//! The Attention pane: every ask-gate and failure escalation, oldest first, with its
//! question, choices, why and age, and the keys that act on it in place.
//!
//! Owns drawing of attention items only; must not decide what an answer does.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{fit, no_rows, pane_block, row_style, truncate};
use crate::rows;
use crate::sanitize::clean_line;
use crate::search::count_note;
use crate::state::{FilterScope, Pane, State};
use crate::theme::{Slot, Theme};
use crate::view::{AttentionItem, AttentionKind, Snapshot, age};

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let items = rows::attention_rows(snap, state);
    let count = count_note(
        state.filter_for(FilterScope::Jobs),
        items.len(),
        snap.attention.len(),
    );
    let note = match (items.is_empty(), count.is_empty()) {
        (_, false) => format!("{count} waiting"),
        (true, true) => String::new(),
        (false, true) => format!("{} waiting", items.len()),
    };
    let block = pane_block(Pane::Attention, state, theme, note);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = inner.width as usize;
    if items.is_empty() {
        no_rows(
            frame,
            inner,
            state,
            theme,
            " Nothing waits for you.",
            " No gate matches the filter.",
        );
        return;
    }
    let sel = selected(state, &items);
    let mut lines: Vec<Line> = Vec::new();
    for (n, (i, _)) in placement(&items, sel, w, inner.height as usize)
        .into_iter()
        .enumerate()
    {
        if n > 0 {
            lines.push(Line::raw(""));
        }
        let item = items[i];
        let selected = i == sel && state.focus == Pane::Attention;
        let mark = if i == sel { "▌" } else { " " };
        lines.push(head_line(item, mark, selected, state.now_ms, w, theme));
        let base = row_style(theme.style(Slot::Text), selected, theme);
        let muted = row_style(theme.style(Slot::Muted), selected, theme);
        lines.extend(body_lines(item, w.saturating_sub(4), base, muted, i == sel));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Lines an item takes when closed (its head and two body lines).
pub const ITEM_LINES: usize = 3;

/// The most lines an open item's reason takes before it is cut.
const REASON_MAX: usize = 8;

/// The index of the selected item among `items`.
pub fn selected(state: &State, items: &[&AttentionItem]) -> usize {
    items
        .iter()
        .position(|a| state.sel.attention.as_deref() == Some(a.key().as_str()))
        .unwrap_or(0)
}

/// Lines an item takes at `width` inside columns: the selected one is open, its whole
/// reason wrapped (what needs a human is read in full, not cut at `escalate_h…`).
pub fn item_lines(item: &AttentionItem, width: usize, open: bool) -> usize {
    // Every frame sizes the pane from all items: a closed one is always its head and two
    // body lines, so only the open one is wrapped to be counted.
    if !open {
        return ITEM_LINES;
    }
    let style = Style::default();
    1 + body_lines(item, width.saturating_sub(4), style, style, open).len()
}

/// The items shown in `height` rows, each with the row it starts on: from the first one
/// that keeps the selected item in view, a blank row between two (mouse hits use this).
pub fn placement(
    items: &[&AttentionItem],
    sel: usize,
    width: usize,
    height: usize,
) -> Vec<(usize, usize)> {
    let lines: Vec<usize> = items
        .iter()
        .enumerate()
        .map(|(i, a)| item_lines(a, width, i == sel))
        .collect();
    let span = |from: usize| lines[from..=sel].iter().map(|l| l + 1).sum::<usize>() - 1;
    let mut first = 0;
    while first < sel && span(first) > height {
        first += 1;
    }
    let mut out = Vec::new();
    let mut top = 0;
    for (i, l) in lines.iter().enumerate().skip(first) {
        if top >= height {
            break;
        }
        out.push((i, top));
        top += l + 1;
    }
    out
}

/// The rows the pane wants for its items at `width` inside columns (borders included).
pub fn wanted(items: &[&AttentionItem], sel: usize, width: usize) -> u16 {
    let body: usize = items
        .iter()
        .enumerate()
        .map(|(i, a)| item_lines(a, width, i == sel) + 1)
        .sum();
    (2 + body.saturating_sub(1).max(ITEM_LINES)) as u16
}

/// An item's first line: its kind, which job and agent, and how long it has waited.
fn head_line(
    item: &AttentionItem,
    mark: &'static str,
    selected: bool,
    now_ms: i64,
    w: usize,
    theme: &Theme,
) -> Line<'static> {
    let ago = age(now_ms - item.opened_ms);
    let (kind_slot, kind, head) = match &item.kind {
        AttentionKind::Ask { questions } => (
            Slot::AttentionAsk,
            "? ask    ",
            format!(
                "{} · {} · {} question{}",
                item.job_id,
                item.agent,
                questions.len(),
                if questions.len() == 1 { "" } else { "s" }
            ),
        ),
        AttentionKind::Failure { failed_leg, .. } => (
            Slot::AttentionFailure,
            "✗ failure",
            format!("{} · leg {} failed", item.job_id, leg_name(failed_leg)),
        ),
        AttentionKind::Preflight { .. } => (
            Slot::AttentionFailure,
            "! route  ",
            format!("{} · {} · nothing dispatched", item.job_id, item.agent),
        ),
        AttentionKind::Overlap { jobs, files } => (
            Slot::AttentionAsk,
            "⚠ overlap",
            format!(
                "{} ⇄ {} · {} file{}",
                jobs[0],
                jobs[1],
                files.len(),
                if files.len() == 1 { "" } else { "s" }
            ),
        ),
        AttentionKind::Conflict { with, files, .. } => (
            Slot::AttentionFailure,
            "✗ conflict",
            format!(
                "{} ⇄ {with} · {} file{}",
                item.job_id,
                files.len(),
                if files.len() == 1 { "" } else { "s" }
            ),
        ),
        AttentionKind::Stall { signal, .. } => (
            Slot::AttentionFailure,
            "⧗ stalled",
            format!("{} · {} · {signal}", item.job_id, item.agent),
        ),
    };
    let head_w = w.saturating_sub(12 + ago.len() + 1);
    let base = row_style(theme.style(Slot::Text), selected, theme);
    Line::from(vec![
        Span::styled(mark, theme.style(Slot::Accent)),
        Span::styled(
            format!("{kind} "),
            row_style(theme.style(kind_slot), selected, theme),
        ),
        Span::styled(fit(&clean_line(&head), head_w), base),
        Span::styled(
            format!(" {ago}"),
            row_style(theme.style(Slot::AttentionAge), selected, theme),
        ),
    ])
}

/// An item's body lines, indented under its head: two, or when `open` a failure's whole
/// reason (up to `REASON_MAX` lines).
fn body_lines(
    item: &AttentionItem,
    body_w: usize,
    base: Style,
    muted: Style,
    open: bool,
) -> Vec<Line<'static>> {
    let indented = |text: &str, style: Style| {
        Line::from(vec![
            Span::styled("    ", style),
            Span::styled(fit(text, body_w), style),
        ])
    };
    match &item.kind {
        AttentionKind::Ask { questions } => {
            let first = questions.first();
            let more = if questions.len() > 1 {
                format!(" (+{} more)", questions.len() - 1)
            } else {
                String::new()
            };
            let q = first.map(|q| clean_line(&q.prompt)).unwrap_or_default();
            let choices = match first {
                Some(q) if !q.choices.is_empty() => q
                    .choices
                    .iter()
                    .map(|c| format!("[{}]", clean_line(c)))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => "free text".to_string(),
            };
            let why = item
                .why
                .as_deref()
                .map(|w| format!("  why: {}", clean_line(w)))
                .unwrap_or_default();
            vec![
                indented(
                    &format!("{}{more}", truncate(&q, body_w.saturating_sub(more.len()))),
                    base,
                ),
                indented(&format!("{choices}{why}"), muted),
            ]
        }
        AttentionKind::Failure { reason, .. } => {
            // The reason gets the body lines (the footer lists r/c/x): wrapped, and cut
            // only at the end of the last.
            let max = if open { REASON_MAX } else { 2 };
            let mut wrapped = super::wrap(&format!("why: {}", clean_line(reason)), body_w);
            if wrapped.len() > max {
                let rest = wrapped[max - 1..].join(" ");
                wrapped.truncate(max - 1);
                wrapped.push(truncate(&rest, body_w));
            }
            if wrapped.len() < 2 {
                wrapped.resize(2, String::new());
            }
            let last = wrapped.len() - 1;
            wrapped
                .iter()
                .enumerate()
                .map(|(i, l)| indented(l, if i == last { muted } else { base }))
                .collect()
        }
        AttentionKind::Stall { evidence, .. } => vec![
            indented(&clean_line(evidence), base),
            indented(
                "still running · C cancels it · l leaves it running (until it stalls anew)",
                muted,
            ),
        ],
        AttentionKind::Preflight { reason } => vec![
            indented(&format!("PREFLIGHT_FAILED: {}", clean_line(reason)), base),
            indented(
                "register the agent (gitmoot agent add) · a opens the job",
                muted,
            ),
        ],
        AttentionKind::Overlap { jobs, files } => vec![
            indented(
                &clean_line(&format!(
                    "job {} and job {} both change {}",
                    jobs[0],
                    jobs[1],
                    files.join(", ")
                )),
                base,
            ),
            indented(
                "land one, then the other (its land names what the first changed) · a opens the job",
                muted,
            ),
        ],
        AttentionKind::Conflict {
            with,
            on_base,
            files,
            hunks,
        } => vec![
            indented(
                &clean_line(&conflict_words(&item.job_id, with, *on_base, files, hunks)),
                base,
            ),
            indented(
                if *on_base {
                    "rebase it (gitmoot job rebase), merge the base in its worktree, or discard it · a opens the job"
                } else {
                    "landing both conflicts: land one, then rebase the other · a opens the job"
                },
                muted,
            ),
        ],
    }
}

/// `JOB would conflict in F:2-3 with work landed on main`, or `… with job J`.
fn conflict_words(
    job: &str,
    with: &str,
    on_base: bool,
    files: &[String],
    hunks: &[crate::view::ConflictHunk],
) -> String {
    let other = if on_base {
        format!("work landed on {with}")
    } else {
        format!("job {with}")
    };
    format!(
        "{job} would conflict in {} with {other}",
        crate::work::places(files, hunks)
    )
}

fn leg_name(id: &str) -> &str {
    id.rsplit('/').next().unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::Question;
    use gitmoot_types::StallSignal;

    fn item(kind: AttentionKind) -> AttentionItem {
        AttentionItem {
            job_id: "r1/a".into(),
            root_id: "r1".into(),
            agent: "claude".into(),
            why: Some("a why long enough to wrap at any width ".repeat(8)),
            opened_ms: 0,
            thread: None,
            kind,
        }
    }

    /// `item_lines` counts a closed item without wrapping it: that holds only while every
    /// kind's closed body is exactly two lines, whatever its text and the width.
    #[test]
    fn a_closed_item_of_every_kind_takes_its_head_and_two_lines() {
        let long = "a reason long enough to wrap many times over ".repeat(20);
        let kinds = [
            AttentionKind::Ask {
                questions: vec![Question {
                    id: "q".into(),
                    prompt: long.clone(),
                    choices: vec![long.clone(), "no".into()],
                }],
            },
            AttentionKind::Failure {
                failed_leg: "r1/b".into(),
                reason: long.clone(),
            },
            AttentionKind::Preflight {
                reason: long.clone(),
            },
            AttentionKind::Overlap {
                jobs: ["r1/a".into(), "r1/b".into()],
                files: vec![long.clone(); 4],
            },
            AttentionKind::Conflict {
                with: "main".into(),
                on_base: true,
                files: vec![long.clone(); 4],
                hunks: vec![crate::view::ConflictHunk {
                    file: long.clone(),
                    start: 3,
                    end: 9,
                }],
            },
            AttentionKind::Stall {
                signal: StallSignal::Silent,
                evidence: long.clone(),
            },
        ];
        let style = Style::default();
        for kind in kinds {
            let item = item(kind);
            for width in [10, 40, 120] {
                let closed = body_lines(&item, width, style, style, false).len();
                assert_eq!(1 + closed, ITEM_LINES, "{:?} at {width}", item.kind);
            }
        }
        let open = item(AttentionKind::Failure {
            failed_leg: "r1/b".into(),
            reason: long,
        });
        assert!(item_lines(&open, 40, true) > ITEM_LINES);
    }
}
