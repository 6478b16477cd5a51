//! Forecasts in the control room, end to end: the real binary in tmux on a real git
//! repository. Rows and Attention tell a clean overlap from a same-line conflict; once one
//! of a conflicting pair lands, the other's conflict with the landed work stays an
//! Attention item and its land dialog says so before `y`.

use std::time::Duration;

use gitmoot_test_support::tmux::Tmux;
use gitmoot_test_support::write::WriteHome;

const WAIT: Duration = Duration::from_secs(60);

/// The Jobs pane's row of the finished `job`, when it carries a forecast mark.
fn line_of(screen: &str, job: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(&format!("✓ {job} ⚠")))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn rows_and_attention_tell_an_overlap_from_a_conflict_and_the_land_dialog_names_landed_work() {
    let w = WriteHome::new("");
    let a = w.implement(
        "printf 'ONE\\ntwo\\nthree\\n' > lib.txt; git commit -qam a",
        &[],
    );
    let b = w.implement(
        "printf 'one\\ntwo\\nTHREE\\n' > lib.txt; git commit -qam b",
        &[],
    );
    let c = w.implement(
        "printf 'uno\\ntwo\\nthree\\n' > lib.txt; git commit -qam c",
        &[],
    );
    w.h.daemon_until_idle(3);

    let cmd = format!(
        "sh -c '{} --home {} tui --no-daemon; echo TUI-EXITED; sleep 30'",
        gitmoot_test_support::bin(),
        w.h.path().display()
    );
    let state = w.h.state_dir();
    let t = Tmux::start("forecast-room", &cmd, &[("XDG_STATE_HOME", &state)]);
    t.wait_for(&c, WAIT);
    let screen = t.wait_for("⚠ conflicts", WAIT);
    // b merges cleanly with both; a and c change line 1 apart.
    assert!(line_of(&screen, &b).contains("⚠ overlaps"), "{screen}");
    assert!(line_of(&screen, &a).contains("⚠ conflicts"), "{screen}");
    assert!(line_of(&screen, &c).contains("⚠ conflicts"), "{screen}");
    assert!(screen.contains("✗ conflict"), "{screen}");

    w.h.ok(&["job", "land", &a]);
    t.wait_for("⇡ landed", WAIT);
    let screen = t.wait_for(&format!("{c} ⇄ main"), WAIT);
    assert!(line_of(&screen, &c).contains("⚠ conflicts"), "{screen}");

    // c's drawer: the land question says what landed work it conflicts with, before `y`.
    t.keys(&["2"]);
    t.keys(&["/"]);
    t.wait_for("Esc clear", WAIT);
    t.keys(&["-l", &c]);
    t.keys(&["Enter"]);
    t.wait_gone("Esc clear", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("│ diff", WAIT);
    t.keys(&["M"]);
    t.wait_for(&format!("Land {c} on main (auto)?"), WAIT);
    let dialog = t.wait_for("would conflict in lib.txt:1 with work landed on main", WAIT);
    assert!(dialog.contains("rebase it first"), "{dialog}");
    t.keys(&["n"]);
    t.wait_gone(&format!("Land {c} on main"), WAIT);
    assert_eq!(
        std::fs::read_to_string(w.repo.join("lib.txt")).unwrap(),
        "ONE\ntwo\nthree\n"
    );
    t.keys(&["q"]);
    t.wait_for("TUI-EXITED", WAIT);
}
