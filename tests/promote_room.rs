//! Issue 15.6: the control room's promote dialog, unzoomed, in a real terminal: it quotes
//! the message and offers ask / review / implement, and the choice made with the keys is
//! the job's action.

mod support;

use std::time::Duration;

use support::tmux::Tmux;
use support::{gitmoot, json, shell_agent};

const WAIT: Duration = Duration::from_secs(60);

#[test]
fn the_promote_dialog_shows_its_choices_unzoomed_and_promotes_the_chosen_action() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(
        &home,
        "scout",
        r#"cat > /dev/null
echo '{"gitmoot_result": {"decision": "approved", "summary": "limits live in config/limits.toml"}}'"#,
        &["--repo", "acme/api"],
    );
    gitmoot(&home)
        .args(["chat", "create", "planning", "--repo", "acme/api"])
        .assert()
        .success();
    gitmoot(&home)
        .args([
            "chat",
            "send",
            "planning",
            "@scout where do the rate limits live?",
        ])
        .assert()
        .success();
    let t = Tmux::control_room("promote", &home, "--no-daemon");
    t.wait_for("Nothing waits for you", WAIT);
    t.keys(&["4", "Enter"]);
    t.wait_for("@scout where do the rate limits", WAIT);
    t.keys(&["p"]);
    let screen = t.wait_for("Promote to a job", WAIT);
    for choice in ["ask", "review", "implement"] {
        assert!(screen.contains(choice), "no {choice:?} choice:\n{screen}");
    }
    t.keys(&["j", "Enter"]);
    let mut jobs = serde_json::Value::Null;
    let start = std::time::Instant::now();
    while start.elapsed() < WAIT {
        jobs = json(&home, &["job", "list", "--json"]);
        if jobs.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let job = &jobs[0];
    assert_eq!(job["agent"], "scout", "{jobs}");
    assert_eq!(job["action"], "review", "{jobs}");
    t.keys(&["q"]);
    t.wait_for("TUI-EXITED", WAIT);
}
