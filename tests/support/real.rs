//! Support for the tests that run the real Claude Code and Codex CLIs: installing the
//! pinned versions (tests/npm, `npm ci` into its ignored node_modules on first use), a
//! private network namespace (only loopback, nothing leaves the machine), and model
//! stand-ins on 127.0.0.1 inside it that speak the vendors' streaming APIs.

pub mod standin;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Mutex;
use std::sync::mpsc;

/// The pinned CLIs' bin folder, installed with `npm ci` when missing.
pub fn cli_bin() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../npm");
    let bin = dir.join("node_modules/.bin");
    if bin.join("claude").exists() && bin.join("codex").exists() {
        return bin;
    }
    let npm = Command::new("npm").arg("--version").output();
    assert!(
        npm.as_ref().is_ok_and(|o| o.status.success()),
        "the real-CLI tests need npm (Node.js) to install the pinned @anthropic-ai/claude-code \
         and @openai/codex from tests/npm/package-lock.json; install Node.js 18+ with npm and \
         rerun (npm --version failed: {npm:?})"
    );
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "npm ci in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(bin.join("claude").exists() && bin.join("codex").exists());
    bin
}

type Task = Box<dyn FnOnce() + Send>;

/// A private network namespace, entered by one dedicated thread: sockets bound and
/// children spawned by that thread live in it. It lasts while they do.
pub struct Netns {
    tasks: mpsc::Sender<Task>,
}

impl Default for Netns {
    fn default() -> Self {
        Self::new()
    }
}

impl Netns {
    pub fn new() -> Self {
        let (tasks, rx) = mpsc::channel::<Task>();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            // SAFETY: unshare(2) only changes this thread's network namespace.
            let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
            if rc != 0 {
                let _ = ready_tx.send(Err(format!(
                    "unshare(CLONE_NEWNET) failed: {} (the real-CLI tests run the CLIs in a \
                     private network namespace and need root or CAP_SYS_ADMIN)",
                    std::io::Error::last_os_error()
                )));
                return;
            }
            let lo = Command::new("ip")
                .args(["link", "set", "lo", "up"])
                .status();
            if !lo.is_ok_and(|s| s.success()) {
                let _ = ready_tx.send(Err(
                    "`ip link set lo up` failed in the test namespace (install iproute2)".into(),
                ));
                return;
            }
            let _ = ready_tx.send(Ok(()));
            for task in rx {
                task();
            }
        });
        ready_rx.recv().unwrap().unwrap_or_else(|e| panic!("{e}"));
        Self { tasks }
    }

    /// Runs `f` on the namespace's thread.
    pub fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        self.tasks
            .send(Box::new(move || {
                let _ = tx.send(f());
            }))
            .unwrap();
        rx.recv().unwrap()
    }

    /// Starts `cmd` inside the namespace.
    pub fn spawn(&self, mut cmd: Command) -> Child {
        self.run(move || cmd.spawn().expect("spawning in the namespace"))
    }
}

/// Scratch HOME and the environment that points both CLIs at the stand-ins and keeps
/// them quiet; the files are written under `home_dir`.
pub fn cli_env(
    home_dir: &Path,
    claude_port: Option<u16>,
    codex_port: Option<u16>,
) -> Vec<(String, String)> {
    std::fs::create_dir_all(home_dir.join(".claude")).unwrap();
    // Bash is allowed without a prompt: the stand-in's tool call must run, and as root
    // bypassPermissions is refused.
    std::fs::write(
        home_dir.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash"]}}"#,
    )
    .unwrap();
    let mut env: Vec<(String, String)> = vec![
        ("HOME".into(), home_dir.display().to_string()),
        (
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
            "1".into(),
        ),
        ("DISABLE_AUTOUPDATER".into(), "1".into()),
        ("DISABLE_TELEMETRY".into(), "1".into()),
        // A failing stand-in must fail the run at once, not after minutes of backoff.
        ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ("NO_COLOR".into(), "1".into()),
    ];
    if let Some(port) = claude_port {
        env.push((
            "ANTHROPIC_BASE_URL".into(),
            format!("http://127.0.0.1:{port}"),
        ));
        env.push(("ANTHROPIC_API_KEY".into(), "sk-ant-test-standin".into()));
    }
    if let Some(port) = codex_port {
        let codex_home = home_dir.join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                "model_provider = \"standin\"\nmodel = \"gpt-5-codex\"\n\
                 [model_providers.standin]\nname = \"standin\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
                 wire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n\
                 request_max_retries = 0\nstream_max_retries = 0\n"
            ),
        )
        .unwrap();
        env.push(("CODEX_HOME".into(), codex_home.display().to_string()));
        env.push(("OPENAI_API_KEY".into(), "sk-test-standin".into()));
    }
    env
}
