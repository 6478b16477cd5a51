//! `update` driven by real key events through the built-in keymap: every command of
//! `ui/keymap.toml` has a test asserting the actions and state it produces.

use crate::common;

use common::fixture::NOW;
use common::*;
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use gitmoot_ui::state::{Confirm, Overlay, Section};
use gitmoot_ui::{Action, Event, Load, Pane, PromoteAction, ResumeVerb, Term, Write, update};

fn send(state: &mut gitmoot_ui::State, snap: &gitmoot_ui::Snapshot, e: Event) -> Vec<Action> {
    update(state, snap, e)
}

// The fixture's failed gate sits on root job-k3v7q2ma and its question on the schema leg;
// these spell the actions the keys are expected to produce there once.

fn load_detail(job_id: &str) -> Vec<Action> {
    vec![Action::Load(Load::Detail(job_id.into()))]
}

fn resume_root(verb: ResumeVerb, instructions: &str) -> Vec<Action> {
    vec![Action::Write(Write::Resume {
        job_id: "job-k3v7q2ma".into(),
        verb,
        instructions: instructions.into(),
    })]
}

fn kill(force: bool) -> Vec<Action> {
    vec![Action::Write(Write::KillRoot {
        root_id: "job-k3v7q2ma".into(),
        force,
    })]
}

fn answer_schema(migration: &str, window: &str) -> Vec<Action> {
    vec![Action::Write(Write::AnswerAsk {
        job_id: "job-k3v7q2ma/schema".into(),
        answers: vec![
            ("migration".into(), migration.into()),
            ("window".into(), window.into()),
        ],
    })]
}

/// The newest toast's text.
fn toast(s: &gitmoot_ui::State) -> &str {
    &s.messages.last().unwrap().text
}

#[test]
fn lands_on_attention_with_the_oldest_gate_and_its_root() {
    let (s, _) = setup();
    assert_eq!(s.focus, Pane::Attention);
    assert_eq!(s.sel.attention.as_deref(), Some("job-k3v7q2ma#failure"));
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma"));
    assert_eq!(s.sel.thread.as_deref(), Some("th-payments"));
}

#[test]
fn lands_on_the_tree_when_nothing_waits() {
    let mut snap = common::fixture::snapshot();
    snap.attention.clear();
    let mut s = gitmoot_ui::State::new(gitmoot_ui::Keymap::builtin(), false, NOW);
    update(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(s.focus, Pane::Tree);
}

#[test]
fn quit_and_ctrl_c_and_suspend() {
    // A viewer quits at once; quitting with this room's own daemon busy asks (tests/quit.rs).
    let (mut s, mut snap) = setup();
    snap.daemon = gitmoot_ui::view::DaemonStatus::Attached;
    assert_eq!(send(&mut s, &snap, ch('q')), vec![Action::Term(Term::Quit)]);
    assert_eq!(
        send(&mut s, &snap, ctrl('z')),
        vec![Action::Term(Term::Suspend)]
    );
    // Ctrl-c quits even from inside a form, where `q` is just a letter.
    type_keys(&mut s, &snap, "ja");
    assert!(matches!(s.overlay, Some(Overlay::Answer { .. })));
    assert_eq!(send(&mut s, &snap, ch('q')), vec![]);
    assert_eq!(
        send(&mut s, &snap, ctrl('c')),
        vec![Action::Term(Term::Quit)]
    );
}

#[test]
fn number_keys_tab_and_shift_tab_move_between_panes() {
    let (mut s, snap) = setup();
    for (c, p) in [
        ('2', Pane::Tree),
        ('3', Pane::Dag),
        ('4', Pane::Threads),
        ('1', Pane::Attention),
    ] {
        send(&mut s, &snap, ch(c));
        assert_eq!(s.focus, p);
    }
    send(&mut s, &snap, key(KeyCode::Tab));
    assert_eq!(s.focus, Pane::Tree);
    send(&mut s, &snap, key(KeyCode::BackTab));
    assert_eq!(s.focus, Pane::Attention);
    send(&mut s, &snap, key(KeyCode::BackTab));
    assert_eq!(s.focus, Pane::Agents);
    send(&mut s, &snap, key(KeyCode::BackTab));
    assert_eq!(s.focus, Pane::Detail);
}

#[test]
fn five_opens_the_drawer_for_the_selection_and_esc_goes_back() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('2'));
    assert_eq!(send(&mut s, &snap, ch('5')), load_detail("job-k3v7q2ma"));
    assert_eq!(s.focus, Pane::Detail);
    send(&mut s, &snap, key(KeyCode::Esc));
    assert_eq!(s.focus, Pane::Tree);
}

