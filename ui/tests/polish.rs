//! Operator polish: the message bar and log, the `:` line (output view, completion,
//! history, read-only), drafts, pastes, width priorities at 80×24 and every dialog at
//! 80×24 and 140×40.

use crate::common;

use common::fixture::{self, NOW};
use common::*;
use crossterm::event::KeyCode;
use gitmoot_ui::complete::ValueKind;
use gitmoot_ui::state::Overlay;
use gitmoot_ui::{
    Action, CommandOutput, CompletionTree, Event, Keymap, Load, Pane, Snapshot, State, Theme,
    ToastLevel, Write, render, update,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn sized(w: u16, h: u16) -> (State, Snapshot) {
    let snap = fixture::snapshot();
    let mut state = State::new(Keymap::builtin(), false, NOW);
    update(&mut state, &snap, Event::Resize(w, h));
    update(&mut state, &snap, Event::SnapshotArrived);
    (state, snap)
}

fn screen(state: &State, snap: &Snapshot, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render(f, state, snap, &Theme::default_dark()))
        .unwrap();
    buffer_text(t.backend().buffer())
        .lines()
        .map(str::to_string)
        .collect()
}

const LONG: &str = "could not run the command: error: job job-k3v7q2ma/docs is not blocked \
(it is failed); resume applies to a coordinator waiting on an escalation — try `job tree` \
to find it, then `job resume <root> retry` FINAL-WORD";

#[test]
fn results_go_to_the_message_bar_and_the_log_holds_them_whole() {
    let (mut s, snap) = sized(80, 24);
    let before = screen(&s, &snap, 80, 24);
    s.notify(ToastLevel::Error, LONG);
    let after = screen(&s, &snap, 80, 24);
    // Only the message bar (the row above the footer) changed: nothing paints over a pane.
    for (i, (a, b)) in before.iter().zip(&after).enumerate() {
        if i != 22 {
            assert_eq!(a, b, "row {i} changed");
        }
    }
    assert!(
        after[22].contains("could not run the command"),
        "{}",
        after[22]
    );
    assert!(after[22].contains("L messages"), "{}", after[22]);
    assert!(!after[22].contains("FINAL-WORD"));
    // `L` opens the log; the whole error reads there, wrapped.
    update(&mut s, &snap, ch('L'));
    assert!(matches!(s.overlay, Some(Overlay::Messages { .. })));
    let log = screen(&s, &snap, 80, 24).join("\n");
    assert!(log.contains("FINAL-WORD"), "{log}");
    assert!(log.contains("messages"), "{log}");
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
    // `:messages` opens it too, and never reaches the CLI.
    let out = type_keys(&mut s, &snap, ":messages");
    assert!(out.is_empty());
    assert_eq!(update(&mut s, &snap, key(KeyCode::Enter)), vec![]);
    assert!(matches!(s.overlay, Some(Overlay::Messages { .. })));
}

#[test]
fn the_messages_log_opens_on_the_newest_and_scrolls_back_to_the_oldest() {
    let (mut s, snap) = sized(80, 24);
    for i in 1..=40 {
        s.notify(ToastLevel::Info, format!("result number {i:02}"));
    }
    // The bar keeps the newest; the log's own lines start with a bullet.
    update(&mut s, &snap, ch('L'));
    let newest = screen(&s, &snap, 80, 24).join("\n");
    assert!(
        newest.contains("• result number 40") && !newest.contains("• result number 01"),
        "{newest}"
    );
    update(&mut s, &snap, ch('g'));
    let oldest = screen(&s, &snap, 80, 24).join("\n");
    assert!(
        oldest.contains("• result number 01") && !oldest.contains("• result number 40"),
        "{oldest}"
    );
    update(&mut s, &snap, ch('j'));
    let one_down = screen(&s, &snap, 80, 24).join("\n");
    assert!(!one_down.contains("• result number 01"), "{one_down}");
    assert!(one_down.contains("• result number 02"), "{one_down}");
}

#[test]
fn a_read_verb_opens_its_whole_output_in_a_scrollable_view() {
    let (mut s, snap) = sized(80, 24);
    let text: String = (1..=60).map(|i| format!("job-{i:03}  row {i}\n")).collect();
    s.command_output(CommandOutput {
        command: "job list".into(),
        ok: true,
        text,
    });
    assert!(matches!(s.overlay, Some(Overlay::Output { .. })));
    let first = screen(&s, &snap, 80, 24).join("\n");
    assert!(first.contains(":job list"), "{first}");
    assert!(
        first.contains("job-001") && !first.contains("job-060"),
        "{first}"
    );
    update(&mut s, &snap, ch('G'));
    let last = screen(&s, &snap, 80, 24).join("\n");
    assert!(last.contains("job-060"), "{last}");
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
    assert!(s.messages.last().unwrap().text.contains("job-060"));
}

