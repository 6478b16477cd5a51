//! The real Claude Code and Codex CLIs (pinned in tests/npm, installed on first use) under
//! the daemon, inside a private network namespace, against model stand-ins the tests own:
//! the result decoded, tokens and cost captured, the tool call and its result in the job's
//! activity, `job logs --follow` printing the tool call while the job still runs, each
//! way a model API can fail ending the job clearly, and a `Write` tool call of an implement
//! job landing in the job's own worktree.

use gitmoot_test_support as support;
use gitmoot_test_support::daemon as daemon_support;
use gitmoot_test_support::real as real_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use daemon_support::TestHome;
use gitmoot::domain::JobState;
use real_support::standin::{self, Api, Mode, Standin};
use real_support::{Netns, cli_bin, cli_env};
use serde_json::Value;

struct Real {
    h: TestHome,
    ns: Netns,
    standin: Standin,
    env: Vec<(String, String)>,
}

impl Real {
    /// A home with one agent `ag` on the real CLI that `api` serves.
    fn new(api: Api, mode: Mode, hold: bool) -> Self {
        Self::with_command(api, mode, hold, "ls")
    }

    fn with_command(api: Api, mode: Mode, hold: bool, command: &str) -> Self {
        let bin = cli_bin();
        let ns = Netns::new();
        let standin = Standin::with_command(&ns, api, mode, hold, command);
        let h = TestHome::new();
        let scratch_home = h.file("user-home");
        let (runtime, policy, env) = match api {
            Api::Messages => (
                "claude",
                "workspace-write",
                cli_env(&scratch_home, Some(standin.port), None),
            ),
            // Codex's own sandbox needs kernel features a test namespace may lack; the
            // namespace is the sandbox here.
            Api::Responses => (
                "codex",
                "danger-full-access",
                cli_env(&scratch_home, None, Some(standin.port)),
            ),
        };
        h.config(&format!(
            "[runtimes.{runtime}]\npath = \"{}\"\n",
            bin.join(runtime).display()
        ));
        h.ok(&[
            "agent",
            "add",
            "ag",
            "--runtime",
            runtime,
            "--policy",
            policy,
        ]);
        Self {
            h,
            ns,
            standin,
            env,
        }
    }

    /// The daemon, inside the namespace, until its queue is empty.
    fn daemon(&self) -> Child {
        let mut cmd = Command::new(TestHome::bin());
        cmd.arg("--home")
            .arg(self.h.path())
            .args(["daemon", "run", "--until-idle", "--parallel", "1"])
            .envs(self.env.iter().cloned())
            .env("XDG_STATE_HOME", self.h.state_dir())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        self.ns.spawn(cmd)
    }

    fn run_to_end(&self, root: &str) -> gitmoot::store::jobs::Job {
        let out = self.daemon().wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "daemon: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.h.job(root)
    }

