//! The Usage view (`$`): its figures asked of the loader, the day's spend drawn as hourly
//! bars with the roots and agents that spent most (each root with its headroom), and
//! Enter opening a root or an agent's jobs in the tree. Also a root row's token budget.

use crate::common;

use common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::view::{CapLine, UsageRow, UsageView};
use gitmoot_ui::widgets::usage::bar_rows;
use gitmoot_ui::{Action, Load, Pane, update};

const HOUR_MS: i64 = 3_600_000;

fn figures() -> UsageView {
    let mut hours = vec![0.0; 24];
    hours[20] = 0.84;
    hours[23] = 0.21;
    UsageView {
        since_ms: 1_700_000_000_000 - 1_700_000_000_000 % HOUR_MS,
        hours,
        total: UsageRow {
            jobs: 9,
            tokens: 48_200,
            usd: 1.05,
            ..UsageRow::default()
        },
        roots: vec![
            UsageRow {
                key: "job-k3v7q2ma".into(),
                title: "Refactor payments API".into(),
                jobs: 6,
                tokens: 40_000,
                usd: 0.84,
                budget: "$0.84 of $5.00".into(),
            },
            UsageRow {
                key: "job-m2x9b4rt".into(),
                title: "Review the 2.4 release notes".into(),
                jobs: 3,
                tokens: 8_200,
                usd: 0.21,
                budget: "$0.21 of $5.00".into(),
            },
        ],
        agents: vec![UsageRow {
            key: "codex".into(),
            jobs: 5,
            tokens: 30_000,
            usd: 0.70,
            ..UsageRow::default()
        }],
        caps: vec![CapLine {
            text: "daily cap of the fleet: $1.05 of $1.00 spent today (UTC), reached: its queued jobs wait".into(),
            reached: true,
        }],
    }
}

/// The view open on `figures()`.
fn opened() -> (gitmoot_ui::State, gitmoot_ui::Snapshot) {
    let (mut s, mut snap) = setup();
    assert_eq!(
        update(&mut s, &snap, ch('$')),
        vec![Action::Load(Load::Usage)]
    );
    snap.usage = Some(figures());
    (s, snap)
}

#[test]
fn dollar_opens_the_view_and_asks_the_loader_for_its_figures() {
    let (mut s, snap) = setup();
    assert_eq!(
        update(&mut s, &snap, ch('$')),
        vec![Action::Load(Load::Usage)]
    );
    assert!(text(&s, &snap).contains("reading the store"));
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
}

#[test]
fn the_view_shows_the_day_the_top_spenders_their_headroom_and_the_caps() {
    let (s, snap) = opened();
    let screen = text(&s, &snap);
    for want in [
        "$1.05 · 9 jobs · 48.2k tokens",
        "peak $0.84 at",
        "top roots by spend",
        "job-k3v7q2ma Refactor payments API",
        "$0.84 of $5.00",
        "top agents by spend",
        "codex",
        "reached: its queued jobs wait",
    ] {
        assert!(screen.contains(want), "{want:?} in:\n{screen}");
    }
    // The peak hour is a full bar, the quieter hour a shorter one, the idle hours blank.
    assert!(screen.contains('█'), "{screen}");
    insta::assert_snapshot!("usage", screen);
}

#[test]
fn bars_scale_to_the_peak_and_any_spend_shows() {
    let rows = bar_rows(&[0.0, 1.0, 0.5, 0.001], 2, 2);
    assert_eq!(rows, vec!["  ██    ".to_string(), "  ████▁▁".to_string()]);
    assert_eq!(bar_rows(&[0.0, 0.0], 1, 2), vec!["    ".to_string()]);
}

#[test]
fn enter_on_a_root_selects_it_in_the_tree() {
    let (mut s, snap) = opened();
    update(&mut s, &snap, ch('j'));
    update(&mut s, &snap, key(KeyCode::Enter));
    assert!(s.overlay.is_none());
    assert_eq!(s.focus, Pane::Tree);
    assert_eq!(s.sel.tree.as_deref(), Some("job-m2x9b4rt"));
}

#[test]
fn enter_on_an_agent_filters_the_tree_to_its_jobs() {
    let (mut s, snap) = opened();
    for _ in 0..5 {
        update(&mut s, &snap, ch('j'));
    }
    update(&mut s, &snap, key(KeyCode::Enter));
    assert_eq!(s.focus, Pane::Tree);
    assert_eq!(s.filter, "codex");
}

#[test]
fn a_root_row_shows_its_share_of_a_token_budget_and_no_spend_without_a_budget() {
    let (mut s, mut snap) = setup();
    update(&mut s, &snap, gitmoot_ui::Event::SnapshotArrived);
    let root_row = |s: &gitmoot_ui::State, snap: &gitmoot_ui::Snapshot| {
        text(s, snap)
            .lines()
            .find(|l| l.contains("▾? job-k3v7q2ma"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert!(
        !root_row(&s, &snap).contains("$0.84"),
        "{}",
        root_row(&s, &snap)
    );
    snap.live.budget_tokens = Some(100_000);
    update(&mut s, &snap, gitmoot_ui::Event::SnapshotArrived);
    assert!(
        root_row(&s, &snap).contains("53% tok"),
        "{}",
        root_row(&s, &snap)
    );
}
