//! Runtime adapters (claude, codex, kimi, shell): turn a job into a child process and its
//! output into raw text plus token usage.
//!
//! Owns argument building from model, effort and autonomy policy, binary resolution, the
//! job environment and envelope parsing. Knows nothing of the store, the contract parser
//! or the engine: the daemon hands a `Request` in and gets a `RuntimeOutput` back.

pub mod activity;
pub mod claude;
pub mod codex;
mod contain;
pub mod kimi;
pub mod process;
pub mod sandbox;
pub mod shell;
pub(crate) mod spare;

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::RuntimeConfig;
use crate::domain::{Action, AutonomyPolicy, JobKind, RuntimeKind};

pub(crate) use contain::run_root;
pub use process::{Exit, Invocation, KillRequest, OutputLine, OutputStream, ProcessOutput, Stdin};

/// Prompts longer than this travel on stdin or in a file, never as one argument
/// (Linux refuses single arguments over 128 KiB).
pub(crate) const ARG_PROMPT_MAX: usize = 100 * 1024;

/// Tokens one run consumed. Budgets count `tokens_in + tokens_out`; cache reads and
/// writes (claude) are separate figures, priced by the vendor, never folded into input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
}

impl std::ops::AddAssign for TokenUsage {
    fn add_assign(&mut self, o: Self) {
        self.tokens_in += o.tokens_in;
        self.tokens_out += o.tokens_out;
        self.cache_read += o.cache_read;
        self.cache_creation += o.cache_creation;
    }
}

/// What one runtime run produced, read out of the runtime's own output format.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RuntimeOutput {
    /// The agent's answer text (where the `gitmoot_result` is looked for).
    pub text: String,
    pub usage: TokenUsage,
    /// The vendor's own cost figure, when the runtime reports one.
    pub vendor_cost_usd: Option<f64>,
    /// Set when the run failed; the job fails with this reason.
    pub error: Option<String>,
    /// The captured output hit the capture limit.
    pub truncated: bool,
}

impl RuntimeOutput {
    /// A streaming runtime's run: its text messages joined a line apart, no vendor cost.
    fn streamed(texts: &[String], usage: TokenUsage, error: Option<String>) -> Self {
        Self {
            text: texts.join("\n"),
            usage,
            vendor_cost_usd: None,
            error,
            truncated: false,
        }
    }

    /// A run read as plain text: its whole stdout is the answer, no usage (a runtime that
    /// reports none contributes 0), a non-zero exit fails with the code and stderr tail.
    fn plain(kind: RuntimeKind, out: &ProcessOutput) -> Self {
        Self {
            text: out.stdout_text(),
            error: exit_failure(kind, out),
            ..Self::default()
        }
    }

    fn failed(reason: impl Into<String>) -> Self {
        Self {
            error: Some(reason.into()),
            ..Self::default()
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(
        "runtime {runtime}: binary {name:?} not found on PATH (install it or set [runtimes.{runtime}].path in config.toml)"
    )]
    NotOnPath { runtime: RuntimeKind, name: String },
    #[error(
        "runtime {runtime}: [runtimes.{runtime}].path {path:?} does not exist or is not executable"
    )]
    BadPath { runtime: RuntimeKind, path: PathBuf },
    #[error("the shell runtime needs the agent's command (agent add --command CMD)")]
    NoCommand,
    #[error("ephemeral workers may not use the shell runtime (use claude, codex or kimi)")]
    EphemeralShell,
    #[error("writing the prompt file: {0}")]
    PromptFile(#[from] std::io::Error),
}

