//! Write jobs in the control room: the Diff tab (the file list with its counts, the hunks
//! in their colours and without colour, binary files and renames, moving by file, hunk and
//! search match, a 20,000-line diff drawn by its window, review comments on lines), the
//! land, discard and review questions with the actions their `y` sends, and the tree rows
//! and Attention items of landed, reviewed and overlapping work.

use crate::common;

use common::work::{self, JOB};
use common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::live::DetailTab;
use gitmoot_ui::state::{Confirm, Overlay};
use gitmoot_ui::theme::Slot;
use gitmoot_ui::work::{DiffRow, LandStrategy};
use gitmoot_ui::{Action, Event, Load, Pane, Snapshot, State, Theme, Write, update};

/// The fixture with `JOB` a write job whose drawer is open on `tab`.
fn drawer(files: Vec<gitmoot_ui::work::DiffFile>, tab: DetailTab) -> (State, Snapshot) {
    let (mut s, mut snap) = setup();
    work::add(&mut snap, files);
    update(&mut s, &snap, Event::SnapshotArrived);
    s.detail_job = Some(JOB.into());
    s.focus = Pane::Detail;
    s.right = Pane::Detail;
    s.detail_tab = tab;
    (s, snap)
}

fn row_kind(s: &State, snap: &Snapshot) -> DiffRow {
    snap.work.diff.as_ref().unwrap().rows()[s.diff.row]
}

fn toast(s: &State) -> &str {
    &s.messages.last().unwrap().text
}

#[test]
fn l_reaches_the_diff_tab_of_a_write_job_and_asks_for_its_diff_once() {
    let (mut s, snap) = drawer(work::files(), DetailTab::Overview);
    assert!(update(&mut s, &snap, ch('l')).is_empty());
    assert_eq!(s.detail_tab, DetailTab::Activity);
    assert_eq!(
        update(&mut s, &snap, ch('l')),
        vec![Action::Load(Load::Diff(JOB.into()))]
    );
    assert_eq!(s.detail_tab, DetailTab::Diff);
    // Moving in it reads nothing again.
    assert!(type_keys(&mut s, &snap, "jj]}").is_empty());
    update(&mut s, &snap, ch('l'));
    assert_eq!(s.detail_tab, DetailTab::Overview, "around to the overview");
    // A job without a worktree has no Diff tab.
    s.detail_job = Some("job-k3v7q2ma".into());
    type_keys(&mut s, &snap, "ll");
    assert_eq!(s.detail_tab, DetailTab::Overview);
}

#[test]
fn the_diff_tab_lists_files_with_counts_then_hunks_binary_and_renames() {
    let (s, snap) = drawer(work::files(), DetailTab::Diff);
    let t = text(&s, &snap);
    assert!(t.contains("overview │ activity │ diff"), "{t}");
    assert!(t.contains("modified     src/auth.rs"), "{t}");
    assert!(t.contains("+3 −1"), "{t}");
    assert!(
        t.contains("renamed      docs/login.md → docs/auth.md"),
        "{t}"
    );
    assert!(t.contains("binary file: contents not shown"), "{t}");
    assert!(
        t.contains("renamed from docs/login.md without changes"),
        "{t}"
    );
    assert!(t.contains("@@ -10,3 +10,4 @@ fn check()"), "{t}");
    assert!(t.contains("   11       -if token.valid() {"), "{t}");
    assert!(
        t.contains("         11 +if token.valid() && !token.expired(now) {"),
        "{t}"
    );
    assert!(t.contains("file 1/3 · +3 −1 · row 1/"), "{t}");
}

/// The style of the first cell of the row holding `needle`.
fn style_of(s: &State, snap: &Snapshot, theme: &Theme, needle: &str) -> ratatui::style::Style {
    let b = buffer(s, snap, theme);
    let t = buffer_text(&b);
    let (y, line) = t
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .unwrap();
    let x = line[..line.find(needle).unwrap()].chars().count() as u16;
    b[(x, y as u16)].style()
}

