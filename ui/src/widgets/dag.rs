//! The Delegation DAG pane of the selected root: layered left→right (coordinator → legs by
//! dependency depth → continuation) with box-drawn edges for parentage and deps; a
//! git-graph style list when the terminal is under 100 columns or the layers do not fit.
//! Under the layered graph, a legend spells each node's agent and what it waits for, so
//! a dependency reads without tracing crossing edges.
//!
//! Owns DAG drawing; the layering itself is `rows::dag_nodes`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{empty_note, fit, job_glyph, job_slot, pane_block, row_style};
use crate::rows::{self, DagNode};
use crate::sanitize::clean_line;
use crate::state::{Pane, State};
use crate::theme::{Slot, Theme};
use crate::view::{RootView, Snapshot, elapsed, node_label};

const GAP: usize = 3;
const MIN_COL: usize = 9;

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let Some(root) = rows::dag_root(snap, state) else {
        let block = pane_block(Pane::Dag, state, theme, String::new());
        let inner = block.inner(area);
        frame.render_widget(block, area);
        empty_note(frame, inner, theme, " No root selected.");
        return;
    };
    let nodes = rows::dag_nodes(root);
    let block = pane_block(
        Pane::Dag,
        state,
        theme,
        format!("{} · [ ] other roots", root.id),
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let sel = nodes
        .iter()
        .position(|n| Some(&n.node.id) == state.sel.dag.as_ref())
        .unwrap_or(0);
    let mut lines = vec![
        header(root, state.tick, theme, inner.width as usize),
        Line::raw(""),
    ];
    let layers = nodes.iter().map(|n| n.layer).max().unwrap_or(0) + 1;
    let col = (inner.width as usize).saturating_sub((layers - 1) * GAP) / layers;
    let body_h = (inner.height as usize).saturating_sub(4);
    if state.size.0 >= 100 && col >= MIN_COL {
        lines.extend(layered(
            &nodes,
            sel,
            col.min(22),
            state,
            theme,
            inner.width as usize,
        ));
        lines.push(Line::raw(""));
        lines.extend(legend(&nodes, state, theme, inner.width as usize));
    } else {
        lines.extend(list(&nodes, sel, state, theme, inner.width as usize));
    }
    lines.truncate(2 + body_h);
    while lines.len() < 2 + body_h {
        lines.push(Line::raw(""));
    }
    lines.push(Line::raw(""));
    lines.push(footer_line(
        &nodes[sel.min(nodes.len() - 1)],
        state,
        theme,
        inner.width as usize,
    ));
    frame.render_widget(Paragraph::new(lines), inner);
}

fn header<'a>(root: &RootView, tick: u64, theme: &Theme, w: usize) -> Line<'a> {
    let r = root.tree.rollup();
    let counts = format!(
        "{} jobs: {}▶ {}○ {}✓ {}✗",
        r.total(),
        r.running,
        r.queued,
        r.done,
        r.failed
    );
    let (glyph, slot) = super::root_glyph(root, tick);
    let state_s = format!("{glyph} {} ", root.state.as_str());
    let title_w = w.saturating_sub(super::str_width(&state_s) + super::str_width(&counts) + 2);
    Line::from(vec![
        Span::styled(format!(" {state_s}"), theme.style(slot)),
        Span::styled(
            fit(&clean_line(&root.title), title_w),
            theme.style(Slot::PaneTitle),
        ),
        Span::styled(format!(" {counts}"), theme.style(Slot::Muted)),
    ])
}