fn cli_tree() -> CompletionTree {
    let node = |n: &str, kids: Vec<CompletionTree>, flags: &[&str]| CompletionTree {
        name: n.into(),
        children: kids,
        flags: flags.iter().map(|f| f.to_string()).collect(),
        ..CompletionTree::default()
    };
    let states = ValueKind::Choice(vec!["queued".into(), "failed".into()]);
    node(
        "gitmoot",
        vec![
            node(
                "job",
                vec![
                    CompletionTree {
                        valued: vec![
                            ("--state".into(), Some(states)),
                            ("--agent".into(), Some(ValueKind::Agent)),
                        ],
                        ..node("list", vec![], &["--state", "--agent", "--json"])
                    },
                    CompletionTree {
                        positionals: vec![Some(ValueKind::Job)],
                        ..node("kill", vec![], &["--force"])
                    },
                ],
                &[],
            ),
            CompletionTree {
                positionals: vec![Some(ValueKind::Thread)],
                ..node("chat", vec![], &[])
            },
        ],
        &[],
    )
}

#[test]
fn tab_completes_the_job_ids_agents_and_threads_on_screen() {
    let (mut s, snap) = setup();
    s.completions = cli_tree();
    type_keys(&mut s, &snap, ":job kill job-k3v7q2ma/sc");
    update(&mut s, &snap, key(KeyCode::Tab));
    assert_eq!(s.command.as_deref(), Some("job kill job-k3v7q2ma/schema "));
    update(&mut s, &snap, key(KeyCode::Esc));
    type_keys(&mut s, &snap, ":job list --agent le");
    update(&mut s, &snap, key(KeyCode::Tab));
    type_keys(&mut s, &snap, "--state f");
    update(&mut s, &snap, key(KeyCode::Tab));
    assert_eq!(
        s.command.as_deref(),
        Some("job list --agent lead --state failed ")
    );
    update(&mut s, &snap, key(KeyCode::Esc));
    type_keys(&mut s, &snap, ":chat pay");
    update(&mut s, &snap, key(KeyCode::Tab));
    assert_eq!(s.command.as_deref(), Some("chat payments-refactor "));
}

#[test]
fn the_command_line_completes_with_tab_and_recalls_history() {
    let (mut s, snap) = setup();
    s.completions = cli_tree();
    s.history = vec!["job list".into(), "chat list".into()];
    type_keys(&mut s, &snap, ":jo");
    update(&mut s, &snap, key(KeyCode::Tab));
    assert_eq!(s.command.as_deref(), Some("job "));
    type_keys(&mut s, &snap, "li");
    update(&mut s, &snap, key(KeyCode::Tab));
    type_keys(&mut s, &snap, "--s");
    update(&mut s, &snap, key(KeyCode::Tab));
    assert_eq!(s.command.as_deref(), Some("job list --state "));
    update(&mut s, &snap, key(KeyCode::Esc));
    type_keys(&mut s, &snap, ":");
    update(&mut s, &snap, key(KeyCode::Up));
    assert_eq!(s.command.as_deref(), Some("chat list"));
    update(&mut s, &snap, key(KeyCode::Up));
    assert_eq!(s.command.as_deref(), Some("job list"));
    update(&mut s, &snap, key(KeyCode::Down));
    assert_eq!(s.command.as_deref(), Some("chat list"));
    assert_eq!(
        update(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Write(Write::RunCommand("chat list".into()))]
    );
    assert_eq!(s.history.last().map(String::as_str), Some("chat list"));
    assert_eq!(s.history.len(), 2);
}

#[test]
fn readonly_runs_read_verbs_and_swallows_a_refused_line() {
    let (_, snap) = setup();
    let mut s = State::new(Keymap::builtin(), true, NOW);
    update(&mut s, &snap, Event::Resize(W, H));
    update(&mut s, &snap, Event::SnapshotArrived);
    let out = type_keys(&mut s, &snap, ":job list");
    assert!(out.is_empty());
    assert_eq!(
        update(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Write(Write::RunCommand("job list".into()))]
    );
    // A write typed after `:` neither runs nor leaks its letters as pane commands
    // (`K` would open the kill dialog, `q` would quit).
    let out = type_keys(&mut s, &snap, ":job kill Kq");
    assert!(out.is_empty(), "{out:?}");
    assert!(s.overlay.is_none());
    assert_eq!(update(&mut s, &snap, key(KeyCode::Enter)), vec![]);
    assert!(s.messages.last().unwrap().text.starts_with("read-only"));
}