#[test]
fn added_and_removed_lines_are_coloured_and_stay_apart_without_colour() {
    let (s, snap) = drawer(work::files(), DetailTab::Diff);
    let dark = Theme::default_dark();
    let add = style_of(&s, &snap, &dark, "+if token.valid() &&");
    let remove = style_of(&s, &snap, &dark, "-if token.valid() {");
    assert_eq!(add.fg, dark.style(Slot::DiffAdd).fg);
    assert_eq!(remove.fg, dark.style(Slot::DiffRemove).fg);
    assert_ne!(add.fg, remove.fg);
    let mono = Theme::monochrome();
    let add = style_of(&s, &snap, &mono, "+if token.valid() &&");
    let remove = style_of(&s, &snap, &mono, "-if token.valid() {");
    use ratatui::style::{Color, Modifier};
    assert!(matches!(add.fg, None | Some(Color::Reset)), "{add:?}");
    assert!(add.add_modifier.contains(Modifier::BOLD), "{add:?}");
    assert!(remove.add_modifier.contains(Modifier::DIM), "{remove:?}");
}

#[test]
fn files_and_hunks_have_next_and_previous_keys_and_enter_goes_to_a_listed_file() {
    let (mut s, snap) = drawer(work::files(), DetailTab::Diff);
    update(&mut s, &snap, ch(']'));
    assert_eq!(row_kind(&s, &snap), DiffRow::File(0));
    update(&mut s, &snap, ch('}'));
    assert_eq!(row_kind(&s, &snap), DiffRow::Hunk(0, 0));
    update(&mut s, &snap, ch('}'));
    assert_eq!(row_kind(&s, &snap), DiffRow::Hunk(0, 1));
    update(&mut s, &snap, ch('{'));
    assert_eq!(row_kind(&s, &snap), DiffRow::Hunk(0, 0));
    type_keys(&mut s, &snap, "]]");
    assert_eq!(row_kind(&s, &snap), DiffRow::File(2));
    update(&mut s, &snap, ch(']'));
    assert_eq!(toast(&s), "no more in that direction");
    update(&mut s, &snap, ch('['));
    assert_eq!(row_kind(&s, &snap), DiffRow::File(1));
    // From the summary at the top, Enter jumps to that file.
    type_keys(&mut s, &snap, "gj");
    assert_eq!(row_kind(&s, &snap), DiffRow::Summary(1));
    update(&mut s, &snap, key(KeyCode::Enter));
    assert_eq!(row_kind(&s, &snap), DiffRow::File(1));
}

#[test]
fn slash_searches_the_whole_diff_and_n_wraps_around() {
    let (mut s, snap) = drawer(work::files(), DetailTab::Diff);
    type_keys(&mut s, &snap, "/EXPIR");
    assert_eq!(s.diff.editing.as_deref(), Some("EXPIR"));
    assert!(text(&s, &snap).contains("/EXPIR▏"));
    assert!(
        s.filter.is_empty(),
        "the drawer's / searches the diff, not the tree"
    );
    update(&mut s, &snap, key(KeyCode::Enter));
    assert_eq!(row_kind(&s, &snap), DiffRow::Line(0, 0, 2));
    update(&mut s, &snap, ch('n'));
    assert_eq!(row_kind(&s, &snap), DiffRow::Line(0, 1, 1));
    update(&mut s, &snap, ch('n'));
    assert_eq!(row_kind(&s, &snap), DiffRow::Line(0, 0, 2), "wrapped");
    update(&mut s, &snap, ch('N'));
    assert_eq!(row_kind(&s, &snap), DiffRow::Line(0, 1, 1));
    type_keys(&mut s, &snap, "/nowhere");
    update(&mut s, &snap, key(KeyCode::Enter));
    assert_eq!(toast(&s), "\"nowhere\" is not in the diff");
}

