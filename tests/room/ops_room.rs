//! Issue 15's control-room items in a real terminal (tmux): a new human gate rings the
//! bell and sends a desktop notification when the operator looks elsewhere, an answer
//! given with keystrokes is posted to the ask-gate thread, and an unroutable delegation
//! set is an attention item.

use gitmoot_test_support as support;

use std::path::Path;
use std::time::Duration;

use support::tmux::Tmux;
use support::{ASKER, gitmoot, json, shell_agent, wait_until};

const WAIT: Duration = Duration::from_secs(60);

fn submit(home: &Path, agent: &str, prompt: &str) -> String {
    let out = gitmoot(home)
        .args(["job", "run", "--agent", agent, "--repo", "acme/api", prompt])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_new_gate_rings_and_notifies_and_the_keyboard_answer_lands_in_its_thread() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "asker", ASKER, &["--repo", "acme/api"]);
    let captured = dir.path().join("pane.out");
    let t = Tmux::control_room("bell", &home, "");
    t.pipe_output(&captured);
    t.wait_for("daemon embedded", WAIT);
    t.keys(&["2"]);
    let root = submit(&home, "asker", "Ship the change");
    t.wait_for("Which rollout?", WAIT);
    wait_until("the bell and the desktop notification", WAIT, || {
        let bytes = std::fs::read(&captured).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        text.contains('\x07')
            && text.contains(&format!("\x1b]9;gitmoot: {root} asks a question"))
            && text.contains("\x1b]777;notify;gitmoot;gitmoot: ")
    });

    t.keys(&["1"]);
    t.keys(&["a"]);
    t.wait_for("all at once", WAIT);
    t.keys(&["Enter"]);
    wait_until("the answer is posted to the thread", WAIT, || {
        let threads = json(&home, &["chat", "list", "--json"]);
        threads[0]["title"]
            .as_str()
            .is_some_and(|t| t.ends_with("— answered"))
    });
    let slug = json(&home, &["chat", "list", "--json"])[0]["slug"]
        .as_str()
        .unwrap()
        .to_string();
    let msgs = json(&home, &["chat", "show", &slug, "--json"])["messages"].clone();
    assert_eq!(msgs[1]["author"], "human", "{msgs}");
    assert!(
        msgs[1]["body"].as_str().unwrap().starts_with("rollout: "),
        "{msgs}"
    );
    // The answer queues a continuation; quitting while it runs would ask what becomes of it.
    wait_until("the answered tree finishes", WAIT, || {
        json(&home, &["job", "show", &root, "--json"])["run_state"] == "done"
    });
    t.wait_for("0 running · 0 queued", WAIT);
    t.quit(WAIT);
}

#[test]
fn with_bell_and_desktop_off_a_new_gate_sends_neither() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "asker", ASKER, &["--repo", "acme/api"]);
    std::fs::write(
        home.join("config.toml"),
        "[notify]\nbell = false\ndesktop = false\n",
    )
    .unwrap();
    let captured = dir.path().join("pane.out");
    let t = Tmux::control_room("quiet", &home, "");
    t.pipe_output(&captured);
    t.wait_for("daemon embedded", WAIT);
    t.keys(&["2"]);
    submit(&home, "asker", "Ship the change");
    t.wait_for("Which rollout?", WAIT);
    // Let a few more frames through before reading what was sent.
    std::thread::sleep(Duration::from_millis(500));
    let text = String::from_utf8_lossy(&std::fs::read(&captured).unwrap()).into_owned();
    assert!(!text.contains("\x1b]9;"), "desktop notification sent");
    assert!(!text.contains('\x07'), "bell rung");
    t.quit(WAIT);
}

#[test]
fn an_unroutable_delegation_set_is_an_attention_item() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let gate = dir.path().join("gate");
    // The corrective round waits for the test, so the tree stays live on screen.
    let lead = format!(
        r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{{"gitmoot_result": {{"decision": "approved", "summary": "fan out", "delegations": [{{"id": "a", "agent": "codex", "action": "ask", "prompt": "look"}}]}}}}'
else
while [ ! -e {} ]; do sleep 0.05; done
echo '{{"gitmoot_result": {{"decision": "approved", "summary": "did it myself"}}}}'
fi"#,
        gate.display()
    );
    shell_agent(&home, "lead", &lead, &["--repo", "acme/api"]);
    let t = Tmux::control_room("preflight", &home, "");
    t.wait_for("daemon embedded", WAIT);
    let root = submit(&home, "lead", "Split the work");
    let screen = t.wait_for("PREFLIGHT_FAILED:", WAIT);
    assert!(screen.contains("nothing dispatched"), "{screen}");
    assert!(screen.contains(&root), "{screen}");
    std::fs::write(&gate, "").unwrap();
    t.wait_for("Nothing waits for you.", WAIT);
    t.quit(WAIT);
}