fn footer_line<'a>(n: &DagNode, state: &State, theme: &Theme, w: usize) -> Line<'a> {
    let j = n.node;
    let time = match (j.started_ms, j.finished_ms) {
        (Some(s), Some(f)) => format!(" {}", elapsed(f - s)),
        (Some(s), None) => format!(" {}", elapsed(state.now_ms - s)),
        _ => String::new(),
    };
    let deps = if j.deps.is_empty() {
        String::new()
    } else {
        format!(" · after {}", j.deps.join(", "))
    };
    let summary = j
        .summary
        .as_deref()
        .map(|s| format!(" · {}", clean_line(s)))
        .unwrap_or_default();
    Line::from(vec![
        Span::styled(
            format!(" {} ", job_glyph(j.state, state.tick)),
            theme.style(job_slot(j.state)),
        ),
        Span::styled(
            fit(
                &format!(
                    "{} · {} {} · {}{time}{deps}{summary}",
                    node_label(j),
                    j.agent,
                    j.action,
                    j.state.as_str()
                ),
                w.saturating_sub(3),
            ),
            theme.style(Slot::Text),
        ),
    ])
}

fn node_text(n: &DagNode, tick: u64) -> String {
    format!("{} {}", job_glyph(n.node.state, tick), node_label(n.node))
}

/// Direction bits of one edge cell.
const L: u8 = 1;
const R: u8 = 2;
const U: u8 = 4;
const D: u8 = 8;

fn edge_glyph(bits: u8) -> char {
    match bits {
        0 => ' ',
        b if b == L | R || b == L || b == R => '─',
        b if b == U | D || b == U || b == D => '│',
        b if b == R | D => '╭',
        b if b == L | D => '╮',
        b if b == R | U => '╰',
        b if b == L | U => '╯',
        b if b == L | R | D => '┬',
        b if b == L | R | U => '┴',
        b if b == U | D | R => '├',
        b if b == U | D | L => '┤',
        _ => '┼',
    }
}

struct Grid {
    w: usize,
    bits: Vec<u8>,
}

impl Grid {
    fn hline(&mut self, y: usize, x0: usize, x1: usize) {
        let w = self.w;
        self.line(x0, x1, (L, R), move |x| y * w + x);
    }

    fn vline(&mut self, x: usize, y0: usize, y1: usize) {
        let w = self.w;
        self.line(y0, y1, (U, D), move |y| y * w + x);
    }

    /// Joins the cells from `p0` to `p1` along one axis: each gets `toward_low` where a
    /// cell lies before it and `toward_high` where one lies after; `cell` maps a position
    /// on the axis to its index.
    fn line(
        &mut self,
        p0: usize,
        p1: usize,
        (toward_low, toward_high): (u8, u8),
        cell: impl Fn(usize) -> usize,
    ) {
        let (a, b) = (p0.min(p1), p0.max(p1));
        for p in a..=b {
            let i = cell(p);
            if p > a {
                self.bits[i] |= toward_low;
            }
            if p < b {
                self.bits[i] |= toward_high;
            }
        }
    }
}