#[test]
fn esc_on_a_draft_asks_before_discarding_it() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('4'));
    update(&mut s, &snap, key(KeyCode::Enter));
    update(&mut s, &snap, ch('r'));
    type_keys(&mut s, &snap, "half a thought");
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(matches!(s.overlay, Some(Overlay::Compose { .. })));
    assert!(s.messages.last().unwrap().text.contains("discard"));
    // Any other key keeps editing, and the next Esc asks again.
    type_keys(&mut s, &snap, "!");
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_some());
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
    // An empty form closes at once.
    update(&mut s, &snap, ch('i'));
    assert!(matches!(s.overlay, Some(Overlay::Compose { .. })));
    update(&mut s, &snap, key(KeyCode::Esc));
    assert!(s.overlay.is_none());
}

#[test]
fn pasted_carriage_returns_become_line_breaks() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('4'));
    update(&mut s, &snap, key(KeyCode::Enter));
    update(&mut s, &snap, ch('i'));
    update(&mut s, &snap, Event::Paste("one\rtwo\r\nthree".into()));
    let Some(Overlay::Compose { text, .. }) = &s.overlay else {
        panic!("compose open");
    };
    assert_eq!(text.lines(), ["one", "two", "three"]);
}

#[test]
fn at_80x24_ids_are_whole_and_help_and_quit_stay_on_the_footer() {
    let (mut s, snap) = sized(80, 24);
    update(&mut s, &snap, ch('2'));
    let rows = screen(&s, &snap, 80, 24);
    let text = rows.join("\n");
    for id in [
        "job-p8c3d1wz",
        "job-k3v7q2ma",
        "job-a5f6g7h8",
        "job-m2x9b4rt",
    ] {
        assert!(text.contains(id), "{id} cut:\n{text}");
    }
    let footer = rows.last().unwrap();
    assert!(footer.contains("? help"), "{footer}");
    assert!(footer.contains("Ctrl-c quit"), "{footer}");
    // The tree has a header naming its columns; no usage reads `-`, not `0`.
    assert!(text.contains("job · title"), "{text}");
    let (s2, snap2) = sized(140, 40);
    let wide = screen(&s2, &snap2, 140, 40).join("\n");
    assert!(
        wide.contains("tokens") && wide.contains("elapsed"),
        "{wide}"
    );
    let row = wide
        .lines()
        .find(|l| l.contains("├─ ○ tests · kimi"))
        .unwrap();
    let at = row.find("tests · kimi").unwrap();
    let cell = row[at..].split(['│', '┃']).next().unwrap();
    assert!(cell.trim_end().ends_with('-'), "{row}");
}

#[test]
fn the_footer_offers_the_keys_of_the_selected_items_kind() {
    let (mut s, snap) = setup();
    assert_eq!(s.focus, Pane::Attention);
    let failure = screen(&s, &snap, W, H).last().unwrap().clone();
    assert!(
        failure.contains("r retry") && !failure.contains("a answer"),
        "{failure}"
    );
    update(&mut s, &snap, ch('j'));
    let ask = screen(&s, &snap, W, H).last().unwrap().clone();
    assert!(
        ask.contains("a answer") && !ask.contains("r retry"),
        "{ask}"
    );
}

#[test]
fn the_attention_selection_drives_the_dag() {
    let (mut s, snap) = setup();
    assert_eq!(s.sel.dag.as_deref(), Some("job-k3v7q2ma/docs"));
    update(&mut s, &snap, ch('j'));
    assert_eq!(s.sel.dag.as_deref(), Some("job-k3v7q2ma/schema"));
    assert_eq!(s.dag_root.as_deref(), Some("job-k3v7q2ma"));
}

#[test]
fn the_attention_selection_drives_an_open_detail_drawer() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('5'));
    assert_eq!(s.detail_job.as_deref(), Some("job-k3v7q2ma/docs"));
    update(&mut s, &snap, ch('1'));
    let out = update(&mut s, &snap, ch('j'));
    assert_eq!(s.detail_job.as_deref(), Some("job-k3v7q2ma/schema"));
    assert!(
        out.contains(&Action::Load(Load::Detail("job-k3v7q2ma/schema".into()))),
        "{out:?}"
    );
}

