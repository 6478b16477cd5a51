//! Small terminals (issue 29, item 5): what needs a human survives every size. At 60×16
//! Attention stays on top of the tree; at 80×24 a failure's whole reason and the answer
//! form's keys are read, not cut.

use crate::common;

use common::*;
use gitmoot_ui::view::AttentionKind;
use gitmoot_ui::{Event, Snapshot, State, Theme, render, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn frame(s: &State, snap: &Snapshot, (w, h): (u16, u16)) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render(f, s, snap, &Theme::default_dark()))
        .unwrap();
    buffer_text(t.backend().buffer())
}

/// The screen's words in reading order, borders dropped, so a wrapped sentence reads whole.
fn words(screen: &str) -> String {
    screen
        .split(|c: char| c.is_whitespace() || "│┃".contains(c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn at_60x16_attention_comes_first_then_the_tree() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, Event::Resize(60, 16));
    let screen = frame(&s, &snap, (60, 16));
    assert!(screen.contains("1 Attention"), "{screen}");
    assert!(screen.contains("failure job-k3v7q2ma"), "{screen}");
    assert!(screen.contains("2 Jobs"), "{screen}");
    // Focusing another pane keeps Attention above it.
    update(&mut s, &snap, ch('4'));
    let screen = frame(&s, &snap, (60, 16));
    assert!(screen.contains("1 Attention"), "{screen}");
    assert!(screen.contains("4 Threads"), "{screen}");
}

#[test]
fn at_80x24_a_failures_reason_and_the_answer_forms_keys_are_whole() {
    let (mut s, mut snap) = setup();
    let reason = "delegation \"integration\" failed (failure_policy escalate_human): \
                  integration suite flaked: redis container never became ready";
    for item in &mut snap.attention {
        if let AttentionKind::Failure { reason: r, .. } = &mut item.kind {
            *r = reason.to_string();
        }
    }
    update(&mut s, &snap, Event::Resize(80, 24));
    update(&mut s, &snap, Event::SnapshotArrived);
    let screen = frame(&s, &snap, (80, 24));
    let left: String = screen
        .lines()
        .map(|l| l.chars().take(40).collect::<String>() + "\n")
        .collect();
    assert!(
        words(&left).contains("redis container never became ready"),
        "{screen}"
    );
    // The ask's answer form: its keys are broken over lines, none cut.
    update(&mut s, &snap, ch('j'));
    update(&mut s, &snap, ch('a'));
    let screen = frame(&s, &snap, (80, 24));
    for keys in ["Tab next field", "Esc cancel"] {
        assert!(screen.contains(keys), "{keys:?}: {screen}");
    }
}
