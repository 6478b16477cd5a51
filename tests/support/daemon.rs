//! Shared helpers of the daemon and runtime integration tests: a throwaway home driven
//! through the real `gitmoot` binary, scripted shell agents, and direct store reads.

pub use crate::agent_args::shell_agent_args;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use gitmoot::store::Store;
use gitmoot::store::jobs::{self, Job};
use gitmoot::store::runs::{self, Run};

pub struct TestHome {
    pub dir: tempfile::TempDir,
}

impl Default for TestHome {
    fn default() -> Self {
        Self::new()
    }
}

impl TestHome {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The `XDG_STATE_HOME` every command of this home gets, in the test's folder: where
    /// its worktrees live.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The folder holding this home's worktrees (the one folder under the state's).
    pub fn worktrees_dir(&self) -> PathBuf {
        let root = self.state_dir().join("gitmoot").join("worktrees");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert_eq!(
            dirs.len(),
            1,
            "one home's worktrees under {}",
            root.display()
        );
        dirs.pop().unwrap()
    }

    /// A file path inside the test's folder (outside the home).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn bin() -> PathBuf {
        PathBuf::from(crate::bin())
    }

    /// `gitmoot --home <home> args…` ready to run.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(Self::bin());
        c.arg("--home")
            .arg(self.path())
            .args(args)
            .env("XDG_STATE_HOME", self.state_dir());
        c
    }

    /// Runs to completion; panics with stderr unless it exits 0.
    pub fn ok(&self, args: &[&str]) -> String {
        String::from_utf8(succeed(&mut self.cmd(args)).stdout).unwrap()
    }

    pub fn config(&self, toml: &str) {
        std::fs::create_dir_all(self.path()).unwrap();
        std::fs::write(self.path().join("config.toml"), toml).unwrap();
    }

    /// Writes `script` to a file and registers a shell agent running it.
    pub fn shell_agent(&self, name: &str, script: &str) -> PathBuf {
        // Test agents write files to report what they saw, outside their working folder,
        // where `read-only` and `workspace-write` are refused by the kernel.
        self.script_agent(name, script, &["--policy", "danger-full-access"])
    }

    /// Registers a shell agent running `script` that implements its job on `repo`
    /// (`workspace-write`, so it writes only in its checkout), runs it to the end on one
    /// worker and returns the job's id.
    pub fn implement_once(&self, name: &str, script: &str, repo: &str) -> String {
        self.script_agent(
            name,
            script,
            &["--capability", "implement", "--policy", "workspace-write"],
        );
        let root = self.submit(name, "build it", &["--action", "implement", "--repo", repo]);
        self.daemon_until_idle(1);
        root
    }

    fn script_agent(&self, name: &str, script: &str, extra: &[&str]) -> PathBuf {
        let path = self.file(&format!("{name}.sh"));
        std::fs::write(&path, script).unwrap();
        let command = format!("sh {}", path.display());
        self.ok(&shell_agent_args(name, &command, extra));
        path
    }

    /// Registers a shell agent that approves at once with `summary`.
    pub fn approver(&self, name: &str, summary: &str) {
        self.shell_agent(
            name,
            &format!("cat >/dev/null\necho '{}'\n", result("approved", summary)),
        );
    }

    /// Submits a root job; returns its id.
    pub fn submit(&self, agent: &str, prompt: &str, extra: &[&str]) -> String {
        let mut args = vec!["job", "run", "--agent", agent];
        args.extend_from_slice(extra);
        args.push(prompt);
        self.ok(&args).trim().to_string()
    }

    /// A home whose agent `cl` runs the Claude Code stand-in (`fake_claude`) on model
    /// `opus`, with a $5 per-root budget; `extra` is appended to its config.
    pub fn budgeted_claude(extra: &str) -> Self {
        let h = Self::new();
        h.config(&format!(
            "[runtimes.claude]\npath = \"{}\"\n[orchestrate]\nmax_delegation_cost_usd = 5.0\n{extra}",
            fake_claude().display()
        ));
        h.ok(&[
            "agent",
            "add",
            "cl",
            "--runtime",
            "claude",
            "--model",
            "opus",
        ]);
        h
    }

    /// Runs a daemon on one worker until nothing it may start is left, with the Claude Code
    /// stand-in's state folder inside the home.
    pub fn run_until_idle(&self) {
        let state = self.file(".claude");
        std::fs::create_dir_all(&state).unwrap();
        succeed(
            self.cmd(&["daemon", "run", "--until-idle", "--parallel", "1"])
                .env("HOME", self.file(""))
                .env("CLAUDE_CONFIG_DIR", &state),
        );
    }

    pub fn store(&self) -> Store {
        Store::open(&self.path().join("gitmoot.db")).unwrap()
    }

    pub fn job(&self, id: &str) -> Job {
        jobs::require(self.store().conn(), id).unwrap()
    }

    pub fn run(&self, root: &str) -> Run {
        runs::require(self.store().conn(), root).unwrap()
    }

    pub fn tree(&self, root: &str) -> Vec<Job> {
        jobs::by_root(self.store().conn(), root).unwrap()
    }

    /// The control room's detail drawer over job `id`, 120 columns wide, as text.
    pub fn drawer(&self, id: &str) -> String {
        let mut loader =
            gitmoot::tui::load::Loader::new(self.store(), gitmoot_ui::view::DaemonStatus::None);
        loader.detail_job = Some(id.to_string());
        let detail = loader.load(0).unwrap().detail.expect("detail loaded");
        let theme = gitmoot_ui::theme::Theme::default_dark();
        gitmoot_ui::widgets::detail::content(&detail, 120, &theme)
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn daemon_until_idle(&self, parallel: usize) {
        self.ok(&[
            "daemon",
            "run",
            "--until-idle",
            "--parallel",
            &parallel.to_string(),
        ]);
    }
}

/// Sends `sig` to the process `pid` this test started.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on one pid the test owns.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Polls `cond` every 20 ms until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// Runs `cmd` to completion; panics with the command and its stderr unless it exits 0.
/// The Claude Code stand-in (`tests/fixtures/fake-claude`): every job reports 120 input,
/// 55 output, 1000 cache-read and 30 cache-write tokens and $0.0421.
pub fn fake_claude() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/fake-claude")
}

pub fn succeed(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `git -C at ARGS`, which must succeed; returns its stdout.
pub fn git(at: &Path, args: &[&str]) -> String {
    let out = succeed(Command::new("git").arg("-C").arg(at).args(args));
    String::from_utf8(out.stdout).unwrap()
}

/// A git checkout at `dir` holding `files` (path, text) in one commit.
pub fn git_checkout(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    );
}

/// A result line an agent prints.
pub fn result(decision: &str, summary: &str) -> String {
    format!(r#"{{"gitmoot_result":{{"decision":"{decision}","summary":"{summary}"}}}}"#)
}

/// Whether `pid` names a live, non-zombie process.
pub fn alive(pid: i32) -> bool {
    gitmoot::pid::is_alive(pid)
}

pub fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