/// Every dialog and form, opened by keys from the landing state.
fn dialogs() -> Vec<(&'static str, Vec<Event>, Vec<&'static str>)> {
    let chars = |k: &str| k.chars().map(ch).collect::<Vec<_>>();
    let mut promote = vec![ch('4'), key(KeyCode::Enter), ch('p')];
    promote.push(ch('j'));
    vec![
        (
            "promote",
            promote,
            vec![
                "Promote to a job",
                "ask",
                "review",
                "implement",
                "Enter promote",
            ],
        ),
        (
            "kill",
            chars("2K"),
            vec!["Kill job-k3v7q2ma?", "the run ends as killed", "n/Esc"],
        ),
        (
            "cancel",
            chars("2jjjC"),
            vec!["Cancel", "marked cancelled", "n/Esc"],
        ),
        (
            "abort",
            chars("x"),
            vec!["Abort", "the run ends as aborted", "n/Esc"],
        ),
        (
            "answer",
            chars("ja"),
            vec!["a shadow table?", "maintenance window", "Esc"],
        ),
        ("retry", chars("r"), vec!["retry job-k3v7q2ma", "Esc"]),
        ("help", chars("?"), vec!["keys"]),
        ("messages", chars("L"), vec!["messages"]),
    ]
}

#[test]
fn every_dialog_shows_whole_at_80x24_and_140x40() {
    for (w, h) in [(80, 24), (140, 40)] {
        for (name, keys, want) in dialogs() {
            let (mut s, snap) = sized(w, h);
            for k in keys {
                update(&mut s, &snap, k);
            }
            assert!(s.overlay.is_some(), "{name} at {w}×{h} did not open");
            let text = screen(&s, &snap, w, h).join("\n");
            for needle in want {
                assert!(
                    text.contains(needle),
                    "{name} at {w}×{h} lacks {needle:?}:\n{text}"
                );
            }
        }
    }
}

#[test]
fn the_quit_dialogs_show_whole_at_80x24_and_140x40() {
    use gitmoot_ui::state::Confirm;
    for (w, h) in [(80, 24), (140, 40)] {
        for ov in [
            Overlay::Confirm(Confirm::Quit),
            Overlay::Stopping { kill: false },
        ] {
            let (mut s, snap) = sized(w, h);
            s.overlay = Some(ov);
            let text = screen(&s, &snap, w, h).join("\n");
            assert!(text.contains("detach"), "{w}×{h}:\n{text}");
        }
    }
}

#[test]
fn the_promote_dialog_quotes_the_message_it_promotes() {
    let (mut s, snap) = sized(80, 24);
    for k in [
        ch('4'),
        key(KeyCode::Enter),
        ch('k'),
        ch('k'),
        ch('k'),
        ch('p'),
    ] {
        update(&mut s, &snap, k);
    }
    let Some(Overlay::Promote { seq, .. }) = s.overlay else {
        panic!("promote open");
    };
    let body = snap
        .transcript
        .as_ref()
        .and_then(|t| t.messages.iter().find(|m| m.seq == seq))
        .map(|m| m.body.clone())
        .unwrap();
    let first_word = body.split_whitespace().next().unwrap().to_string();
    let text = screen(&s, &snap, 80, 24).join("\n");
    assert!(text.contains(&format!("│ {first_word}")), "{text}");
}

/// The Threads pane's column of the screen (right half at 120 columns).
fn right_half(rows: &[String]) -> String {
    rows.iter()
        .map(|r| r.chars().skip(60).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn threads_show_one_selection_marker_and_their_titles() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('4'));
    let rows = screen(&s, &snap, W, H);
    assert_eq!(
        right_half(&rows).matches('▌').count(),
        1,
        "{}",
        rows.join("\n")
    );
    assert!(
        rows.join("\n").contains("Questions from j"),
        "{}",
        rows.join("\n")
    );
    update(&mut s, &snap, key(KeyCode::Enter));
    let rows = screen(&s, &snap, W, H);
    assert_eq!(
        right_half(&rows).matches('▌').count(),
        1,
        "{}",
        rows.join("\n")
    );
}