    fn logs(&self, id: &str) -> Vec<Value> {
        self.h
            .ok(&["job", "logs", id, "--json"])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn show(&self, id: &str) -> Value {
        serde_json::from_str(&self.h.ok(&["job", "show", id, "--json"])).unwrap()
    }
}

/// Runs one held job: `job logs --follow` must print the tool call while the stand-in
/// still holds the final answer (so the job is certainly running), then the job settles.
fn follow_a_held_job(api: Api, call_kind: &str, call_summary: &str) -> (Real, String, Vec<Value>) {
    let r = Real::new(api, Mode::Normal, true);
    let root = r.h.submit("ag", "list the files in this folder", &[]);
    let mut daemon = r.daemon();
    let mut follow =
        r.h.cmd(&["job", "logs", &root, "--follow", "--json"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
    let mut lines = BufReader::new(follow.stdout.take().unwrap()).lines();
    let mut seen: Vec<Value> = Vec::new();
    while !seen.iter().any(|v| v["kind"] == call_kind) {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("follow ended before a {call_kind}: {seen:?}"))
            .unwrap();
        seen.push(serde_json::from_str(&line).unwrap());
    }
    let call = seen.iter().find(|v| v["kind"] == call_kind).unwrap();
    assert_eq!(call["summary"], call_summary, "{seen:?}");
    assert_eq!(call["job"], root.as_str());
    assert_eq!(
        r.h.job(&root).state,
        JobState::Running,
        "the tool call is printed before the job ends"
    );
    r.standin.release();
    for line in lines {
        seen.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    assert!(
        follow.wait().unwrap().success(),
        "--follow exits 0 once the job settles"
    );
    assert!(daemon.wait().unwrap().success());
    (r, root, seen)
}

#[test]
fn real_claude_runs_a_tool_live_and_returns_its_result_tokens_and_cost() {
    let (r, root, followed) = follow_a_held_job(Api::Messages, "tool_call", "$ ls");
    let j = r.h.job(&root);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    assert_eq!(j.result.as_ref().unwrap()["summary"], standin::SUMMARY);
    // Two model turns of 1200 in / 40 out; cache figures are kept apart from input.
    assert_eq!((j.tokens_in, j.tokens_out), (2400, 80));
    assert!(j.cost_usd > 0.0, "claude prices its usage: {}", j.cost_usd);
    let shown = r.show(&root);
    assert_eq!(shown["tokens"]["cache_read"], 4000);
    assert_eq!(shown["tokens"]["cache_creation"], 600);
    let logs = r.logs(&root);
    assert_eq!(logs, followed, "--follow printed exactly the stored steps");
    let kinds: Vec<&str> = logs.iter().map(|v| v["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["message", "tool_call", "tool_result", "message", "usage"]
    );
    assert_eq!(shown["activity_count"], 5);
    assert_eq!(shown["last_activity"], logs[4]);
    // The tool's answer reached the model: the second turn carried a tool_result.
    assert!(r.standin.requests().len() >= 2);
}

#[test]
fn real_codex_runs_a_command_live_and_returns_its_result_and_tokens() {
    let (r, root, followed) = follow_a_held_job(Api::Responses, "command", "$ /bin/bash -lc ls");
    let j = r.h.job(&root);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    assert_eq!(j.result.as_ref().unwrap()["summary"], standin::SUMMARY);
    assert_eq!((j.tokens_in, j.tokens_out), (2400, 80));
    let logs = r.logs(&root);
    assert_eq!(logs, followed);
    let at = |kind: &str| {
        logs.iter()
            .position(|v| v["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind}: {logs:?}"))
    };
    assert!(at("command") < at("tool_result"));
    assert!(
        logs[at("tool_result")]["summary"]
            .as_str()
            .unwrap()
            .starts_with("exit 0")
    );
    assert!(at("tool_result") < at("message") && at("message") < at("usage"));
}

/// Each failure of the model API ends the job (failed with the runtime's own reason, or
/// through the repair path when the CLI takes a cut stream for a finished answer), and
/// what the agent did so far stays in its activity.
fn model_api_failures_end_the_job_clearly(api: Api) {
    for mode in [Mode::Http500, Mode::CutMidway, Mode::NoResult] {
        let r = Real::new(api, mode, false);
        let root = r.h.submit("ag", "list the files in this folder", &[]);
        let j = r.run_to_end(&root);
        let err = j.error.clone().unwrap_or_default();
        let logs = r.logs(&root);
        let kinds: Vec<&str> = logs.iter().map(|v| v["kind"].as_str().unwrap()).collect();
        assert_eq!(j.state, JobState::Failed, "{api:?} {mode:?}: {kinds:?}");
        let repaired = err.contains("repair");
        match mode {
            Mode::Http500 => {
                // The runtime's own words: claude names the status, codex says its
                // service is overloaded.
                let own = match api {
                    Api::Messages => err.starts_with("claude") && err.contains("500"),
                    Api::Responses => err.starts_with("codex:"),
                };
                assert!(own && !err.contains("gitmoot_result"), "{api:?}: {err}");
                assert!(kinds.contains(&"error"), "{api:?}: {kinds:?}");
            }
            Mode::CutMidway => assert!(
                repaired || !err.contains("gitmoot_result"),
                "{api:?}: {err}"
            ),
            Mode::NoResult => {
                assert!(repaired, "{api:?}: {err}");
                // The first run's tool call and its result survive the repair run.
                assert!(kinds.contains(&"tool_result"), "{kinds:?}");
                assert!(
                    kinds.iter().filter(|k| **k == "message").count() >= 2,
                    "{kinds:?}"
                );
            }
            Mode::Normal => unreachable!(),
        }
        assert!(!logs.is_empty(), "{api:?} {mode:?}: nothing recorded");
    }
}

#[test]
fn claude_model_api_failures_end_the_job_clearly() {
    model_api_failures_end_the_job_clearly(Api::Messages);
}

#[test]
fn codex_model_api_failures_end_the_job_clearly() {
    model_api_failures_end_the_job_clearly(Api::Responses);
}

/// As root, Claude Code refuses bypassPermissions: a danger-full-access claude agent's job
/// fails with that reason (not "missing gitmoot_result"), and `agent add` / `job run` warn.
#[test]
fn claude_bypass_as_root_fails_with_claudes_reason_and_is_warned_about() {
    let r = Real::new(Api::Messages, Mode::Normal, false);
    let add =
        r.h.cmd(&[
            "agent",
            "add",
            "dfa",
            "--runtime",
            "claude",
            "--policy",
            "danger-full-access",
        ])
        .output()
        .unwrap();
    assert!(add.status.success());
    let run =
        r.h.cmd(&["job", "run", "--agent", "dfa", "list the files"])
            .output()
            .unwrap();
    assert!(run.status.success());
    let root = String::from_utf8(run.stdout).unwrap().trim().to_string();
    let j = r.run_to_end(&root);
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        for out in [&add.stderr, &run.stderr] {
            let text = String::from_utf8_lossy(out);
            assert!(text.contains("refuses bypassPermissions"), "{text}");
        }
        assert_eq!(j.state, JobState::Failed);
        let err = j.error.unwrap_or_default();
        assert!(
            err.contains("cannot be used with root/sudo privileges"),
            "{err}"
        );
        assert!(!err.contains("gitmoot_result"), "{err}");
    } else {
        assert!(add.stderr.is_empty(), "no warning when not root");
        assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    }
}

/// The control room (tmux) while a real claude job runs its tool: the root's tree row
/// shows the tool call, and the Detail drawer's Activity tab lists it.
#[test]
fn the_control_room_shows_a_running_real_claude_jobs_tool_call() {
    let gate_dir = tempfile::tempdir().unwrap();
    let gate = gate_dir.path().join("go");
    // The tool itself waits for the test, so the tool call is the newest step meanwhile.
    let command = format!("until [ -e {} ]; do sleep 0.1; done; ls", gate.display());
    let r = Real::with_command(Api::Messages, Mode::Normal, false, &command);
    let root = r.h.submit("ag", "list the files in this folder", &[]);
    let mut daemon = r.daemon();
    // Titles come first on a running row (issue 29): 160 columns leave the step room beside
    // this one's whole title.
    let tui = support::tmux::Tmux::start_sized(
        "live-activity",
        &format!(
            "{} --home {} tui --no-daemon",
            TestHome::bin().display(),
            r.h.path().display()
        ),
        &[],
        (160, 36),
    );
    let screen = tui.wait_for("$ until [", Duration::from_secs(120));
    let row = screen.lines().find(|l| l.contains("$ until [")).unwrap();
    assert!(row.contains(&root), "the root's own row: {row}\n{screen}");
    assert_eq!(r.h.job(&root).state, JobState::Running);
    tui.keys(&["2"]);
    tui.keys(&["Enter"]);
    tui.wait_for("overview │ activity", Duration::from_secs(60));
    tui.keys(&["l"]);
    let screen = tui.wait_for("→ $ until [ -e", Duration::from_secs(60));
    assert!(screen.contains("• Let me look at the folder."), "{screen}");
    std::fs::write(&gate, "").unwrap();
    assert!(daemon.wait().unwrap().success());
    let j = r.h.job(&root);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    tui.keys(&["q"]);
}

/// Real Claude Code as an implement agent on a git checkout: its `Write` tool call creates a
/// file in the job's own worktree (its confinement lets it), `job diff` shows it, and the
/// operator's checkout is untouched.
#[test]
fn real_claude_writes_in_its_own_worktree_and_job_diff_shows_it() {
    let r = Real::with_command(
        Api::Messages,
        Mode::Normal,
        false,
        "write:hello.txt:hello from claude\n",
    );
    let repo = r.h.file("app");
    daemon_support::git_checkout(&repo, &[("README", "base\n")]);
    let config = std::fs::read_to_string(r.h.path().join("config.toml")).unwrap();
    r.h.config(&format!(
        "{config}[repos.\"acme/app\"]\npath = \"{}\"\n",
        repo.display()
    ));
    r.h.ok(&[
        "agent",
        "add",
        "writer",
        "--runtime",
        "claude",
        "--policy",
        "workspace-write",
        "--capability",
        "implement",
    ]);
    let root = r.h.submit(
        "writer",
        "write hello.txt",
        &["--action", "implement", "--repo", "acme/app"],
    );
    let j = r.run_to_end(&root);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    let logs = r.logs(&root);
    assert!(
        logs.iter().any(|v| v["kind"] == "file_change")
            && logs.iter().any(|v| v["summary"]
                .as_str()
                .unwrap_or("")
                .starts_with("File created")),
        "the Write call ran: {logs:?}"
    );
    let diff = r.h.ok(&["job", "diff", &root]);
    assert!(
        diff.contains("b/hello.txt") && diff.contains("+hello from claude"),
        "{diff}"
    );
    assert!(!repo.join("hello.txt").exists(), "the checkout was written");
    assert_eq!(daemon_support::git(&repo, &["status", "--porcelain"]), "");
}
