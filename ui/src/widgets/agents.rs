//! The Agents pane: one entry per registered agent, two lines each: its state (working
//! on N jobs, waiting on a human, idle), runtime, model, policy, unread mentions and
//! today's spend; then what it is doing now (its newest step) or its last error.
//!
//! Owns drawing `Snapshot::agents` only; the rows follow the store at each load.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{fit, job_glyph, pane_block, row_style};
use crate::sanitize::clean_line;
use crate::state::{Pane, State};
use crate::theme::{Slot, Theme};
use crate::view::{AgentLive, AgentState, JobState, Snapshot};

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let working = snap
        .agents
        .iter()
        .filter(|a| a.state == AgentState::Working)
        .count();
    let note = format!("{} agents · {working} working", snap.agents.len());
    let block = pane_block(Pane::Agents, state, theme, note);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if snap.agents.is_empty() {
        super::empty_note(
            frame,
            inner,
            theme,
            " No agents registered. `:agent add NAME --runtime …` adds one.",
        );
        return;
    }
    let sel = state
        .sel
        .agent
        .as_deref()
        .and_then(|n| snap.agents.iter().position(|a| a.name == n))
        .unwrap_or(0);
    let per_page = (inner.height as usize / 2).max(1);
    let offset = crate::rows::scroll_offset(sel, per_page);
    let w = inner.width as usize;
    let mut lines = Vec::new();
    for (i, a) in snap.agents.iter().enumerate().skip(offset).take(per_page) {
        let selected = i == sel && state.focus == Pane::Agents;
        lines.extend(agent_lines(a, selected, state.tick, w, theme));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn agent_lines(
    a: &AgentLive,
    selected: bool,
    tick: u64,
    w: usize,
    theme: &Theme,
) -> [Line<'static>; 2] {
    let (glyph, slot, state) = match a.state {
        AgentState::Working => (
            job_glyph(JobState::Running, tick),
            Slot::JobRunning,
            format!("working on {}", a.running),
        ),
        AgentState::Waiting => (
            "?",
            Slot::AttentionAsk,
            format!("waiting on a human ({})", a.waiting),
        ),
        AgentState::Idle => ("·", Slot::Muted, "idle".to_string()),
    };
    let text = row_style(theme.style(Slot::Text), selected, theme);
    let muted = row_style(theme.style(Slot::Muted), selected, theme);
    let model = a.model.as_deref().unwrap_or("default model");
    let unread = match a.unread {
        0 => String::new(),
        n => format!(" · ✉ {n} unread"),
    };
    // What matters at 3 a.m. first: who, doing what, at what cost; then what it is.
    let head = format!(
        "{} · {state} · today {} tok ${:.2}{unread} · {}/{model} · {}",
        a.name, a.tokens_today, a.usd_today, a.runtime, a.policy
    );
    let (second, second_style) = match (&a.now, &a.last_error) {
        (Some(now), _) => (format!("now: {}", clean_line(now)), muted),
        (None, Some(err)) => (
            format!("last error: {}", clean_line(err)),
            row_style(theme.style(Slot::JobFailed), selected, theme),
        ),
        (None, None) => (String::new(), muted),
    };
    let mark = if selected { "▌" } else { " " };
    [
        Line::from(vec![
            Span::styled(mark, row_style(theme.style(Slot::Accent), selected, theme)),
            Span::styled(
                glyph.to_string(),
                row_style(theme.style(slot), selected, theme),
            ),
            Span::styled(" ", text),
            Span::styled(fit(&clean_line(&head), w.saturating_sub(3)), text),
        ]),
        Line::from(vec![
            Span::styled("    ", muted),
            Span::styled(fit(&second, w.saturating_sub(4)), second_style),
        ]),
    ]
}