#[test]
fn zoom_toggles_and_esc_unzooms() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('z'));
    assert!(s.zoom);
    send(&mut s, &snap, key(KeyCode::Esc));
    assert!(!s.zoom);
}

#[test]
fn help_opens_scrolls_and_closes() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('?'));
    assert!(matches!(s.overlay, Some(Overlay::Help { scroll: 0, .. })));
    send(&mut s, &snap, ch('j'));
    assert!(matches!(s.overlay, Some(Overlay::Help { scroll: 1, .. })));
    send(&mut s, &snap, key(KeyCode::PageDown));
    assert!(matches!(s.overlay, Some(Overlay::Help { scroll: 2.., .. })));
    send(&mut s, &snap, ch('g'));
    assert!(matches!(s.overlay, Some(Overlay::Help { scroll: 0, .. })));
    send(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
}

#[test]
fn moving_in_the_tree_up_down_top_bottom_pages() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2j");
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/schema"));
    send(&mut s, &snap, key(KeyCode::Down));
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/api"));
    send(&mut s, &snap, key(KeyCode::Up));
    send(&mut s, &snap, ch('k'));
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma"));
    send(&mut s, &snap, ch('G'));
    assert_eq!(
        s.sel.tree.as_deref(),
        Some("job-m2x9b4rt"),
        "settled roots are folded, so the last row is a root"
    );
    send(&mut s, &snap, ch('g'));
    assert_eq!(
        s.sel.tree.as_deref(),
        Some("job-p8c3d1wz"),
        "newest root first"
    );
    send(&mut s, &snap, key(KeyCode::PageDown));
    assert_eq!(s.sel.tree.as_deref(), Some("job-m2x9b4rt"));
    send(&mut s, &snap, ctrl('u'));
    assert_eq!(s.sel.tree.as_deref(), Some("job-p8c3d1wz"));
    send(&mut s, &snap, key(KeyCode::End));
    send(&mut s, &snap, key(KeyCode::Home));
    send(&mut s, &snap, ctrl('d'));
    assert_eq!(s.sel.tree.as_deref(), Some("job-m2x9b4rt"));
}

#[test]
fn settled_subtrees_fold_by_themselves_until_unfolded() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('2'));
    let ids = |s: &gitmoot_ui::State| {
        gitmoot_ui::rows::tree_rows(&snap, s)
            .iter()
            .map(|r| r.node.id.clone())
            .collect::<Vec<_>>()
    };
    assert!(!ids(&s).contains(&"job-m2x9b4rt/wording".to_string()));
    assert!(ids(&s).contains(&"job-k3v7q2ma/db".to_string()));
    type_keys(&mut s, &snap, "Gl");
    assert!(
        ids(&s).contains(&"job-m2x9b4rt/wording".to_string()),
        "l unfolds"
    );
    send(&mut s, &snap, ch('l'));
    assert_eq!(
        s.sel.tree.as_deref(),
        Some("job-m2x9b4rt/wording"),
        "l on an open node goes to its first child"
    );
    send(&mut s, &snap, ch('h'));
    assert_eq!(
        s.sel.tree.as_deref(),
        Some("job-m2x9b4rt"),
        "h on a leaf goes to the parent"
    );
    send(&mut s, &snap, key(KeyCode::Left));
    assert!(
        !ids(&s).contains(&"job-m2x9b4rt/wording".to_string()),
        "h folds"
    );
    send(&mut s, &snap, ch(' '));
    assert!(
        ids(&s).contains(&"job-m2x9b4rt/wording".to_string()),
        "space toggles"
    );
    send(&mut s, &snap, key(KeyCode::Right));
    assert_eq!(s.sel.tree.as_deref(), Some("job-m2x9b4rt/wording"));
    // The operator's unfold survives a refresh.
    send(&mut s, &snap, Event::SnapshotArrived);
    assert!(ids(&s).contains(&"job-m2x9b4rt/wording".to_string()));
}

