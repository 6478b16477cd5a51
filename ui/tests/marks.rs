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

#[test]
fn a_with_marks_gives_every_marked_job_one_choice_and_names_the_refused() {
    let (mut s, mut snap) = setup();
    let mut other = snap.attention[0].clone();
    other.job_id = "job-p8c3d1wz".into();
    if let gitmoot_ui::view::AttentionKind::Ask { questions } = &mut other.kind {
        questions.truncate(1);
    }
    snap.attention.push(other);
    type_keys(&mut s, &snap, "2");
    s.marks.insert("job-k3v7q2ma/schema".into());
    s.marks.insert("job-p8c3d1wz".into());
    update(&mut s, &snap, ch('a'));
    let Some(Overlay::Confirm(Confirm::BulkAnswer {
        job_ids,
        choices,
        at,
        lines,
    })) = s.overlay.clone()
    else {
        panic!("no bulk answer confirmation: {:?}", s.overlay);
    };
    assert_eq!(choices, vec!["in place", "shadow table"]);
    assert_eq!(at, 0);
    let said = lines[0].join("\n");
    assert!(
        said.contains("answer job-p8c3d1wz \"in place\" (it resumes)"),
        "{said}"
    );
    assert!(
        said.contains("refused job-k3v7q2ma/schema: window takes free text"),
        "{said}"
    );
    update(&mut s, &snap, key(KeyCode::Down));
    assert_eq!(
        update(&mut s, &snap, ch('y')),
        vec![Action::Write(Write::BulkAnswer {
            job_ids,
            choice: "shadow table".into(),
        })]
    );
    assert!(s.marks.is_empty(), "marks acted on are spent");
}

#[test]
fn land_and_discard_with_marks_state_each_write_jobs_consequence() {
    let (mut s, mut snap) = setup();
    common::work::add(&mut snap, Vec::new());
    if let Some(r) = snap.work.rows.get_mut(common::work::JOB) {
        r.branch = format!("gitmoot/{}", common::work::JOB);
        r.base = "main".into();
        r.repo = "ledger".into();
        r.loss = Some("2 file(s) changed (+3 -1), 1 commit(s)".into());
    }
    type_keys(&mut s, &snap, "2");
    s.marks.insert(common::work::JOB.into());
    s.marks.insert("job-p8c3d1wz".into());
    for (key, verb) in [('I', BulkVerb::Land), ('D', BulkVerb::Discard)] {
        update(&mut s, &snap, ch(key));
        let Some(Overlay::Confirm(Confirm::Bulk { verb: v, lines, .. })) = s.overlay.take() else {
            panic!("no bulk confirmation for {verb}: {:?}", s.overlay);
        };
        assert_eq!(v, verb);
        let said = lines.join("\n");
        assert!(
            said.contains("refused job-p8c3d1wz: not a write job"),
            "{said}"
        );
        let job = common::work::JOB;
        let expect = match verb {
            BulkVerb::Land => format!("merges branch gitmoot/{job} into main of repo ledger"),
            _ => "loses 2 file(s) changed (+3 -1), 1 commit(s)".to_string(),
        };
        assert!(said.contains(&expect), "{said}");
    }
}