/// Everything an adapter needs to build one command line.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub kind: RuntimeKind,
    pub binary: PathBuf,
    /// The shell agent's command line.
    pub command: Option<&'a str>,
    pub model: Option<&'a str>,
    pub effort: Option<&'a str>,
    pub policy: AutonomyPolicy,
    pub prompt: &'a str,
    pub cwd: &'a Path,
    /// What beyond `cwd` a write policy leaves writable (what git writes for a write job
    /// in its worktree and repository).
    pub writable: &'a sandbox::Grant,
    /// Private folder for prompt files; removed files never outlive the run.
    pub scratch: &'a Path,
    /// The gitmoot home: no variable the agent gets may name it.
    pub home: &'a Path,
    /// Variables of `env` naming a socket in the home, handed over as links instead.
    pub sockets: &'a [&'a str],
    /// `GITMOOT_*` variables describing the job.
    pub env: Vec<(String, String)>,
}

impl Request<'_> {
    /// The child for this request: the adapter's argv and stdin, with the request's
    /// binary, environment and working directory, and no sandbox of gitmoot's own.
    fn invocation(&self, args: Vec<String>, stdin: Stdin) -> Invocation {
        Invocation {
            program: self.binary.clone(),
            args,
            env: self.env.clone(),
            cwd: Some(self.cwd.to_path_buf()),
            stdin,
            sandbox: None,
        }
    }

    /// Hands the prompt over as the last argument (after `--`), or on stdin when it is too
    /// long for one argument; `stdin_marker` is the argument that tells the CLI to read
    /// stdin, for those that need one.
    fn prompt_input(&self, args: &mut Vec<String>, stdin_marker: Option<&str>) -> Stdin {
        if self.prompt.len() > ARG_PROMPT_MAX {
            args.extend(stdin_marker.map(String::from));
            Stdin::Bytes(self.prompt.as_bytes().to_vec())
        } else {
            args.extend(["--".into(), self.prompt.into()]);
            Stdin::Null
        }
    }
}

/// A command line plus the temporary files that must live until the child exits.
#[derive(Debug)]
pub struct Prepared {
    pub invocation: Invocation,
    pub temp: Vec<TempPath>,
    /// A write job's git layer: the private half of its run's view of the git folder.
    pub git_layer: Option<PathBuf>,
}

/// A file or folder that goes when dropped: kept as a spare or removed (see `spare.rs`).
#[derive(Debug)]
pub struct TempPath(pub PathBuf);

impl Drop for TempPath {
    fn drop(&mut self) {
        spare::keep(&self.0);
    }
}

/// An empty folder only this user can enter, kept or removed with the returned path.
pub(crate) fn private_dir(dir: &Path, stem: &str) -> std::io::Result<TempPath> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(path) = spare::take(dir, stem, true) {
        return Ok(TempPath(path));
    }
    let path = dir.join(format!("{stem}-{}", crate::ids::random_hex(6)));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&path)?;
    Ok(TempPath(path))
}

/// A private file under `dir` holding `text` and nothing else.
pub(crate) fn write_private(dir: &Path, stem: &str, text: &str) -> std::io::Result<TempPath> {
    // A spare is a file of ours, 0600 since it was made, still holding the run before's
    // text: overwritten, then cut to this one's length (never to nothing, see spare.rs).
    if let Some(path) = spare::take(dir, stem, false) {
        let rewritten = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| {
                f.write_all(text.as_bytes())?;
                // Cut only what is left of a longer text: a truncation costs a journal
                // entry, a look at the length does not.
                let len = text.len() as u64;
                if f.metadata()?.len() > len {
                    f.set_len(len)?;
                }
                Ok(())
            });
        if rewritten.is_ok() {
            return Ok(TempPath(path));
        }
        let _ = std::fs::remove_file(&path);
    }
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{stem}-{}", crate::ids::random_hex(6)));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    f.write_all(text.as_bytes())?;
    Ok(TempPath(path))
}

/// Builds the command line for `req`, confined to its policy (`contain.rs`).
pub fn prepare(req: &Request<'_>) -> Result<Prepared, RuntimeError> {
    let mut prepared = match req.kind {
        RuntimeKind::Claude => claude::build(req),
        RuntimeKind::Codex => codex::build(req),
        RuntimeKind::Kimi => kimi::build(req)?,
        RuntimeKind::Shell => shell::build(req)?,
    };
    contain::contain(req, &mut prepared)?;
    Ok(prepared)
}