#[test]
fn selection_stays_on_the_same_job_across_refreshes() {
    let (mut s, mut snap) = setup();
    type_keys(&mut s, &snap, "2jj");
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/api"));
    // A newer root appears above: the cursor stays on the same job, not the same row.
    let mut newer = snap.roots[3].clone();
    newer.id = "job-zzzznew1".into();
    newer.tree.id = newer.id.clone();
    newer.created_ms = NOW;
    snap.roots.push(newer);
    send(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/api"));
    // The selected job vanishes: the cursor falls to its neighbour's row.
    snap.roots[1]
        .tree
        .children
        .retain(|c| c.id != "job-k3v7q2ma/api");
    send(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/db"));
}

#[test]
fn enter_on_a_job_opens_detail() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2j");
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        load_detail("job-k3v7q2ma/schema")
    );
    assert_eq!(s.focus, Pane::Detail);
    assert_eq!(s.detail_job(), Some("job-k3v7q2ma/schema"));
    // The glue still has the old detail loaded: a refresh asks again.
    assert_eq!(
        send(&mut s, &snap, Event::SnapshotArrived),
        load_detail("job-k3v7q2ma/schema")
    );
}

#[test]
fn detail_scrolls_within_its_content() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, Event::Resize(W, 20));
    send(&mut s, &snap, ch('2'));
    send(&mut s, &snap, key(KeyCode::Enter));
    send(&mut s, &snap, ch('j'));
    assert_eq!(s.detail_scroll, 1);
    send(&mut s, &snap, ch('G'));
    let bottom = s.detail_scroll;
    assert!(bottom > 0);
    send(&mut s, &snap, ch('j'));
    assert_eq!(s.detail_scroll, bottom, "never past the end");
    send(&mut s, &snap, ch('k'));
    assert_eq!(s.detail_scroll, bottom - 1);
    send(&mut s, &snap, ch('g'));
    assert_eq!(s.detail_scroll, 0);
}

#[test]
fn answer_form_choices_and_free_text_submit_one_answer_per_question() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('j'));
    assert_eq!(s.sel.attention.as_deref(), Some("job-k3v7q2ma/schema#ask"));
    send(&mut s, &snap, ch('a'));
    send(&mut s, &snap, key(KeyCode::Down));
    send(&mut s, &snap, key(KeyCode::Down));
    send(&mut s, &snap, key(KeyCode::Up));
    send(&mut s, &snap, key(KeyCode::Down));
    // Enter on the choice moves to the free-text field.
    assert_eq!(send(&mut s, &snap, key(KeyCode::Enter)), vec![]);
    // Enter on an empty text field refuses and says which answer is missing.
    assert_eq!(send(&mut s, &snap, key(KeyCode::Enter)), vec![]);
    assert!(
        s.messages
            .iter()
            .any(|t| t.text.contains("\"window\" is empty"))
    );
    type_keys(&mut s, &snap, "sunday 02:00");
    send(&mut s, &snap, with(KeyCode::Enter, KeyModifiers::ALT));
    type_keys(&mut s, &snap, "UTC");
    let out = send(&mut s, &snap, key(KeyCode::Enter));
    assert_eq!(out, answer_schema("shadow table", "sunday 02:00\nUTC"));
    assert!(s.overlay.is_none());
}

#[test]
fn answer_form_tab_moves_between_fields_and_esc_cancels() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('j'));
    send(&mut s, &snap, key(KeyCode::Enter));
    let focus = |s: &gitmoot_ui::State| match &s.overlay {
        Some(Overlay::Answer { focus, .. }) => *focus,
        _ => usize::MAX,
    };
    assert_eq!(focus(&s), 0, "Enter opens the answer form too");
    send(&mut s, &snap, key(KeyCode::Tab));
    assert_eq!(focus(&s), 1);
    send(&mut s, &snap, key(KeyCode::BackTab));
    assert_eq!(focus(&s), 0);
    send(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
}

