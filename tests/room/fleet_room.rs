//! Issue 28's fleet work in a real terminal: marking rows of the job tree and acting on
//! all of them with one confirmation.

use gitmoot_test_support as support;

use std::path::Path;
use std::time::Duration;

use support::tmux::Tmux;
use support::{job_state, shell_agent, stdout};

const WAIT: Duration = Duration::from_secs(60);

fn submit(home: &Path, prompt: &str) -> String {
    stdout(home, &["job", "run", "--agent", "scout", prompt])
        .trim()
        .to_string()
}

#[test]
fn marking_three_rows_and_cancelling_them_cancels_those_three_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "scout", "cat >/dev/null", &[]);
    // Oldest first; the tree shows them newest first, so the untouched one is last.
    let spared = submit(&home, "spared");
    let marked: Vec<String> = ["first", "second", "third"]
        .iter()
        .map(|p| submit(&home, p))
        .collect();

    // No daemon: the jobs stay queued while the operator marks them.
    let t = Tmux::control_room("marks", &home, "--no-daemon");
    t.wait_for(&spared, WAIT);
    t.keys(&["2", "g", "m", "m", "m"]);
    t.wait_for("3 marked", WAIT);
    t.keys(&["C"]);
    let dialog = t.wait_for("cancel 3 marked job(s)?", WAIT);
    for id in &marked {
        assert!(
            dialog.contains(&format!("cancel {id} (queued, scout)")),
            "{dialog}"
        );
    }
    assert!(!dialog.contains(&format!("cancel {spared}")), "{dialog}");
    t.keys(&["y"]);
    t.wait_for("cancel: 3 done, 0 refused", WAIT);
    for id in &marked {
        assert_eq!(job_state(&home, id), "cancelled", "{id}");
    }
    assert_eq!(job_state(&home, &spared), "queued");
    t.quit(WAIT);
}
