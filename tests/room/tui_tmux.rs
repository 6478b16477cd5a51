//! The control room end to end: the real binary in a real terminal (tmux), scripted shell
//! agents, keystrokes in, `job … --json` out.

use gitmoot_test_support as support;

use std::path::Path;
use std::time::Duration;

use support::tmux::Tmux;
use support::{gitmoot, json, shell_agent, stdout, wait_state};

const WAIT: Duration = Duration::from_secs(60);

/// A shell agent that ignores its prompt on stdin.
fn agent(home: &Path, name: &str, script: &str) {
    shell_agent(home, name, &format!("cat >/dev/null\n{script}"), &[]);
}

/// Submits a root job to `agent`; returns whatever `job run` printed, trimmed.
fn submit(home: &Path, agent: &str, prompt: &str) -> String {
    let out = gitmoot(home)
        .args(["job", "run", "--agent", agent, prompt])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

const ASKER: &str = r#"if [ "$GITMOOT_JOB_KIND" = root ]; then
cat <<'JSON'
I need a decision first.
{"gitmoot_result": {"decision": "approved", "summary": "needs a rollout choice",
 "human_questions": [{"id": "rollout", "prompt": "Which rollout?", "choices": ["canary first", "all at once"]}]}}
JSON
else
printf '{"gitmoot_result": {"decision": "approved", "summary": "done with: %s"}}\n' "$(grep -o 'canary first\|all at once' "$GITMOOT_PROMPT_FILE" | head -1)"
fi"#;

#[test]
fn an_operator_answers_a_paused_tree_with_keystrokes_and_it_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    agent(&home, "asker", ASKER);
    let root = submit(&home, "asker", "Ship the change");

    let t = Tmux::control_room("answer", &home, "");
    t.wait_for("daemon embedded", WAIT);
    t.wait_for("Which rollout?", WAIT);
    wait_state(&home, &root, "awaiting_human", WAIT);
    t.keys(&["1"]);
    t.keys(&["a"]);
    t.wait_for("all at once", WAIT);
    t.keys(&["Down"]);
    t.keys(&["Enter"]);
    wait_state(&home, &root, "done", WAIT);
    let tree = json(&home, &["job", "tree", &root, "--json"]);
    let kids = tree["tree"]["children"].as_array().unwrap();
    let cont = kids
        .iter()
        .find(|k| k["kind"] == "continuation")
        .expect("an answer continuation ran");
    assert_eq!(cont["state"], "succeeded");
    assert_eq!(
        cont["result"]["summary"], "done with: all at once",
        "{tree}"
    );
    t.quit(WAIT);
}

#[test]
fn an_operator_kills_a_root_with_keystrokes() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    agent(
        &home,
        "slow",
        r#"[ "$GITMOOT_JOB_KIND" = root ] && sleep 2
echo '{"gitmoot_result": {"decision": "approved", "summary": "wrapped up"}}'"#,
    );
    let root = submit(&home, "slow", "Soak for a while");

    let t = Tmux::control_room("kill", &home, "");
    t.wait_for("Soak for a while", WAIT);
    t.kill_shown_root(WAIT);
    wait_state(&home, &root, "killed", WAIT);
    let tree = json(&home, &["job", "tree", &root, "--json"]);
    assert_eq!(tree["run"]["killed"], true);
    // Quit once the screen has caught up with the kill: a `q` on the frame before it asks
    // whether to stop the daemon's running job.
    t.wait_for("0 running", WAIT);
    t.quit(WAIT);
}

#[test]
fn quitting_gives_the_shell_its_terminal_back() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    stdout(&home, &["init"]);
    let t = Tmux::control_room("restore", &home, "");
    t.wait_for("daemon embedded", WAIT);
    t.quit(WAIT);
    let screen = t.wait_for("icanon", WAIT);
    // Cooked mode is back: canonical input and echo are on again.
    assert!(
        screen.contains(" icanon") && !screen.contains("-icanon"),
        "{screen}"
    );
    assert!(
        screen.contains(" echo ") && !screen.contains("-echo "),
        "{screen}"
    );
    assert!(
        !screen.contains("daemon embedded"),
        "the alternate screen was left: {screen}"
    );
}

/// What a control room writes to its terminal before its first full frame settles, with
/// the given colour environment.
fn first_frames(name: &str, env: &[(&str, &Path)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    stdout(&home, &["init"]);
    let cmd = format!(
        "sh -c '{} --home {} tui --no-daemon; echo TUI-EXITED; sleep 30'",
        support::bin(),
        home.display()
    );
    let t = Tmux::start(name, &cmd, env);
    let bytes = dir.path().join("out");
    t.pipe_output(&bytes);
    t.keys(&["C-l"]);
    t.wait_for("Nothing waits for you", WAIT);
    t.keys(&["4"]);
    t.wait_for("inboxes", WAIT);
    t.quit(WAIT);
    std::fs::read_to_string(&bytes).unwrap_or_default()
}

#[test]
fn gitmoot_colors_holds_a_truecolor_terminal_to_sixteen_colours() {
    let truecolor = Path::new("truecolor");
    let rgb = |s: &str| s.contains("38;2;") || s.contains("48;2;");
    let full = first_frames("colors-full", &[("COLORTERM", truecolor)]);
    assert!(rgb(&full), "a truecolor terminal gets 24-bit colours");
    let sixteen = first_frames(
        "colors-16",
        &[
            ("COLORTERM", truecolor),
            ("GITMOOT_COLORS", Path::new("16")),
        ],
    );
    assert!(!sixteen.is_empty(), "nothing was drawn");
    assert!(!rgb(&sixteen), "24-bit colour under GITMOOT_COLORS=16");
    // Crossterm writes the 16 named colours as indexed ones (`38;5;0` to `38;5;15`).
    let indexed: Vec<u32> = sixteen
        .split(";5;")
        .skip(1)
        .filter_map(|rest| rest.split(['m', ';']).next()?.parse().ok())
        .collect();
    assert!(
        !indexed.is_empty(),
        "no colour at all under GITMOOT_COLORS=16"
    );
    assert!(
        indexed.iter().all(|&i| i < 16),
        "256-colour codes under GITMOOT_COLORS=16: {indexed:?}"
    );
}