#[test]
fn paste_goes_into_the_focused_text_field_without_escapes() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "ja");
    send(&mut s, &snap, key(KeyCode::Tab));
    send(&mut s, &snap, Event::Paste("night\x1b[31m window".into()));
    let out = send(&mut s, &snap, key(KeyCode::Enter));
    assert_eq!(out, answer_schema("in place", "night window"));
}

#[test]
fn retry_and_continue_take_instructions() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('r'));
    assert!(matches!(
        s.overlay,
        Some(Overlay::Instructions {
            verb: ResumeVerb::Retry,
            ..
        })
    ));
    type_keys(&mut s, &snap, "use the v2 template");
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        resume_root(ResumeVerb::Retry, "use the v2 template")
    );
    send(&mut s, &snap, ch('c'));
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        resume_root(ResumeVerb::Continue, "")
    );
}

#[test]
fn abort_asks_for_confirmation() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('x'));
    assert!(matches!(
        s.overlay,
        Some(Overlay::Confirm(Confirm::Abort { .. }))
    ));
    assert_eq!(send(&mut s, &snap, ch('n')), vec![]);
    assert!(s.overlay.is_none());
    send(&mut s, &snap, ch('x'));
    assert_eq!(
        send(&mut s, &snap, ch('y')),
        resume_root(ResumeVerb::Abort, "")
    );
}

#[test]
fn resume_verbs_on_a_question_explain_instead() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('j'));
    assert_eq!(send(&mut s, &snap, ch('r')), vec![]);
    assert!(s.overlay.is_none());
    assert!(toast(&s).contains("failure escalations"));
}

#[test]
fn enter_on_a_failure_opens_the_failed_leg_and_d_opens_the_gate_job() {
    let (mut s, snap) = setup();
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        load_detail("job-k3v7q2ma/docs")
    );
    send(&mut s, &snap, ch('1'));
    assert_eq!(send(&mut s, &snap, ch('d')), load_detail("job-k3v7q2ma"));
}

#[test]
fn kill_confirms_with_what_happens_and_has_a_force_variant() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2jK");
    match &s.overlay {
        Some(Overlay::Confirm(Confirm::KillRoot {
            root_id,
            queued,
            running,
            ..
        })) => {
            assert_eq!(
                (root_id.as_str(), *queued, *running),
                ("job-k3v7q2ma", 1, 1)
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        send(&mut s, &snap, ch('j')),
        vec![],
        "other keys keep the dialog"
    );
    assert_eq!(send(&mut s, &snap, ch('y')), kill(false));
    send(&mut s, &snap, ch('K'));
    assert_eq!(send(&mut s, &snap, ch('F')), kill(true));
    send(&mut s, &snap, ch('K'));
    assert_eq!(send(&mut s, &snap, key(KeyCode::Esc)), vec![]);
    assert!(s.overlay.is_none());
}

#[test]
fn kill_on_a_finished_root_says_so() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2GK");
    assert!(s.overlay.is_none());
    assert!(toast(&s).contains("already ended (done)"));
}

#[test]
fn cancel_job_confirms() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('2'));
    for _ in 0..3 {
        send(&mut s, &snap, ch('j'));
    }
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/db"));
    send(&mut s, &snap, ch('C'));
    assert_eq!(
        send(&mut s, &snap, ch('y')),
        vec![Action::Write(Write::CancelJob {
            job_id: "job-k3v7q2ma/db".into()
        })]
    );
    type_keys(&mut s, &snap, "kC");
    assert!(s.overlay.is_none(), "a succeeded job cannot be cancelled");
}

#[test]
fn copy_gives_the_resume_command_in_attention_and_the_id_elsewhere() {
    let (mut s, snap) = setup();
    assert_eq!(
        send(&mut s, &snap, ch('y')),
        vec![Action::Term(Term::Copy(
            "gitmoot job resume job-k3v7q2ma retry".into()
        ))]
    );
    send(&mut s, &snap, ch('j'));
    assert_eq!(
        send(&mut s, &snap, ch('y')),
        vec![Action::Term(Term::Copy(
            "gitmoot job answer job-k3v7q2ma/schema \"migration: \"".into()
        ))]
    );
    send(&mut s, &snap, ch('2'));
    assert_eq!(
        send(&mut s, &snap, ch('y')),
        vec![Action::Term(Term::Copy("job-k3v7q2ma".into()))]
    );
    send(&mut s, &snap, ch('4'));
    assert_eq!(
        send(&mut s, &snap, ch('y')),
        vec![Action::Term(Term::Copy("th-payments".into()))]
    );
}

