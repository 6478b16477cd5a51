//! A stalled job in the control room: its Attention item with the evidence, its marker in
//! the tree, and `l` leaving it running.

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