#[test]
fn a_twenty_thousand_line_diff_draws_its_window_and_scrolls_to_the_end() {
    let (mut s, snap) = drawer(work::large(20_000), DetailTab::Diff);
    let t = text(&s, &snap);
    assert!(t.contains("pub const C1: u64 = 1;"), "{t}");
    assert!(!t.contains("C200:"), "only the window is drawn");
    update(&mut s, &snap, ch('G'));
    let t = text(&s, &snap);
    assert!(t.contains("+pub const C20000: u64 = 20000;"), "{t}");
    assert!(t.contains("row 20004/20004"), "{t}");
    update(&mut s, &snap, key(KeyCode::PageUp));
    assert!(s.diff.row < 20_003 && s.diff.top <= s.diff.row);
}

#[test]
fn c_comments_on_the_selected_line_and_r_sends_the_comments_as_a_review() {
    let (mut s, snap) = drawer(work::files(), DetailTab::Diff);
    type_keys(&mut s, &snap, "/audit");
    update(&mut s, &snap, key(KeyCode::Enter));
    update(&mut s, &snap, ch('c'));
    assert!(
        matches!(&s.overlay, Some(Overlay::Comment { anchor, .. }) if anchor == "src/auth.rs:12")
    );
    assert!(text(&s, &snap).contains("Comment on src/auth.rs:12"));
    type_keys(&mut s, &snap, "log the user id too");
    assert!(
        update(&mut s, &snap, key(KeyCode::Enter)).is_empty(),
        "kept, not sent"
    );
    assert!(text(&s, &snap).contains("✎ log the user id too"));
    update(&mut s, &snap, ch('R'));
    let Some(Overlay::Confirm(Confirm::Review {
        round, comments, ..
    })) = &s.overlay
    else {
        panic!("{:?}", s.overlay);
    };
    assert_eq!(*round, 2);
    assert_eq!(comments, &["src/auth.rs:12: log the user id too"]);
    let t = text(&s, &snap);
    assert!(t.contains("Send job-m2x9b4rt back for review?"), "{t}");
    assert!(t.contains("review round 2"), "{t}");
    assert_eq!(
        update(&mut s, &snap, ch('y')),
        vec![Action::Write(Write::Review {
            job_id: JOB.into(),
            comments: "src/auth.rs:12: log the user id too".into(),
        })]
    );
    assert!(s.diff.comments.is_empty(), "sent comments leave the list");
    update(&mut s, &snap, ch('R'));
    assert!(toast(&s).starts_with("no comments yet"));
}

#[test]
fn m_asks_naming_the_strategy_and_the_base_and_lands_with_the_one_picked() {
    let (mut s, snap) = drawer(work::files(), DetailTab::Overview);
    update(&mut s, &snap, ch('M'));
    let t = text(&s, &snap);
    assert!(t.contains("Land job-m2x9b4rt on main (auto)?"), "{t}");
    assert!(
        t.contains("gitmoot/job-m2x9b4rt → main: 3 file(s), +3 −1"),
        "{t}"
    );
    assert!(t.contains("fast-forward main when it has not moved"), "{t}");
    update(&mut s, &snap, ch('j'));
    assert!(text(&s, &snap).contains("on main (squash)?"));
    assert_eq!(
        update(&mut s, &snap, ch('y')),
        vec![Action::Write(Write::Land {
            job_id: JOB.into(),
            strategy: LandStrategy::Squash,
        })]
    );
    update(&mut s, &snap, ch('M'));
    assert!(update(&mut s, &snap, ch('n')).is_empty());
    assert!(s.overlay.is_none());
}

#[test]
fn d_says_what_discarding_loses_before_discarding() {
    let (mut s, snap) = drawer(work::files(), DetailTab::Diff);
    update(&mut s, &snap, ch('D'));
    let t = text(&s, &snap);
    assert!(t.contains("Discard job-m2x9b4rt's work?"), "{t}");
    assert!(
        t.contains("Loses 3 file(s) changed (+4 -1), 2 commit(s)"),
        "{t}"
    );
    assert_eq!(
        update(&mut s, &snap, ch('y')),
        vec![Action::Write(Write::Discard { job_id: JOB.into() })]
    );
}