#[test]
fn filter_narrows_rows_and_esc_clears() {
    let (mut s, snap) = setup();
    type_keys(&mut s, &snap, "2/");
    assert!(s.filter_editing);
    type_keys(&mut s, &snap, "kimi");
    assert_eq!(s.filter, "kimi");
    let ids: Vec<String> = gitmoot_ui::rows::tree_rows(&snap, &s)
        .iter()
        .map(|r| r.node.id.clone())
        .collect();
    assert!(ids.contains(&"job-k3v7q2ma/tests".to_string()), "{ids:?}");
    assert_eq!(ids[0], "job-k3v7q2ma", "a match shows with its ancestors");
    for gone in ["job-k3v7q2ma/schema", "job-p8c3d1wz", "job-m2x9b4rt"] {
        assert!(
            !ids.contains(&gone.to_string()),
            "{gone} should be filtered out: {ids:?}"
        );
    }
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma"));
    send(&mut s, &snap, key(KeyCode::Backspace));
    assert_eq!(s.filter, "kim");
    send(&mut s, &snap, key(KeyCode::Enter));
    assert!(!s.filter_editing);
    assert_eq!(s.filter, "kim", "Enter keeps the filter");
    send(&mut s, &snap, key(KeyCode::Esc));
    assert_eq!(s.filter, "");
    send(&mut s, &snap, ch('/'));
    type_keys(&mut s, &snap, "failed");
    send(&mut s, &snap, key(KeyCode::Esc));
    assert!(!s.filter_editing && s.filter.is_empty());
}

#[test]
fn command_line_runs_cli_verbs() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch(':'));
    assert_eq!(s.command.as_deref(), Some(""));
    type_keys(&mut s, &snap, "gitmoot job kill job-abcx");
    send(&mut s, &snap, key(KeyCode::Backspace));
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Write(Write::RunCommand("job kill job-abc".into()))]
    );
    assert!(s.command.is_none());
    send(&mut s, &snap, ch(':'));
    type_keys(&mut s, &snap, "job");
    assert_eq!(send(&mut s, &snap, key(KeyCode::Esc)), vec![]);
    assert!(s.command.is_none());
}

#[test]
fn dag_moves_between_nodes_and_roots() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('3'));
    // The DAG opened from Attention shows the selected item's node: the failed leg.
    assert_eq!(s.sel.dag.as_deref(), Some("job-k3v7q2ma/docs"));
    send(&mut s, &snap, ch('g'));
    assert_eq!(s.sel.dag.as_deref(), Some("job-k3v7q2ma"));
    send(&mut s, &snap, ch('j'));
    assert_eq!(s.sel.dag.as_deref(), Some("job-k3v7q2ma/schema"));
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        load_detail("job-k3v7q2ma/schema")
    );
    type_keys(&mut s, &snap, "3]");
    assert_eq!(s.dag_root.as_deref(), Some("job-a5f6g7h8"));
    type_keys(&mut s, &snap, "[[");
    assert_eq!(s.dag_root.as_deref(), Some("job-p8c3d1wz"));
    send(&mut s, &snap, ch('C'));
    assert!(matches!(
        s.overlay,
        Some(Overlay::Confirm(Confirm::CancelJob { .. }))
    ));
}