/// Reads the child's output in the runtime's format.
pub(crate) fn interpret(kind: RuntimeKind, out: &ProcessOutput) -> RuntimeOutput {
    let mut parsed = match &out.exit {
        Exit::TimedOut(d) => RuntimeOutput::failed(format!(
            "timed out after {}",
            crate::duration::format_ms(d.as_millis() as i64)
        )),
        Exit::Killed(why) => RuntimeOutput::failed(why.clone()),
        _ => match kind {
            RuntimeKind::Claude => claude::interpret(out),
            RuntimeKind::Codex => codex::interpret(out),
            RuntimeKind::Kimi => kimi::interpret(out),
            RuntimeKind::Shell => shell::interpret(out),
        },
    };
    parsed.truncated |= out.stdout_truncated;
    parsed
}

/// The failure text for a non-zero exit with nothing better to say.
pub(crate) fn exit_failure(kind: RuntimeKind, out: &ProcessOutput) -> Option<String> {
    let how = match out.exit {
        Exit::Code(0) => return None,
        Exit::Code(code) => format!("exited with code {code}"),
        Exit::Signal(sig) => format!("was killed by signal {sig}"),
        Exit::TimedOut(_) | Exit::Killed(_) => return None,
    };
    let tail = out.stderr_summary();
    Some(if tail.is_empty() {
        format!("{kind} {how}")
    } else {
        format!("{kind} {how}: {tail}")
    })
}

/// Feeds one parsed stream event to the adapter of `kind`; the shell prints no events.
fn read_event(kind: RuntimeKind, event: &serde_json::Value, sink: &mut activity::EventSink<'_>) {
    match kind {
        RuntimeKind::Claude => claude::read_event(event, sink),
        RuntimeKind::Codex => codex::read_event(event, sink),
        RuntimeKind::Kimi => kimi::read_event(event, sink),
        RuntimeKind::Shell => {}
    }
}

/// The binary for `kind`: `[runtimes.<kind>].path`, else its usual name on `PATH`.
pub(crate) fn resolve_binary(
    kind: RuntimeKind,
    cfg: &RuntimeConfig,
) -> Result<PathBuf, RuntimeError> {
    if let Some(path) = &cfg.path {
        return if is_executable(path) {
            Ok(path.clone())
        } else {
            Err(RuntimeError::BadPath {
                runtime: kind,
                path: path.clone(),
            })
        };
    }
    let name = match kind {
        RuntimeKind::Shell => "sh",
        other => other.as_str(),
    };
    on_path(name, std::env::var_os("PATH")).ok_or_else(|| RuntimeError::NotOnPath {
        runtime: kind,
        name: name.to_string(),
    })
}

/// How long a binary found on `PATH` is taken as found without looking again.
const PATH_LOOKUP_KEPT: std::time::Duration = std::time::Duration::from_secs(1);

/// The first executable `name` on `PATH`. A lookup stats every folder before the one that
/// holds it, and a busy daemon asks for the same name once per job, so what was found is
/// kept for `PATH_LOOKUP_KEPT` (for the same `PATH`): a binary installed earlier on `PATH`
/// is picked up a second later at most.
fn on_path(name: &str, path_var: Option<std::ffi::OsString>) -> Option<PathBuf> {
    struct Found {
        name: String,
        path_var: std::ffi::OsString,
        at: std::time::Instant,
        binary: PathBuf,
    }
    static FOUND: std::sync::Mutex<Vec<Found>> = std::sync::Mutex::new(Vec::new());
    let path_var = path_var?;
    let mut found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    found.retain(|f| f.at.elapsed() < PATH_LOOKUP_KEPT);
    if let Some(f) = found
        .iter()
        .find(|f| f.name == name && f.path_var == path_var)
    {
        return Some(f.binary.clone());
    }
    let binary = std::env::split_paths(&path_var)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))?;
    found.push(Found {
        name: name.to_string(),
        path_var,
        at: std::time::Instant::now(),
        binary: binary.clone(),
    });
    Some(binary)
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What every agent gets from the daemon's environment, whatever its runtime.
pub(crate) const BASE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR",
];