#[test]
fn land_and_discard_are_refused_without_open_work_and_in_read_only() {
    let (mut s, mut snap) = drawer(work::files(), DetailTab::Diff);
    snap.work.job.as_mut().unwrap().state = gitmoot_ui::work::WorktreeState::Landed;
    update(&mut s, &snap, ch('D'));
    assert!(s.overlay.is_none());
    assert_eq!(toast(&s), "job-m2x9b4rt's work was already landed");
    // The drawer moved to the job before its work was read: say so, do not refuse it.
    let (mut s, mut snap) = drawer(work::files(), DetailTab::Diff);
    snap.work.job = None;
    update(&mut s, &snap, ch('M'));
    assert!(s.overlay.is_none());
    assert_eq!(
        toast(&s),
        "still reading job-m2x9b4rt's work; land again in a moment"
    );
    let (mut s, snap) = drawer(work::files(), DetailTab::Diff);
    s.readonly = true;
    update(&mut s, &snap, ch('M'));
    assert!(s.overlay.is_none());
    update(&mut s, &snap, ch('c'));
    assert!(s.overlay.is_none());
}

#[test]
fn tree_rows_mark_landed_work_review_rounds_and_overlaps_on_both_jobs() {
    use gitmoot_ui::view::{AttentionItem, AttentionKind};
    use gitmoot_ui::work::{WorkRow, WorktreeState};
    let (mut s, mut snap) = setup();
    let other = "job-a5f6g7h8";
    snap.work.rows.insert(
        JOB.into(),
        WorkRow {
            state: Some(WorktreeState::Open),
            review_rounds: 2,
            overlaps: vec![other.into()],
            ..Default::default()
        },
    );
    snap.work.rows.insert(
        other.into(),
        WorkRow {
            state: Some(WorktreeState::Open),
            review_rounds: 0,
            overlaps: vec![JOB.into()],
            ..Default::default()
        },
    );
    snap.work.rows.insert(
        "job-p8c3d1wz".into(),
        WorkRow {
            state: Some(WorktreeState::Landed),
            review_rounds: 0,
            overlaps: Vec::new(),
            ..Default::default()
        },
    );
    snap.attention.push(AttentionItem {
        job_id: other.into(),
        root_id: other.into(),
        agent: "lead".into(),
        why: None,
        opened_ms: common::fixture::NOW - 60_000,
        thread: None,
        kind: AttentionKind::Overlap {
            jobs: [JOB.into(), other.into()],
            files: vec!["src/auth.rs".into()],
        },
    });
    update(&mut s, &snap, Event::SnapshotArrived);
    let t = text(&s, &snap);
    let line = |id: &str| {
        t.lines()
            .find(|l| l.starts_with('│') && l.contains(id))
            .unwrap_or("")
            .to_string()
    };
    assert!(line(JOB).contains("↻2 ⚠ overlap"), "{t}");
    assert!(line(other).contains("⚠ overlap"), "{t}");
    assert!(line("job-p8c3d1wz").contains("⇡ landed"), "{t}");
    assert!(t.contains("⚠ overlap"), "{t}");
    assert!(
        t.contains("job job-m2x9b4rt and job job-a5f6g7h8 both change src"),
        "the Attention item says what job pending says: {t}"
    );
}

#[test]
fn the_land_and_discard_questions_offer_no_force_key_the_kill_question_does() {
    use gitmoot_ui::widgets::footer::footer_hints;
    let forced = |s: &State, snap: &Snapshot| {
        footer_hints(s, snap)
            .iter()
            .any(|(_, label)| *label == "force")
    };
    for key in ['M', 'D'] {
        let (mut s, snap) = drawer(work::files(), DetailTab::Diff);
        update(&mut s, &snap, ch(key));
        assert!(matches!(s.overlay, Some(Overlay::Confirm(_))), "{key}");
        assert!(!forced(&s, &snap), "{key}: {:?}", footer_hints(&s, &snap));
    }
    let (mut s, snap) = drawer(work::files(), DetailTab::Diff);
    s.overlay = Some(Overlay::Confirm(Confirm::KillRoot {
        root_id: JOB.into(),
        title: "t".into(),
        queued: 0,
        running: 1,
    }));
    assert!(forced(&s, &snap), "{:?}", footer_hints(&s, &snap));
}