#[test]
fn threads_sections_messages_reply_compose_promote_and_mark_read() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('4'));
    assert_eq!(s.section, Section::Threads);
    assert_eq!(
        send(&mut s, &snap, ch('j')),
        vec![Action::Load(Load::Thread("job-3f2a9c1b7e4d".into()))]
    );
    send(&mut s, &snap, ch('k'));
    assert_eq!(s.sel.thread.as_deref(), Some("th-payments"));
    send(&mut s, &snap, key(KeyCode::Enter));
    assert_eq!(s.section, Section::Transcript);
    assert_eq!(s.sel.message, Some(5));
    send(&mut s, &snap, ch('k'));
    assert_eq!(s.sel.message, Some(4));
    // Reply: prefilled mention of the author, Tab completes a mention, Enter sends.
    send(&mut s, &snap, ch('r'));
    type_keys(&mut s, &snap, "thanks @co");
    send(&mut s, &snap, key(KeyCode::Tab));
    type_keys(&mut s, &snap, "too");
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Write(Write::SendChat {
            thread_id: "th-payments".into(),
            body: "@claude-rev thanks @codex too".into(),
            reply_to: Some(4)
        })]
    );
    send(&mut s, &snap, ch('i'));
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        vec![],
        "an empty message is refused"
    );
    type_keys(&mut s, &snap, "hi");
    send(&mut s, &snap, with(KeyCode::Enter, KeyModifiers::ALT));
    type_keys(&mut s, &snap, "all");
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Write(Write::SendChat {
            thread_id: "th-payments".into(),
            body: "hi\nall".into(),
            reply_to: None
        })]
    );
    type_keys(&mut s, &snap, "pj");
    send(&mut s, &snap, key(KeyCode::Down));
    send(&mut s, &snap, ch('k'));
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Write(Write::Promote {
            thread_id: "th-payments".into(),
            seq: 4,
            action: PromoteAction::Review
        })]
    );
    send(&mut s, &snap, ch('p'));
    assert_eq!(send(&mut s, &snap, key(KeyCode::Esc)), vec![]);
    // Sections: l cycles threads → inbox → transcript, h goes back.
    send(&mut s, &snap, ch('h'));
    assert_eq!(s.section, Section::Inbox);
    assert_eq!(
        send(&mut s, &snap, ch('m')),
        vec![Action::Write(Write::MarkRead {
            agent: "claude-rev".into(),
            thread_id: "th-payments".into(),
            seqs: vec![2, 5]
        })]
    );
    send(&mut s, &snap, key(KeyCode::Down));
    assert_eq!(s.sel.inbox.as_deref(), Some("codex"));
    assert_eq!(
        send(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Load(Load::Thread("th-payments".into()))]
    );
    assert_eq!(s.section, Section::Transcript);
    send(&mut s, &snap, ch('l'));
    assert_eq!(s.section, Section::Threads);
    send(&mut s, &snap, key(KeyCode::Right));
    send(&mut s, &snap, key(KeyCode::Left));
    assert_eq!(s.section, Section::Threads);
}

#[test]
fn readonly_refuses_every_write_with_a_toast() {
    let (_, snap) = setup();
    let mut s = gitmoot_ui::State::new(gitmoot_ui::Keymap::builtin(), true, NOW);
    update(&mut s, &snap, Event::Resize(W, H));
    update(&mut s, &snap, Event::SnapshotArrived);
    for keys in ["r", "c", "x", "ja", "K", "2C", "4i", "4r", "4p", "4hm"] {
        s.overlay = None;
        s.focus = Pane::Attention;
        let out = type_keys(&mut s, &snap, keys);
        assert!(out.iter().all(|a| !a.is_write()), "{keys}: {out:?}");
        assert!(s.overlay.is_none(), "{keys} opened {:?}", s.overlay);
        assert!(
            s.messages
                .last()
                .map(|t| t.text.starts_with("read-only"))
                .unwrap_or(false),
            "{keys}"
        );
    }
    // Reading still works.
    s.focus = Pane::Tree;
    assert_eq!(
        type_keys(&mut s, &snap, "y"),
        vec![Action::Term(Term::Copy("job-k3v7q2ma".into()))]
    );
}

#[test]
fn ticks_advance_the_spinner_and_clear_the_message_bar() {
    let (mut s, snap) = setup();
    send(&mut s, &snap, ch('y'));
    assert_eq!(s.messages.len(), 1);
    assert!(s.bar_message().is_some());
    send(
        &mut s,
        &snap,
        Event::Tick {
            now_ms: NOW + 1_000,
        },
    );
    assert_eq!((s.tick, s.bar_message().is_some()), (1, true));
    send(
        &mut s,
        &snap,
        Event::Tick {
            now_ms: NOW + 10_000,
        },
    );
    // The bar clears; the log keeps the message.
    assert_eq!(
        (
            s.tick,
            s.bar_message().is_some(),
            s.messages.len(),
            s.now_ms
        ),
        (2, false, 1, NOW + 10_000)
    );
}