/// What a runtime's own CLI needs to reach its vendor (keys, endpoints, proxies, its
/// config folder). The shell runtime gets nothing beyond `BASE_ENV`: an operator passes a
/// shell agent's secrets by name with `[runtimes.shell] env`.
pub(crate) fn runtime_env(kind: RuntimeKind) -> Vec<&'static str> {
    const NETWORK: &[&str] = &[
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "NO_PROXY",
        "https_proxy",
        "http_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
        "XDG_CONFIG_HOME",
    ];
    let own: &[&str] = match kind {
        RuntimeKind::Claude => &["ANTHROPIC_*", "CLAUDE_*"],
        RuntimeKind::Codex => &["OPENAI_*", "CODEX_*"],
        RuntimeKind::Kimi => &["MOONSHOT_*", "KIMI_*"],
        RuntimeKind::Shell => return Vec::new(),
    };
    own.iter().chain(NETWORK).copied().collect()
}

fn env_allowed(name: &str, patterns: &[&str]) -> bool {
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *p,
    })
}

/// The environment an agent of `kind` starts with: the daemon's variables named by
/// `BASE_ENV`, the runtime's own list and `extra` (`[runtimes.<kind>] env`), never a
/// `GITMOOT_*` variable of the daemon (the job's own are added by the caller).
pub(crate) fn agent_env(kind: RuntimeKind, extra: &[String]) -> Vec<(String, String)> {
    let mut patterns: Vec<&str> = BASE_ENV.to_vec();
    patterns.extend(runtime_env(kind));
    patterns.extend(extra.iter().map(String::as_str));
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| !k.starts_with("GITMOOT_") && env_allowed(k, &patterns))
        .collect()
}

/// Which job a child runs, as the runtime sees it: the daemon fills it from its job row, so
/// the runtime never reads the store.
pub(crate) struct JobIdentity<'a> {
    pub id: &'a str,
    pub root_id: &'a str,
    pub parent_id: Option<&'a str>,
    pub delegation_id: Option<&'a str>,
    pub kind: JobKind,
    pub action: Action,
    pub repo: Option<&'a str>,
    pub attempt: u32,
}

/// The `GITMOOT_*` environment every runtime child gets (the shell contract of SPEC §6;
/// other runtimes get it too so a leftover process can be traced back to its job).
///
/// The home is deliberately absent: an agent that knew it could open the store and answer
/// its own gates; moot seats post through the relay's scoped token instead.
pub(crate) fn job_env(job: &JobIdentity<'_>, repair: u32) -> Vec<(String, String)> {
    let opt = |v: Option<&str>| v.unwrap_or_default().to_string();
    vec![
        ("GITMOOT_JOB_ID".into(), job.id.to_string()),
        ("GITMOOT_ROOT_ID".into(), job.root_id.to_string()),
        ("GITMOOT_PARENT_ID".into(), opt(job.parent_id)),
        ("GITMOOT_DELEGATION_ID".into(), opt(job.delegation_id)),
        ("GITMOOT_JOB_KIND".into(), job.kind.as_str().into()),
        ("GITMOOT_ACTION".into(), job.action.as_str().into()),
        ("GITMOOT_REPO".into(), opt(job.repo)),
        ("GITMOOT_ATTEMPT".into(), job.attempt.to_string()),
        ("GITMOOT_REPAIR".into(), repair.to_string()),
    ]
}

/// Whether `dir` is inside a git work tree (a `.git` folder or file above it).
pub(crate) fn in_git_work_tree(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// The JSON values of a JSONL stream; lines that are not JSON (runtimes interleave log
/// lines) are skipped.
pub(crate) fn json_lines(stream: &str) -> impl DoubleEndedIterator<Item = serde_json::Value> + '_ {
    stream
        .lines()
        .filter_map(|l| serde_json::from_str(l.trim()).ok())
}