fn layered<'a>(
    nodes: &[DagNode],
    sel: usize,
    col: usize,
    state: &State,
    theme: &Theme,
    w: usize,
) -> Vec<Line<'a>> {
    let layers = nodes.iter().map(|n| n.layer).max().unwrap_or(0) + 1;
    let mut pos = Vec::with_capacity(nodes.len());
    let mut per_layer = vec![0usize; layers];
    for n in nodes {
        pos.push((n.layer, per_layer[n.layer] * 2));
        per_layer[n.layer] += 1;
    }
    let height = per_layer.iter().max().copied().unwrap_or(1) * 2;
    let col_x = |l: usize| l * (col + GAP);
    let mut grid = Grid {
        w,
        bits: vec![0; w * height],
    };
    for (i, n) in nodes.iter().enumerate() {
        let (lb, rb) = pos[i];
        for f in &n.from {
            let Some(j) = nodes.iter().position(|m| m.node.id == *f) else {
                continue;
            };
            let (la, ra) = pos[j];
            let xs = (col_x(la) + col).min(w - 1);
            let xe = col_x(lb).saturating_sub(1).min(w - 1);
            let m1 = (xs + 2).min(xe);
            grid.hline(ra, xs, m1);
            if lb == la + 1 {
                grid.vline(m1, ra, rb);
                grid.hline(rb, m1, xe);
            } else {
                let lane = if rb > 0 { rb - 1 } else { rb + 1 };
                let m2 = xe.saturating_sub(2).max(m1);
                grid.vline(m1, ra, lane);
                grid.hline(lane, m1, m2);
                grid.vline(m2, lane, rb);
                grid.hline(rb, m2, xe);
            }
            // The edge touches both nodes: it leaves the source and enters the target.
            grid.bits[ra * w + xs] |= L;
            grid.bits[rb * w + xe] |= R;
        }
    }
    let edge = theme.style(Slot::DagEdge);
    let mut out = Vec::with_capacity(height);
    for y in 0..height {
        let mut spans: Vec<Span> = Vec::new();
        let mut x = 0;
        let mut run = String::new();
        while x < w {
            let here = nodes
                .iter()
                .enumerate()
                .find(|(i, _)| pos[*i].1 == y && col_x(pos[*i].0) == x);
            if let Some((i, n)) = here {
                if !run.is_empty() {
                    spans.push(Span::styled(std::mem::take(&mut run), edge));
                }
                // The selected node stays marked when the pane loses focus: the line below
                // the graph describes it.
                let text = fit(&node_text(n, state.tick), col.min(w - x));
                let style = row_style(theme.style(job_slot(n.node.state)), i == sel, theme);
                spans.push(Span::styled(text, style));
                x += col.min(w - x);
                continue;
            }
            run.push(edge_glyph(grid.bits[y * w + x]));
            x += 1;
        }
        if !run.is_empty() {
            spans.push(Span::styled(run, edge));
        }
        out.push(Line::from(spans));
    }
    out
}

fn list<'a>(
    nodes: &[DagNode],
    sel: usize,
    state: &State,
    theme: &Theme,
    w: usize,
) -> Vec<Line<'a>> {
    let edge = theme.style(Slot::DagEdge);
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let selected = i == sel && state.focus == Pane::Dag;
            let lead = if i == 0 {
                " ".to_string()
            } else if i + 1 == nodes.len() {
                " └─".to_string()
            } else {
                " ├─".to_string()
            };
            let deps = if i == 0 || n.node.deps.is_empty() {
                String::new()
            } else {
                format!("  ← {}", n.node.deps.join(", "))
            };
            let label = format!(
                "{} {} {}{deps}",
                node_label(n.node),
                n.node.agent,
                n.node.action
            );
            let lw = super::str_width(&lead);
            Line::from(vec![
                Span::styled(lead, edge),
                Span::styled(
                    format!("{} ", job_glyph(n.node.state, state.tick)),
                    row_style(theme.style(job_slot(n.node.state)), selected, theme),
                ),
                Span::styled(
                    fit(&label, w.saturating_sub(lw + 2)),
                    row_style(theme.style(Slot::Text), selected || i == sel, theme),
                ),
            ])
        })
        .collect()
}

/// One line per node below the layered graph: glyph, name, agent and its dependencies.
fn legend<'a>(nodes: &[DagNode], state: &State, theme: &Theme, w: usize) -> Vec<Line<'a>> {
    nodes
        .iter()
        .skip(1)
        .map(|n| {
            let deps = if n.node.deps.is_empty() {
                String::new()
            } else {
                format!(" · after {}", n.node.deps.join(", "))
            };
            let text = format!(
                " {} · {}{deps}",
                node_label(n.node),
                clean_line(&n.node.agent)
            );
            Line::from(vec![
                Span::styled(
                    format!(" {}", job_glyph(n.node.state, state.tick)),
                    theme.style(job_slot(n.node.state)),
                ),
                Span::styled(fit(&text, w.saturating_sub(2)), theme.style(Slot::Muted)),
            ])
        })
        .collect()
}
