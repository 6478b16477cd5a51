//! Quitting never touches work: with this control room's daemon busy, `q` and Ctrl-c ask
//! (detach by default, wait with a live "stopping" frame, or kill); idle, it quits at once.
//! Also the honest rows: a spinner only for running, queued rows with their wait, and a
//! row that says it will not run when no daemon runs.

use crate::common;

use common::{ch, ctrl, key, setup, text};
use crossterm::event::KeyCode;
use gitmoot_ui::state::Overlay;
use gitmoot_ui::view::{DaemonStatus, JobState, RunState};
use gitmoot_ui::{Action, Event, Term, update};

#[test]
fn q_with_running_work_asks_and_detach_is_the_default() {
    let (mut s, snap) = setup();
    assert!(snap.counts.running > 0 && snap.daemon == DaemonStatus::Embedded);
    assert_eq!(update(&mut s, &snap, ch('q')), vec![]);
    assert!(text(&s, &snap).contains("Quit the control room?"));
    assert!(text(&s, &snap).contains("detach: quit now; the daemon keeps running the jobs"));
    assert_eq!(
        update(&mut s, &snap, key(KeyCode::Enter)),
        vec![Action::Term(Term::Detach)]
    );
    assert!(s.overlay.is_none());
}

#[test]
fn the_quit_question_counts_what_is_running_now() {
    let (mut s, mut snap) = setup();
    update(&mut s, &snap, ch('q'));
    let asked = format!("has {} running", snap.counts.running);
    assert!(text(&s, &snap).contains(&asked), "{}", text(&s, &snap));
    snap.counts.running = 0;
    update(&mut s, &snap, Event::SnapshotArrived);
    assert!(
        text(&s, &snap).contains("has 0 running"),
        "{}",
        text(&s, &snap)
    );
}

#[test]
fn ctrl_c_asks_too_and_a_second_ctrl_c_detaches() {
    let (mut s, snap) = setup();
    let cc = || ctrl('c');
    assert_eq!(update(&mut s, &snap, cc()), vec![]);
    assert_eq!(
        update(&mut s, &snap, cc()),
        vec![Action::Term(Term::Detach)]
    );
}

#[test]
fn esc_stays_and_kill_asks_the_daemon_to_stop() {
    let (mut s, snap) = setup();
    update(&mut s, &snap, ch('q'));
    assert_eq!(update(&mut s, &snap, key(KeyCode::Esc)), vec![]);
    assert!(s.overlay.is_none());
    update(&mut s, &snap, ch('q'));
    assert_eq!(
        update(&mut s, &snap, ch('k')),
        vec![Action::Term(Term::QuitKill)]
    );
    assert!(matches!(s.overlay, Some(Overlay::Stopping { kill: true })));
    assert!(text(&s, &snap).contains("stopping:"));
    // No way back once the kill runs; Esc keeps the frame.
    assert_eq!(update(&mut s, &snap, key(KeyCode::Esc)), vec![]);
    assert!(matches!(s.overlay, Some(Overlay::Stopping { kill: true })));
}

#[test]
fn wait_shows_what_is_left_and_quits_when_nothing_is() {
    let (mut s, mut snap) = setup();
    update(&mut s, &snap, ch('q'));
    assert_eq!(update(&mut s, &snap, ch('w')), vec![]);
    let n = snap.counts.running + snap.counts.queued;
    assert!(text(&s, &snap).contains(&format!("stopping: {n} job(s)")));
    let later = s.now_ms + 1;
    assert_eq!(update(&mut s, &snap, Event::Tick { now_ms: later }), vec![]);
    snap.counts.running = 0;
    snap.counts.queued = 0;
    assert_eq!(
        update(&mut s, &snap, Event::SnapshotArrived),
        vec![Action::Term(Term::Quit)]
    );
}

#[test]
fn nothing_running_or_not_our_daemon_quits_at_once() {
    let (mut s, mut snap) = setup();
    snap.counts.running = 0;
    snap.counts.queued = 0;
    assert_eq!(
        update(&mut s, &snap, ch('q')),
        vec![Action::Term(Term::Quit)]
    );
    let (mut s, mut snap) = setup();
    snap.daemon = DaemonStatus::Attached;
    assert_eq!(
        update(&mut s, &snap, ch('q')),
        vec![Action::Term(Term::Quit)]
    );
}

#[test]
fn an_aborted_run_has_its_own_glyph_and_name() {
    let (s, mut snap) = setup();
    for r in &mut snap.roots {
        r.state = RunState::Aborted;
    }
    let screen = text(&s, &snap);
    assert!(screen.contains('⊗'), "{screen}");
    assert!(screen.contains("aborted"), "{screen}");
}

#[test]
fn queued_rows_never_spin_and_say_when_nothing_will_run_them() {
    let (s, mut snap) = setup();
    for r in &mut snap.roots {
        r.state = RunState::Running;
        let mut stack = vec![&mut r.tree];
        while let Some(n) = stack.pop() {
            n.state = JobState::Queued;
            n.started_ms = None;
            n.finished_ms = None;
            stack.extend(n.children.iter_mut());
        }
    }
    snap.counts.running = 0;
    let screen = text(&s, &snap);
    for spin in ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] {
        assert!(
            !screen.contains(spin),
            "a spinner on a queued row:\n{screen}"
        );
    }
    assert!(!screen.contains("will not run ·"), "{screen}");
    snap.daemon = DaemonStatus::Lost;
    let screen = text(&s, &snap);
    assert!(screen.contains("will not run ·"), "{screen}");
    assert!(
        screen.contains("daemon gone: jobs will not run"),
        "{screen}"
    );
}