#[test]
fn mouse_click_focuses_and_selects_and_wheel_scrolls() {
    let (mut s, snap) = setup();
    let click = |col, row| {
        Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: col,
            row,
            modifiers: KeyModifiers::NONE,
        })
    };
    // Tree pane starts at row 10 (status 1 + attention 9); its header is row 11 and its
    // first job row 12.
    send(&mut s, &snap, click(10, 11));
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma"));
    send(&mut s, &snap, click(10, 14));
    assert_eq!(s.focus, Pane::Tree);
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/schema"));
    let wheel = Event::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 10,
        row: 14,
        modifiers: KeyModifiers::NONE,
    });
    send(&mut s, &snap, wheel);
    assert_eq!(s.sel.tree.as_deref(), Some("job-k3v7q2ma/api"));
    send(&mut s, &snap, click(80, 5));
    assert_eq!(s.focus, Pane::Dag);
    send(&mut s, &snap, click(10, 6));
    assert_eq!(
        (s.focus, s.sel.attention.as_deref()),
        (Pane::Attention, Some("job-k3v7q2ma/schema#ask"))
    );
}

#[test]
fn key_release_events_are_ignored() {
    let (mut s, snap) = setup();
    let mut k = crossterm::event::KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
    k.kind = crossterm::event::KeyEventKind::Release;
    assert_eq!(update(&mut s, &snap, Event::Key(k)), vec![]);
}

#[test]
fn user_overrides_change_what_keys_do() {
    let (_, mut snap) = setup();
    snap.daemon = gitmoot_ui::view::DaemonStatus::Attached;
    let km = gitmoot_ui::Keymap::with_overrides("keymap.toml", "[[global]]\non = \"Q\"\nrun = \"quit\"\ndesc = \"Quit\"\n[[global]]\non = \"q\"\nrun = \"help\"\n").unwrap();
    let mut s = gitmoot_ui::State::new(km, false, NOW);
    update(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(update(&mut s, &snap, ch('q')), vec![]);
    assert!(matches!(s.overlay, Some(Overlay::Help { .. })));
    s.overlay = None;
    assert_eq!(
        update(&mut s, &snap, ch('Q')),
        vec![Action::Term(Term::Quit)]
    );
}

#[test]
fn an_ask_and_a_failure_on_one_coordinator_are_two_selectable_rows() {
    let mut snap = common::fixture::snapshot();
    let failure = snap
        .attention
        .iter()
        .find(|a| matches!(a.kind, gitmoot_ui::view::AttentionKind::Failure { .. }))
        .unwrap()
        .clone();
    let mut ask = snap
        .attention
        .iter()
        .find(|a| matches!(a.kind, gitmoot_ui::view::AttentionKind::Ask { .. }))
        .unwrap()
        .clone();
    ask.job_id = failure.job_id.clone();
    ask.opened_ms = failure.opened_ms + 1;
    snap.attention = vec![failure.clone(), ask];
    let mut s = gitmoot_ui::State::new(gitmoot_ui::Keymap::builtin(), false, NOW);
    update(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(s.sel.attention, Some(format!("{}#failure", failure.job_id)));
    send(&mut s, &snap, ch('j'));
    assert_eq!(s.sel.attention, Some(format!("{}#ask", failure.job_id)));
    let actions = send(&mut s, &snap, ch('a'));
    assert!(actions.is_empty());
    assert!(
        matches!(s.overlay, Some(Overlay::Answer { ref job_id, .. }) if *job_id == failure.job_id),
        "{:?}",
        s.overlay.is_some()
    );
}

#[test]
fn a_gate_that_appears_later_pulls_focus_until_the_operator_moves() {
    let mut snap = common::fixture::snapshot();
    let gates = std::mem::take(&mut snap.attention);
    let mut s = gitmoot_ui::State::new(gitmoot_ui::Keymap::builtin(), false, NOW);
    update(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(s.focus, Pane::Tree);
    snap.attention = gates.clone();
    update(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(s.focus, Pane::Attention, "attention first");
    send(&mut s, &snap, ch('2'));
    snap.attention.push(gates[0].clone());
    update(&mut s, &snap, Event::SnapshotArrived);
    assert_eq!(s.focus, Pane::Tree, "the operator's choice stands");
}
