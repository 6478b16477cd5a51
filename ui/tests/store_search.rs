//! The Search view (`Ctrl-f`): the query asked of the loader, the hits drawn with what
//! they are and where they live, and Enter on a hit opening its job's drawer (the Activity
//! tab for an activity step) or its thread.

use crate::common;

use common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::live::DetailTab;
use gitmoot_ui::view::{SearchHit, SearchSource};
use gitmoot_ui::{Action, Load, Pane, update};

fn with_hits() -> (gitmoot_ui::State, gitmoot_ui::Snapshot) {
    let (s, mut snap) = setup();
    snap.search = vec![
        SearchHit {
            source: SearchSource::Prompts,
            job: Some("job-k3v7q2ma".into()),
            seq: None,
            thread: None,
            snippet: "migrate the «ledger» tables".into(),
        },
        SearchHit {
            source: SearchSource::Activity,
            job: Some("job-k3v7q2ma/db".into()),
            seq: Some(7),
            thread: None,
            snippet: "$ psql «ledger»\nSELECT 1".into(),
        },
    ];
    (s, snap)
}

/// The view open on the hits for "ledger".
fn searched() -> (gitmoot_ui::State, gitmoot_ui::Snapshot) {
    let (mut s, snap) = with_hits();
    update(&mut s, &snap, ctrl('f'));
    type_keys(&mut s, &snap, "ledger");
    update(&mut s, &snap, key(KeyCode::Enter));
    (s, snap)
}

#[test]
fn ctrl_f_asks_the_loader_for_the_typed_query() {
    let (mut s, snap) = setup();
    assert!(update(&mut s, &snap, ctrl('f')).is_empty());
    type_keys(&mut s, &snap, "ledger rows");
    assert_eq!(
        update(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Load(Load::Search("ledger rows".into()))]
    );
    assert!(text(&s, &snap).contains("search: ledger rows"));
}

#[test]
fn the_hits_show_their_kind_their_place_and_the_match_highlighted() {
    let (s, snap) = searched();
    let screen = text(&s, &snap);
    assert!(screen.contains("prompts  job-k3v7q2ma"), "{screen}");
    assert!(screen.contains("activity job-k3v7q2ma/db #7"), "{screen}");
    assert!(screen.contains("$ psql ledger SELECT 1"), "{screen}");
    assert!(
        !screen.contains('«'),
        "the marks become a highlight: {screen}"
    );
    let theme = gitmoot_ui::Theme::default_dark();
    let b = buffer(&s, &snap, &theme);
    let hit = theme.style(gitmoot_ui::theme::Slot::FilterMatch);
    let lit: String = b
        .content()
        .iter()
        .filter(|c| hit.fg.is_some() && c.fg == hit.fg.unwrap())
        .map(|c| c.symbol())
        .collect();
    assert!(lit.contains("ledger"), "highlighted: {lit:?}");
}

#[test]
fn enter_on_an_activity_hit_opens_its_job_s_activity_tab() {
    let (mut s, snap) = searched();
    update(&mut s, &snap, ch('j'));
    let out = update(&mut s, &snap, key(KeyCode::Enter));
    assert!(
        out.contains(&Action::Load(Load::Detail("job-k3v7q2ma/db".into()))),
        "{out:?}"
    );
    assert!(s.overlay.is_none());
    assert_eq!(s.focus, Pane::Detail);
    assert_eq!(s.detail_tab, DetailTab::Activity);
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/db"));
}
