//! Issue 15.6: the control room's promote dialog, unzoomed, in a real terminal: it quotes
//! the message and offers ask / review / implement, and the choice made with the keys is
//! the job's action. Issue 16: the promoted message is tagged, not copied, and the human's
//! unread badge clears once the thread is on screen.

use gitmoot_test_support as support;

use std::time::Duration;

use support::tmux::Tmux;
use support::{json, shell_agent, stdout};

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
    stdout(&home, &["chat", "create", "planning", "--repo", "acme/api"]);
    stdout(
        &home,
        &[
            "chat",
            "send",
            "planning",
            "@scout where do the rate limits live?",
        ],
    );
    stdout(
        &home,
        &["chat", "send", "planning", "--as", "scout", "looking now"],
    );
    let unread =
        |home: &std::path::Path| json(home, &["chat", "list", "--json"])[0]["unread"].clone();
    assert_eq!(
        unread(&home),
        1,
        "the agent's reply is unread for the human"
    );
    let t = Tmux::control_room("promote", &home, "--no-daemon");
    t.wait_for("✉ 1 unread", WAIT);
    t.keys(&["4", "Enter"]);
    t.wait_for("@scout where do the rate limits", WAIT);
    t.wait_gone("✉ 1 unread", WAIT);
    assert_eq!(unread(&home), 0, "reading the thread on screen cleared it");
    t.keys(&["k", "p"]);
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
    let msgs = json(&home, &["chat", "show", "planning", "--json"]);
    let msgs = msgs["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(msgs.len(), 2, "no copy of the promoted message: {msgs:?}");
    assert_eq!(msgs[0]["promoted_job_id"], job["id"], "{msgs:?}");
    t.quit(WAIT);
}
