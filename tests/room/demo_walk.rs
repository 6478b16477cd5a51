//! README's tour walked in the real demo: `gitmoot demo` in a tmux pane at 80×24 and at
//! 120×36, each step's keys pressed as README lists them (read from the keymap, Tab
//! completion in the `:` line included), each step's screen waited for, the main tree run
//! to `done` and the coder's work landed. And README's list is the one the tour generates.

use gitmoot_test_support as support;

use std::path::Path;
use std::time::Duration;

use gitmoot_ui::keymap::{Context, Keymap, Press, TOUR, key_name};
use support::tmux::Tmux;

const WAIT: Duration = Duration::from_secs(90);

/// tmux's `send-keys` arguments for a key as the keymap names it (`Esc`, `↓`, `Ctrl-c`, `a`).
fn tmux_key(name: &str) -> Vec<String> {
    let named = match name {
        "Esc" => "Escape",
        "↓" => "Down",
        "↑" => "Up",
        "Enter" => "Enter",
        "Tab" => "Tab",
        "Shift-Tab" => "BTab",
        _ => {
            if let Some(c) = name.strip_prefix("Ctrl-") {
                return vec![format!("C-{c}")];
            }
            return vec!["-l".into(), "--".into(), name.into()];
        }
    };
    vec![named.into()]
}

/// Presses `key`. A key sent right after Esc can reach the program in the same read and
/// parse as Alt+key, so after Esc it waits for the screen to change (Esc always closes
/// something in the tour).
fn press(t: &Tmux, key: &str) {
    let args = tmux_key(key);
    let before = t.screen();
    t.keys(&args.iter().map(String::as_str).collect::<Vec<_>>());
    if key == "Esc" {
        let start = std::time::Instant::now();
        while t.screen() == before {
            assert!(start.elapsed() < WAIT, "Esc changed nothing:\n{before}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Whether a selected row (`▌`) of some pane shows `row`.
fn selected(screen: &str, row: &str) -> bool {
    screen.lines().any(|l| {
        l.split('▌').skip(1).any(|rest| {
            rest.split(['│', '┃'])
                .next()
                .is_some_and(|r| r.contains(row))
        })
    })
}

/// Presses `down` until the selected row shows `row`; when the selection stops moving (the
/// last row, or settled trees folding under it moved the row above), it turns to `up`.
fn select(t: &Tmux, keymap: &Keymap, row: &str) {
    t.wait_for(row, WAIT);
    let mut dir = "down";
    for _ in 0..40 {
        let screen = t.screen();
        if selected(&screen, row) {
            return;
        }
        press(t, &key_name(keymap, Context::Global, dir));
        std::thread::sleep(Duration::from_millis(300));
        if t.screen() == screen {
            dir = if dir == "down" { "up" } else { "down" };
        }
    }
    panic!("no row shows {row:?}:\n{}", t.screen());
}

/// The coder's review round has ended (its second attempt succeeded): the tour lands it
/// only then, as README says.
fn wait_round_ended(home: &Path) {
    let start = std::time::Instant::now();
    loop {
        let jobs = support::json(home, &["job", "list", "--json"]);
        let ended = jobs
            .as_array()
            .into_iter()
            .flatten()
            .any(|j| j["agent"] == "coder" && j["state"] == "succeeded" && j["attempt"] == 2);
        if ended {
            return;
        }
        assert!(start.elapsed() < WAIT, "the review round did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until a line shows each `*`-separated part of `shows`, in order.
fn wait_shown(t: &Tmux, shows: &str) {
    let parts: Vec<&str> = shows.split('*').collect();
    let on_line = |l: &str| {
        let mut rest = l;
        parts.iter().all(|p| match rest.find(p) {
            Some(i) => {
                rest = &rest[i + p.len()..];
                true
            }
            None => false,
        })
    };
    let start = std::time::Instant::now();
    while !t.screen().lines().any(on_line) {
        assert!(
            start.elapsed() < WAIT,
            "{shows:?} not shown:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn walk(size: (u16, u16)) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("demo");
    let cmd = format!(
        "sh -c '{} --home {} demo --speed 0; echo WALK-EXITED; sleep 30'",
        support::bin(),
        home.display()
    );
    let t = Tmux::start_sized(&format!("walk{}", size.0), &cmd, &[], size);
    // Both of the main tree's gates are open before the tour starts.
    t.wait_for("2 waiting", WAIT);
    let keymap = Keymap::builtin();
    for step in TOUR {
        let lands = step
            .presses
            .iter()
            .any(|p| matches!(p, Press::Key(_, "land")));
        if lands {
            wait_round_ended(&home);
            // The room may not have read the round's end yet: the drawer then says it is
            // still reading the job's work, and the operator presses again.
            let land = key_name(&keymap, Context::Detail, "land");
            let start = std::time::Instant::now();
            while !t.screen().contains("Land job-") {
                assert!(start.elapsed() < WAIT, "no land dialog:\n{}", t.screen());
                press(&t, &land);
                std::thread::sleep(Duration::from_millis(500));
            }
            press(&t, &key_name(&keymap, Context::Dialog, "confirm"));
            wait_shown(&t, step.shows);
            continue;
        }
        for p in step.presses {
            match p {
                Press::Key(ctx, command) => press(&t, &key_name(&keymap, *ctx, command)),
                Press::Select(_, row) => select(&t, &keymap, row),
                Press::Type(text) => t.keys(&["-l", "--", text]),
                Press::Line(key) => press(&t, key),
            }
        }
        if !step.shows.is_empty() {
            wait_shown(&t, step.shows);
        }
    }
    // Quitting with work still running asks first; Enter detaches.
    let start = std::time::Instant::now();
    while !t.screen().contains("WALK-EXITED") {
        if t.screen().contains("detach") {
            t.keys(&["Enter"]);
        }
        assert!(start.elapsed() < WAIT, "not quit:\n{}", t.screen());
        std::thread::sleep(Duration::from_millis(200));
    }
    let main = main_root(&home);
    assert_eq!(support::run_state(&home, &main), "done");
}

/// The demo's main tree: the root that asked the question.
fn main_root(home: &Path) -> String {
    support::jobs(home)
        .into_iter()
        .find(|j| {
            j["kind"] == "root" && j["prompt"].as_str().is_some_and(|p| p.starts_with("Plan"))
        })
        .and_then(|j| j["id"].as_str().map(String::from))
        .expect("the demo's main tree")
}

#[test]
fn demo_walk_follows_the_readme_tour_at_80x24() {
    walk((80, 24));
}

#[test]
fn demo_walk_follows_the_readme_tour_at_120x36() {
    walk((120, 36));
}

/// README's tour is the generated one (`UPDATE_SCREENSHOTS=1` rewrites it in place).
#[test]
fn demo_walk_is_the_readme_tour() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = readme
        .split_once("<!-- tour:begin -->\n")
        .expect("README has the tour markers");
    let (listed, tail) = rest
        .split_once("<!-- tour:end -->")
        .expect("README has the tour markers");
    let tour = gitmoot_ui::tour_markdown();
    if std::env::var("UPDATE_SCREENSHOTS").as_deref() == Ok("1") {
        let fresh = format!("{head}<!-- tour:begin -->\n{tour}<!-- tour:end -->{tail}");
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    assert_eq!(
        listed, tour,
        "README's tour is stale: run UPDATE_SCREENSHOTS=1 cargo test --test room demo_walk"
    );
}
