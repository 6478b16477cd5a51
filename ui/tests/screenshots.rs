//! README screenshots: each pane (and the key overlays) rendered from the fixture at
//! 120×36 with the fixed clock. With `UPDATE_SCREENSHOTS=1` this writes
//! `screenshots/<name>.txt` and `.svg`; otherwise it fails when a committed `.txt` differs
//! from today's rendering, so the pictures in the README cannot go stale.

mod common;

use std::path::PathBuf;

use common::*;
use gitmoot_ui::Theme;

const SHOTS: [&str; 9] = [
    "attention",
    "tree",
    "dag",
    "threads",
    "detail",
    "help",
    "kill_dialog",
    "answer_form",
    "compose",
];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../screenshots")
}

#[test]
fn screenshots_match_the_committed_files() {
    let update = std::env::var("UPDATE_SCREENSHOTS").as_deref() == Ok("1");
    let scenes = scenes();
    let mut stale = Vec::new();
    for name in SHOTS {
        let (_, state, snap) = scenes
            .iter()
            .find(|(n, _, _)| *n == name)
            .expect("scene exists");
        let buf = buffer(state, snap, &Theme::default_dark());
        let txt = buffer_text(&buf);
        let txt_path = dir().join(format!("{name}.txt"));
        if update {
            std::fs::write(&txt_path, &txt).unwrap();
            std::fs::write(
                dir().join(format!("{name}.svg")),
                gitmoot_ui::svg::buffer_to_svg(&buf),
            )
            .unwrap();
        } else {
            let committed = std::fs::read_to_string(&txt_path).unwrap_or_default();
            if committed != txt {
                stale.push(name);
            }
            assert!(
                dir().join(format!("{name}.svg")).exists(),
                "{name}.svg missing"
            );
        }
    }
    assert!(
        stale.is_empty(),
        "stale screenshots {stale:?}: run UPDATE_SCREENSHOTS=1 cargo test -p gitmoot-ui --test screenshots"
    );
}

/// `screenshots/keys.md` is the README's keys table, generated from the built-in keymap.
#[test]
fn keys_table_matches_the_keymap() {
    let path = dir().join("keys.md");
    let md = gitmoot_ui::keys_markdown();
    if std::env::var("UPDATE_SCREENSHOTS").as_deref() == Ok("1") {
        std::fs::write(&path, &md).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed, md,
        "stale keys table: run UPDATE_SCREENSHOTS=1 cargo test -p gitmoot-ui --test screenshots"
    );
}
