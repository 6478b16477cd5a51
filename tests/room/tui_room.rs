//! A control room you can leave running (issue 14), end to end: the real binary in tmux.
//! Quitting with work asks (detach keeps the work going, wait shows what is left),
//! a closed terminal detaches, Ctrl-z/fg comes back working, and the status bar follows a
//! daemon that goes away — saying so under `--no-daemon`, taking over otherwise. A failure
//! escalation resumed with the retry, continue and abort keys, and a kill from the keyboard
//! winning over a job budget that already tripped.

use gitmoot_test_support as support;

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use support::tmux::Tmux;
use support::{bin, gitmoot, json, run_state, shell_agent, spawn_daemon, stdout, wait_state};

const WAIT: Duration = Duration::from_secs(60);

/// A shell agent that sleeps `secs` before approving.
fn sleeper(home: &Path, name: &str, secs: u32) {
    shell_agent(
        home,
        name,
        &format!(
            "cat >/dev/null\nsleep {secs}\necho '{{\"gitmoot_result\": {{\"decision\": \"approved\", \"summary\": \"slept\"}}}}'"
        ),
        &[],
    );
}

fn submit(home: &Path, agent: &str, prompt: &str) -> String {
    let out = gitmoot(home)
        .args(["job", "run", "--agent", agent, prompt])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn daemon_pid(home: &Path) -> Option<i32> {
    // `daemon status --json` prints the pid as a number (issue 16).
    json(home, &["daemon", "status", "--json"])["pid"]
        .as_i64()
        .map(|p| p as i32)
}

/// Stops whatever daemon still runs the home when the test ends, pass or fail.
struct StopDaemon(PathBuf);

impl Drop for StopDaemon {
    fn drop(&mut self) {
        if let Some(pid) = daemon_pid(&self.0) {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// A control room over one root job of a `slow` agent that sleeps `secs`, once its status
/// bar shows the job running. Fields drop in order: the terminal, then the daemon, then the
/// folder, as the locals they stand for did.
struct OneRunning {
    t: Tmux,
    root: String,
    _stop: StopDaemon,
    home: PathBuf,
    _dir: tempfile::TempDir,
}

/// `config`, when given, is the home's config.toml before the job is submitted.
fn one_running(name: &str, secs: u32, prompt: &str, config: Option<&str>) -> OneRunning {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let stop = StopDaemon(home.clone());
    sleeper(&home, "slow", secs);
    if let Some(config) = config {
        std::fs::write(home.join("config.toml"), config).unwrap();
    }
    let root = submit(&home, "slow", prompt);
    let t = Tmux::control_room(name, &home, "");
    t.wait_for("1 running", WAIT);
    OneRunning {
        t,
        root,
        _stop: stop,
        home,
        _dir: dir,
    }
}

/// Asks to quit with work running and answers the question with `choice`.
fn quit_choosing(t: &Tmux, choice: &str) {
    t.keys(&["q"]);
    t.wait_for("Quit the control room?", WAIT);
    t.keys(&[choice]);
}

#[test]
fn quitting_with_a_running_job_detaches_and_the_job_still_succeeds() {
    let r = one_running("detach", 3, "Long haul", None);
    quit_choosing(&r.t, "d");
    let screen = r.t.wait_for("TUI-EXITED", WAIT);
    assert!(screen.contains("detached: the daemon"), "{screen}");
    wait_state(&r.home, &r.root, "done", WAIT);
    let job = json(&r.home, &["job", "show", &r.root, "--json"]);
    assert_eq!(job["state"], "succeeded", "{job}");
}

#[test]
fn wait_shows_what_is_left_then_quits_and_stops_the_daemon() {
    let r = one_running("wait", 3, "Finish first", None);
    quit_choosing(&r.t, "w");
    r.t.wait_for("stopping: 1 job(s)", WAIT);
    r.t.wait_for("TUI-EXITED", WAIT);
    assert_eq!(run_state(&r.home, &r.root), "done");
    assert_eq!(
        daemon_pid(&r.home),
        None,
        "the daemon kept running after wait"
    );
}

#[test]
fn kill_stops_the_daemon_with_its_graceful_shutdown() {
    let grace = "[daemon]\nshutdown_grace = \"1s\"\n";
    let r = one_running("kill", 30, "Too long", Some(grace));
    quit_choosing(&r.t, "k");
    r.t.wait_for("TUI-EXITED", WAIT);
    let job = json(&r.home, &["job", "show", &r.root, "--json"]);
    assert_eq!(job["state"], "failed", "{job}");
    assert!(
        job["error"].as_str().unwrap().contains("daemon shut down"),
        "{job}"
    );
}

#[test]
fn a_closed_terminal_detaches_and_the_job_still_succeeds() {
    let r = one_running("hangup", 3, "Survive the hang-up", None);
    // Killing the tmux server hangs up the control room's terminal.
    drop(r.t);
    wait_state(&r.home, &r.root, "done", WAIT);
}

#[test]
fn ctrl_z_then_fg_comes_back_redrawn_with_working_input() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let _stop = StopDaemon(home.clone());
    stdout(&home, &["init"]);
    let t = Tmux::start(
        "suspend",
        "env PS1='READY> ' bash --norc --noprofile -i",
        &[],
    );
    t.keys(&[
        "-l",
        &format!("{} --home {} tui; echo EXIT=$?", bin(), home.display()),
    ]);
    t.keys(&["Enter"]);
    t.wait_for("daemon embedded", WAIT);
    t.keys(&["C-z"]);
    t.wait_for("Stopped", WAIT);
    t.keys(&["-l", "fg"]);
    t.keys(&["Enter"]);
    t.wait_for("daemon embedded", WAIT);
    t.keys(&["?"]);
    // The help's own title: its first rows are the focused pane's keys, whose count moves.
    t.wait_for("j/k scroll · Esc close", WAIT);
    t.keys(&["Escape"]);
    t.wait_gone("j/k scroll · Esc close", WAIT);
    t.keys(&["q"]);
    // Bash printed EXIT=148 when the job stopped; `fg` returns the real exit status.
    t.wait_for("tui\nREADY>", WAIT);
    t.keys(&["-l", "echo FG=$?"]);
    t.keys(&["Enter"]);
    let screen = t.wait_for("FG=0", WAIT);
    assert!(!screen.contains("cursor position"), "{screen}");
}

/// A foreground `gitmoot daemon run` on the home, as another terminal would run it.
fn outside_daemon(home: &Path) -> Child {
    let child = spawn_daemon(home, &[]);
    let start = Instant::now();
    while daemon_pid(home) != Some(child.id() as i32) {
        assert!(start.elapsed() < WAIT, "the outside daemon never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

fn stop(mut child: Child) {
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    child.wait().unwrap();
}

#[test]
fn a_vanished_daemon_is_reported_and_queued_rows_say_they_will_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let _stop = StopDaemon(home.clone());
    stdout(&home, &["init"]);
    let outside = outside_daemon(&home);
    let t = Tmux::control_room("vanish", &home, "--no-daemon");
    t.wait_for("daemon attached (viewer)", WAIT);
    stop(outside);
    t.wait_for("daemon gone: jobs will not run", WAIT);
    sleeper(&home, "slow", 1);
    let root = submit(&home, "slow", "Nobody runs me");
    let screen = t.wait_for("  will not run", WAIT);
    let row = screen
        .lines()
        .find(|l| l.contains(&root) && l.contains("will not run"))
        .unwrap_or_else(|| panic!("no row for {root}: {screen}"));
    // A spinner means running and nothing else: the queued root shows the queued glyph.
    assert!(row.contains('○'), "{row}");
    assert_eq!(run_state(&home, &root), "running");
    t.quit(WAIT);
}

#[test]
fn the_control_room_takes_over_when_the_attached_daemon_stops() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let _stop = StopDaemon(home.clone());
    sleeper(&home, "quick", 0);
    let outside = outside_daemon(&home);
    let t = Tmux::control_room("takeover", &home, "");
    t.wait_for("daemon attached (viewer)", WAIT);
    stop(outside);
    t.wait_for("daemon embedded (took over)", WAIT);
    let root = submit(&home, "quick", "Run by the new daemon");
    wait_state(&home, &root, "done", WAIT);
    t.quit(WAIT);
}

#[test]
fn a_detached_daemon_stops_once_its_home_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    stdout(&home, &["init"]);
    let mut daemon = outside_daemon(&home);
    let start = Instant::now();
    // The daemon keeps writing its status file, so removal can race with it.
    while let Err(e) = std::fs::remove_dir_all(&home) {
        assert!(start.elapsed() < WAIT, "could not remove the home: {e}");
    }
    while daemon.try_wait().unwrap().is_none() {
        if start.elapsed() > WAIT {
            let _ = daemon.kill();
            panic!("the daemon kept running for a removed home");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A coordinator that fans out one escalate_human leg, then wraps up in its finalize.
const COORDINATOR: &str = r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{"gitmoot_result": {"decision": "approved", "summary": "fan out", "delegations": [{"id": "risky", "agent": "flaky", "action": "ask", "prompt": "try it", "failure_policy": "escalate_human"}]}}'
else
echo '{"gitmoot_result": {"decision": "approved", "summary": "wrapped up what completed"}}'
fi"#;

/// A control room over a `coord` tree whose `flaky` leg (running `flaky`) failed and
/// escalated to the human, the Attention pane focused on it. Fields drop in order: the
/// terminal, then the daemon, then the folder.
struct Escalated {
    t: Tmux,
    root: String,
    _stop: StopDaemon,
    home: PathBuf,
    _dir: tempfile::TempDir,
}

fn escalated(name: &str, flaky: &str) -> Escalated {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let stop = StopDaemon(home.clone());
    shell_agent(&home, "coord", COORDINATOR, &[]);
    shell_agent(&home, "flaky", flaky, &[]);
    let root = submit(&home, "coord", "Risky plan");
    let t = Tmux::control_room(name, &home, "");
    wait_state(&home, &root, "awaiting_human", WAIT);
    t.wait_for("failure", WAIT);
    t.keys(&["1"]);
    Escalated {
        t,
        root,
        _stop: stop,
        home,
        _dir: dir,
    }
}

/// Types `text` into the open instructions form and submits it.
fn instruct(t: &Tmux, text: &str) {
    t.wait_for("optional instructions for the agent", WAIT);
    t.keys(&["-l", text]);
    t.keys(&["Enter"]);
}

/// The prompt of the first job of `kind` in the tree rooted at `root`.
fn prompt_of(home: &Path, root: &str, kind: &str) -> String {
    let tree = json(home, &["job", "tree", root, "--json"]);
    let kids = tree["tree"]["children"].as_array().unwrap();
    let id = kids
        .iter()
        .find(|k| k["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {tree}"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    json(home, &["job", "show", &id, "--json"])["prompt"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn retry_from_the_control_room_reruns_the_leg_with_the_instructions() {
    // The leg fails until the human's guidance reaches its prompt.
    let e = escalated(
        "retry",
        "grep -q 'use the mirror' \"$GITMOOT_PROMPT_FILE\" || exit 3\ncat >/dev/null\necho '{\"gitmoot_result\": {\"decision\": \"approved\", \"summary\": \"fetched\"}}'",
    );
    e.t.keys(&["r"]);
    instruct(&e.t, "use the mirror");
    wait_state(&e.home, &e.root, "done", WAIT);
    let legs: Vec<serde_json::Value> = support::jobs(&e.home)
        .into_iter()
        .filter(|j| j["kind"] == "leg")
        .collect();
    assert_eq!(legs.len(), 2, "{legs:?}");
    assert!(legs.iter().any(|l| l["state"] == "succeeded"), "{legs:?}");
    e.t.quit(WAIT);
}

#[test]
fn continue_from_the_control_room_proceeds_human_approved_with_the_text() {
    let e = escalated("continue", "cat >/dev/null\nexit 3");
    e.t.keys(&["c"]);
    instruct(&e.t, "ship what completed");
    wait_state(&e.home, &e.root, "done", WAIT);
    let prompt = prompt_of(&e.home, &e.root, "continuation");
    assert!(
        prompt.contains("Human-approved continuation") && prompt.contains("ship what completed"),
        "{prompt}"
    );
    e.t.quit(WAIT);
}

/// A coordinator whose fan-out needs three jobs, and whose finalize takes a while.
const OVER_BUDGET: &str = r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{"gitmoot_result": {"decision": "approved", "summary": "fan out", "delegations": [{"id": "wide", "agent": "coord", "action": "ask", "prompt": "look"}]}}'
else
sleep 6
echo '{"gitmoot_result": {"decision": "approved", "summary": "finalized"}}'
fi"#;

#[test]
fn a_kill_from_the_control_room_wins_over_a_tripped_job_budget() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let _stop = StopDaemon(home.clone());
    // The fan-out would take the tree past two jobs: the cap trips and its finalize runs;
    // the operator kills the root while it does. The run ends killed, not done.
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        "[orchestrate]\nmax_delegation_total_jobs = 2\n",
    )
    .unwrap();
    shell_agent(&home, "coord", OVER_BUDGET, &[]);
    let root = submit(&home, "coord", "Budgeted plan");
    let t = Tmux::control_room("kill-budget", &home, "");
    // The root itself runs first: wait for the finalize the tripped cap enqueued.
    let start = Instant::now();
    while !support::jobs(&home)
        .iter()
        .any(|j| j["kind"] == "finalize" && j["state"] == "running")
    {
        assert!(start.elapsed() < WAIT, "the finalize never ran");
        std::thread::sleep(Duration::from_millis(100));
    }
    let events = stdout(&home, &["job", "events", &root]);
    assert!(events.contains("per-root job budget"), "{events}");
    t.wait_for("1 running", WAIT);
    t.kill_shown_root(WAIT);
    wait_state(&home, &root, "killed", WAIT);
    let tree = json(&home, &["job", "tree", &root, "--json"]);
    assert_eq!(tree["run"]["killed"], true, "{tree}");
    let fin = &tree["tree"]["children"][0];
    assert_eq!(fin["kind"], "finalize", "{tree}");
    assert_eq!(
        fin["state"], "succeeded",
        "the running finalize finishes: {tree}"
    );
    // Quit once the screen has caught up with the settled finalize: a `q` on the frame
    // before it asks whether to stop the daemon's running job.
    t.wait_for("0 running", WAIT);
    t.quit(WAIT);
}

#[test]
fn an_abort_from_the_control_room_ends_the_run_aborted_not_done() {
    let e = escalated("abort", "cat >/dev/null\nexit 3");
    let (t, home, root) = (&e.t, &e.home, &e.root);
    t.keys(&["x"]);
    t.wait_for("the run ends as aborted", WAIT);
    t.keys(&["y"]);
    wait_state(home, root, "aborted", WAIT);
    let screen = t.wait_for("⊗", WAIT);
    assert!(
        screen
            .lines()
            .any(|l| l.contains('⊗') && l.contains(root.as_str())),
        "{screen}"
    );
    let show = json(home, &["job", "show", root, "--json"]);
    assert_eq!(show["run_state"], "aborted", "{show}");
    let events = gitmoot(home)
        .args(["job", "events", root])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&events.stdout).contains("run aborted"));
    t.quit(WAIT);
}
