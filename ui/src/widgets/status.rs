//! The status bar: the home or database watched, daemon mode, fleet counts, unread chat, data age, read-only and filter
//! badges.
//!
//! Owns the top line only.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::state::State;
use crate::theme::{Slot, Theme};
use crate::view::{DaemonStatus, Snapshot, age};

/// Data older than this is flagged: the watcher should have refreshed it by then.
pub const STALE_MS: i64 = 30_000;

pub fn render(frame: &mut Frame, area: Rect, state: &State, snap: &Snapshot, theme: &Theme) {
    let bar = theme.style(Slot::StatusBar);
    let warn = theme.style(Slot::StatusWarn);
    let sep = Span::styled(" │ ", bar);
    let daemon = match snap.daemon {
        DaemonStatus::Embedded => Span::styled("daemon embedded", bar),
        DaemonStatus::TookOver => Span::styled("daemon embedded (took over)", bar),
        DaemonStatus::Attached => Span::styled("daemon attached (viewer)", bar),
        DaemonStatus::Unresponsive => Span::styled("daemon not responding: jobs may not run", warn),
        DaemonStatus::Lost => Span::styled("daemon gone: jobs will not run", warn),
        DaemonStatus::None => Span::styled("no daemon: jobs will not run", warn),
    };
    let c = snap.counts;
    let mut spans = vec![Span::styled(
        " gitmoot",
        bar.patch(theme.style(Slot::PaneTitle)).patch(bar),
    )];
    // Which home (or database) this is, like k9s's context: two control rooms side by side
    // must not be mistaken for each other.
    if !snap.watching.is_empty() {
        spans.push(Span::styled(format!(" {}", snap.watching), bar));
    }
    spans.push(sep.clone());
    spans.push(daemon);
    // A shared store's fleet: how many daemons on how many hosts serve it.
    if c.daemons > 1 {
        spans.push(Span::styled(format!(" · {} daemons", c.daemons), bar));
    }
    spans.push(sep.clone());
    spans.push(Span::styled(
        format!("{} running · {} queued · ", c.running, c.queued),
        bar,
    ));
    spans.push(Span::styled(
        format!("{} awaiting", c.awaiting),
        if c.awaiting > 0 { warn } else { bar },
    ));
    // Chat the human has not read, wherever the Threads pane is: new replies must not
    // wait for the operator to go looking.
    let unread: u32 = snap.threads.iter().map(|t| t.unread).sum();
    if unread > 0 {
        spans.push(sep.clone());
        spans.push(Span::styled(format!("✉ {unread} unread"), warn));
    }
    if snap.live.today_usd > 0.0 {
        spans.push(sep.clone());
        spans.push(Span::styled(
            format!("today ${:.2}", snap.live.today_usd),
            bar,
        ));
    }
    let stale = state.now_ms - snap.as_of_ms;
    let updated = Span::styled(
        format!("updated {} ago", age(stale)),
        if stale > STALE_MS { warn } else { bar },
    );
    // Stale data is worth the room however narrow; a fresh age shows only when it fits
    // whole (`│ up` told nothing).
    let used: usize = spans.iter().map(|s| s.width()).sum();
    if stale > STALE_MS || used + sep.width() + updated.width() <= area.width as usize {
        spans.push(sep.clone());
        spans.push(updated);
    }
    if state.readonly {
        spans.push(sep.clone());
        spans.push(Span::styled("READ-ONLY", warn));
    }
    if !state.filter.is_empty() && !state.filter_editing {
        spans.push(sep.clone());
        spans.push(Span::styled(
            format!("filter: {}  (Esc clears)", state.filter),
            bar,
        ));
    }
    // The help hint sits at the right edge when the line leaves room for it, and is left
    // out whole otherwise (the footer always carries `? help` too), never cut to `?`.
    let used: usize = spans.iter().map(|s| s.width()).sum();
    let right = " ? help ";
    if used + right.len() <= area.width as usize {
        let pad = area.width as usize - used - right.len();
        spans.push(Span::styled(" ".repeat(pad), bar));
        spans.push(Span::styled(right, bar));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}
