//! Watching a fleet in the control room: a stalled job's Attention item with the evidence,
//! its marker in the tree and `l` leaving it running; the Agents pane and Enter on an agent.

use crate::common;

use common::*;
use gitmoot_ui::view::{AttentionItem, AttentionKind, StallSignal};
use gitmoot_ui::{Action, Write, update};

fn with_stall() -> (gitmoot_ui::State, gitmoot_ui::Snapshot) {
    let (mut s, mut snap) = setup();
    snap.attention.push(AttentionItem {
        job_id: "job-k3v7q2ma/db".into(),
        root_id: "job-k3v7q2ma".into(),
        agent: "kimi".into(),
        why: None,
        opened_ms: snap.attention[0].opened_ms,
        thread: None,
        kind: AttentionKind::Stall {
            signal: StallSignal::Looping,
            evidence: "command: $ cargo test repeated 5 times in a row".into(),
        },
    });
    s.sel.attention = Some("job-k3v7q2ma/db#stall".into());
    (s, snap)
}

#[test]
fn a_stall_shows_its_evidence_and_marks_its_row_and_l_leaves_it() {
    let (mut s, snap) = with_stall();
    let screen = text(&s, &snap);
    assert!(screen.contains("⧗ stalled"), "{screen}");
    assert!(screen.contains("repeated 5 times in a row"), "{screen}");
    assert!(
        screen.contains("⧗ looping"),
        "the tree marks the row: {screen}"
    );
    assert_eq!(
        update(&mut s, &snap, ch('l')),
        vec![Action::Write(Write::LeaveStall {
            job_id: "job-k3v7q2ma/db".into()
        })]
    );
}

#[test]
fn six_opens_the_agents_pane_and_enter_shows_the_agent_s_jobs() {
    let (mut s, snap) = setup();
    assert_eq!(
        update(&mut s, &snap, ch('6')),
        vec![Action::Load(gitmoot_ui::Load::Agents)]
    );
    let screen = text(&s, &snap);
    assert!(screen.contains("working on 1"), "{screen}");
    assert!(screen.contains("now: $ cargo test -p payments"), "{screen}");
    assert!(screen.contains("waiting on a human (1)"), "{screen}");
    assert!(
        screen.contains("last error: codex exited with code 1"),
        "{screen}"
    );
    update(&mut s, &snap, ch('j'));
    update(&mut s, &snap, key(crossterm::event::KeyCode::Enter));
    assert_eq!(s.focus, gitmoot_ui::Pane::Tree);
    assert_eq!(s.filter, "kimi");
}