#[test]
fn the_layered_dag_spells_out_who_waits_for_whom() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('3'));
    let text = screen(&s, &snap, W, H).join("\n");
    assert!(text.contains("tests · kimi · after api, db"), "{text}");
    assert!(text.contains("db · codex · after schema"), "{text}");
}

#[test]
fn the_attention_pane_gives_a_failure_reason_two_lines() {
    let (mut s, mut snap) = setup();
    for a in &mut snap.attention {
        if let gitmoot_ui::view::AttentionKind::Failure { reason, .. } = &mut a.kind {
            *reason = "leg integration failed after 3 attempts: shell exited with code 3".into();
        }
    }
    update(&mut s, &snap, Event::SnapshotArrived);
    let text = screen(&s, &snap, W, H).join("\n");
    assert!(text.contains("exited with code 3"), "{text}");
}

#[test]
fn chat_markdown_renders_in_the_transcript() {
    let (mut s, mut snap) = setup();
    if let Some(t) = snap.transcript.as_mut() {
        for m in &mut t.messages {
            m.body = "> Agent: `scribe`\n**Decision:** `approved`\n- first finding".into();
        }
    }
    update(&mut s, &snap, ch('4'));
    update(&mut s, &snap, key(KeyCode::Enter));
    let text = screen(&s, &snap, W, H).join("\n");
    assert!(text.contains("Decision: approved"), "{text}");
    assert!(text.contains("▏ Agent: scribe"), "{text}");
    assert!(text.contains("• first finding"), "{text}");
    assert!(!text.contains("**"), "{text}");
}

#[test]
fn the_status_bar_shows_its_help_hint_whole_or_not_at_all() {
    let (mut s, mut snap) = sized(80, 24);
    snap.counts.running = 12;
    snap.counts.queued = 340;
    snap.counts.awaiting = 3;
    // Every width across the point where the hint stops fitting, one column at a time.
    for w in 60u16..=100 {
        update(&mut s, &snap, Event::Resize(w, 24));
        let top = screen(&s, &snap, w, 24)[0].trim_end().to_string();
        assert!(
            top.ends_with("? help") || !top.contains('?'),
            "width {w}: {top:?}"
        );
        assert!(
            top.contains("ago") || !top.contains("│ up"),
            "width {w}: {top:?}"
        );
    }
    let wide = screen(&s, &snap, 140, 24)[0].trim_end().to_string();
    assert!(wide.ends_with("? help"), "{wide:?}");
}

#[test]
fn a_retried_leg_reads_with_its_attempt_in_the_dag_and_the_tree() {
    fn retried(n: &mut gitmoot_ui::view::JobNode) {
        if n.id == "job-k3v7q2ma/db" {
            n.attempt = 2;
        }
        n.children.iter_mut().for_each(retried);
    }
    let (mut s, mut snap) = setup();
    snap.roots.iter_mut().for_each(|r| retried(&mut r.tree));
    update(&mut s, &snap, Event::SnapshotArrived);
    update(&mut s, &snap, ch('3'));
    let text = screen(&s, &snap, W, H).join("\n");
    assert!(text.contains("db.2 · codex"), "{text}");
    assert!(
        text.contains("schema · "),
        "a first attempt keeps its plain name: {text}"
    );
}

#[test]
fn showing_a_thread_with_unread_messages_reports_it_read_once_and_never_when_readonly() {
    let seen = |actions: &[Action]| {
        actions
            .iter()
            .filter(|a| matches!(a, Action::Write(Write::MarkSeen { .. })))
            .cloned()
            .collect::<Vec<_>>()
    };
    let (mut s, snap) = setup();
    let newest = snap
        .transcript
        .as_ref()
        .unwrap()
        .messages
        .last()
        .unwrap()
        .seq;
    assert!(seen(&update(&mut s, &snap, Event::SnapshotArrived)).is_empty());
    let shown = seen(&update(&mut s, &snap, ch('4')));
    assert_eq!(
        shown,
        [Action::Write(Write::MarkSeen {
            thread_id: "th-payments".into(),
            seq: newest
        })]
    );
    assert!(
        seen(&update(&mut s, &snap, Event::SnapshotArrived)).is_empty(),
        "one report per read position"
    );
    let mut ro = State::new(Keymap::builtin(), true, NOW);
    update(&mut ro, &snap, Event::Resize(W, H));
    update(&mut ro, &snap, Event::SnapshotArrived);
    assert!(seen(&update(&mut ro, &snap, ch('4'))).is_empty());
    assert!(ro.messages.is_empty(), "no read-only complaint for looking");
}
