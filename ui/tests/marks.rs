//! Marking tree rows and acting on all of them: `m`, `M` (the filtered rows only), Esc,
//! and one confirmation whose yes sends one bulk write.

use crate::common;

use common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::state::{Confirm, Overlay};
use gitmoot_ui::{Action, BulkVerb, Write, update};

#[test]
fn mark_all_takes_only_the_filtered_rows_and_cancel_asks_once_for_them() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2/kimi");
    update(&mut s, &snap, key(KeyCode::Enter));
    let visible: Vec<String> = gitmoot_ui::rows::tree_rows(&snap, &s)
        .iter()
        .map(|r| r.node.id.clone())
        .collect();
    update(&mut s, &snap, ch('M'));
    assert_eq!(
        s.marks.iter().cloned().collect::<Vec<_>>().len(),
        visible.len()
    );
    assert!(visible.iter().all(|id| s.marks.contains(id)), "{visible:?}");
    assert!(
        !s.marks.contains("job-p8c3d1wz"),
        "a filtered-out root stays unmarked"
    );

    update(&mut s, &snap, ch('C'));
    let Some(Overlay::Confirm(Confirm::Bulk {
        verb,
        job_ids,
        lines,
    })) = s.overlay.clone()
    else {
        panic!("no bulk confirmation: {:?}", s.overlay);
    };
    assert_eq!(verb, BulkVerb::Cancel);
    assert_eq!(job_ids.len(), visible.len());
    assert_eq!(lines.len(), visible.len(), "one line per job: {lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("cancel ") || l.starts_with("refused ")),
        "each line says what happens to its job: {lines:?}"
    );
    assert_eq!(
        update(&mut s, &snap, ch('y')),
        vec![Action::Write(Write::Bulk {
            verb: BulkVerb::Cancel,
            job_ids,
        })]
    );
    assert!(s.marks.is_empty(), "marks acted on are spent");
}

#[test]
fn m_toggles_and_steps_on_and_esc_clears_the_marks() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2g");
    let first = s.sel.tree.clone().unwrap();
    type_keys(&mut s, &snap, "mm");
    assert_eq!(s.marks.len(), 2);
    assert!(s.marks.contains(&first));
    type_keys(&mut s, &snap, "gm");
    assert_eq!(s.marks.len(), 1, "m again unmarks");
    assert!(!s.marks.contains(&first));
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.marks.is_empty());
}