/// Reads a JSON number as u64 (absent or negative → 0).
pub(crate) fn num(v: &serde_json::Value, key: &str) -> u64 {
    v.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    pub fn output(stdout: &str, stderr: &str, code: i32) -> ProcessOutput {
        ProcessOutput {
            stdout: stdout.as_bytes().to_vec(),
            stdout_truncated: false,
            stderr_tail: stderr.as_bytes().to_vec(),
            exit: Exit::Code(code),
            elapsed: std::time::Duration::ZERO,
        }
    }

    /// `stream`, printed by a run that exited 0 and read by the adapter's `interpret`, is a
    /// success with exactly this text and these token counts (no cache use).
    pub(crate) fn assert_clean(
        interpret: fn(&ProcessOutput) -> RuntimeOutput,
        stream: &str,
        text: &str,
        tokens_in: u64,
        tokens_out: u64,
    ) {
        let r = interpret(&output(stream, "", 0));
        assert_eq!(r.error, None);
        assert_eq!(r.text, text);
        assert_eq!(
            r.usage,
            TokenUsage {
                tokens_in,
                tokens_out,
                ..TokenUsage::default()
            }
        );
    }

    pub fn request<'a>(kind: RuntimeKind, prompt: &'a str, cwd: &'a Path) -> Request<'a> {
        static NOTHING: std::sync::LazyLock<sandbox::Grant> =
            std::sync::LazyLock::new(sandbox::Grant::default);
        Request {
            kind,
            binary: PathBuf::from(format!("/opt/bin/{kind}")),
            command: None,
            model: None,
            effort: None,
            policy: AutonomyPolicy::Auto,
            prompt,
            cwd,
            writable: &NOTHING,
            scratch: cwd,
            home: Path::new("/nonexistent/gitmoot-home"),
            sockets: &[],
            env: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_found_on_path_is_kept_for_that_path_and_looked_up_again_for_another() {
        use std::os::unix::fs::PermissionsExt;
        let dirs = tempfile::tempdir().unwrap();
        let (early, late) = (dirs.path().join("early"), dirs.path().join("late"));
        let exe = |dir: &Path| {
            std::fs::create_dir_all(dir).unwrap();
            let p = dir.join("gm-fake-agent");
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let path_var = std::env::join_paths([&early, &late]).unwrap();
        assert_eq!(on_path("gm-fake-agent", Some(path_var.clone())), None);
        let found = exe(&late);
        assert_eq!(
            on_path("gm-fake-agent", Some(path_var.clone())),
            Some(found.clone())
        );
        let earlier = exe(&early);
        assert_eq!(
            on_path("gm-fake-agent", Some(path_var)),
            Some(found),
            "kept, not looked up again"
        );
        let other = std::env::join_paths([&early]).unwrap();
        assert_eq!(on_path("gm-fake-agent", Some(other)), Some(earlier));
    }

    #[test]
    fn a_configured_path_wins_and_a_bad_one_is_named() {
        let cfg = RuntimeConfig {
            path: Some("/bin/sh".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve_binary(RuntimeKind::Claude, &cfg).unwrap(),
            PathBuf::from("/bin/sh")
        );
        let cfg = RuntimeConfig {
            path: Some("/nope/claude".into()),
            ..Default::default()
        };
        let err = resolve_binary(RuntimeKind::Claude, &cfg).unwrap_err();
        assert!(err.to_string().contains("[runtimes.claude].path"), "{err}");
        assert!(err.to_string().contains("/nope/claude"), "{err}");
    }

    #[test]
    fn timeouts_and_kills_become_the_failure_reason() {
        let mut out = test_support::output("{}", "", 0);
        out.exit = Exit::TimedOut(std::time::Duration::from_secs(90));
        let r = interpret(RuntimeKind::Shell, &out);
        assert_eq!(r.error.as_deref(), Some("timed out after 1m30s"));
        out.exit = Exit::Killed("root killed".into());
        assert_eq!(
            interpret(RuntimeKind::Codex, &out).error.as_deref(),
            Some("root killed")
        );
    }
}
