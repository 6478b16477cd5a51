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

#[test]
fn v_groups_the_tree_by_what_needs_you_with_each_group_s_count_and_back() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2v");
    assert!(s.grouped);
    let screen = text(&s, &snap);
    assert!(
        screen.contains("needs you 1 · working 1 · done today 2"),
        "{screen}"
    );
    let order: Vec<&str> = gitmoot_ui::rows::tree_rows(&snap, &s)
        .iter()
        .filter(|r| r.level == 0)
        .map(|r| r.root.id.as_str())
        .collect();
    assert_eq!(
        order[0], "job-k3v7q2ma",
        "the gated root comes first: {order:?}"
    );
    assert_eq!(order[1], "job-p8c3d1wz", "then the working one: {order:?}");
    for heading in ["Needs you (1)", "Working (1)", "Done today (2)"] {
        assert!(screen.contains(heading), "{heading}: {screen}");
    }
    update(&mut s, &snap, ch('v'));
    assert!(!s.grouped);
    assert!(text(&s, &snap).contains("4 roots"));
}
