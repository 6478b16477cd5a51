//! The worker pool over the store: one daemon per SQLite store (per home on PostgreSQL),
//! claiming, locks, timeouts, crash recovery and graceful shutdown.
//!
//! `Daemon` is the builder the CLI (`daemon run`, `job run --wait`), the control room and
//! the benchmark use; `pool` is its loop, `exec` the per-job pipeline. Engine decisions
//! (what a settled job means for its tree) stay in `crate::engine`; the daemon only runs
//! processes and reports what they produced.

mod brief;
pub mod claim;
pub mod exec;
pub mod human_notify;
pub mod lease;
pub mod live;
pub mod lock;
mod outage;
mod paused;
mod pool;
pub mod recovery;
mod reload;
pub mod shutdown;
pub mod status;
mod store_watch;
pub mod worktree;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

pub use lock::{DaemonLock, LockError};
pub use shutdown::{ShutdownHandle, StopError, StopMode, request_stop};
pub use status::{DaemonStatus, report as status_report};

use crate::clock::{Clock, SteadyClock};
use crate::config::Config;
use crate::domain::RuntimeKind;
use crate::engine::{self, EngineError, Hooks, NoHooks, Outcome, Settlement, Usage};
use crate::home::Home;
use crate::runtime::TokenUsage;
use crate::store::StoreError;

/// What every job of one daemon shares.
pub struct Shared {
    pub home: Home,
    pub store: Mutex<crate::store::Store>,
    /// The config in force; the pool swaps it on SIGHUP or when config.toml changes.
    pub config: RwLock<Arc<Config>>,
    pub hooks: Arc<dyn Hooks + Send + Sync>,
    pub clock: Arc<dyn Clock>,
    pub scratch_dir: PathBuf,
    pub prompt_dir: PathBuf,
    /// The chat relay moot seats post through; `None` when it could not start.
    pub relay: Option<Arc<crate::chat::relay::RelayHandle>>,
    /// The one writer of every running job's live activity, started on first use.
    pub(crate) live_writer: std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<live::Batch>>,
    /// What that writer stored since the stall watch last looked.
    pub(crate) heard: live::Heard,
    /// The lost daemons of this host seen alive (`paused`), by id, with their homes when
    /// they could be read: where their jobs' records are once they die.
    pub(crate) lost_homes: Mutex<std::collections::HashMap<String, Option<PathBuf>>>,
}

/// Agent output kept in `jobs.raw_output`; beyond it the text is cut and marked.
pub(crate) const STORED_OUTPUT_LIMIT: usize = 1024 * 1024;

/// Where a running job's stdout is recorded while it runs (removed once it settles); the
/// executor writes it and recovery reads it.
pub(crate) fn record_path(home: &Path, job_id: &str, kind: RuntimeKind) -> PathBuf {
    // Continuation ids hold a `/`; a file name must not.
    let name = job_id.replace('/', "~");
    home.join("runs").join(format!("{name}.{kind}.out"))
}

/// The job a file of `<home>/runs` is the record of (the inverse of `record_path`).
pub(crate) fn record_job(file_name: &str) -> Option<String> {
    let (name, kind) = file_name.strip_suffix(".out")?.rsplit_once('.')?;
    kind.parse::<RuntimeKind>().ok()?;
    Some(name.replace('~', "/"))
}

/// What a run that ended is stored as, however it was read (from the live pipe or, after a
/// crash, from its record): secrets cut from the output and the result, the output capped,
/// usage priced by the vendor's figure when it gave one and by `model` otherwise.
pub fn settlement(
    outcome: Outcome,
    raw: &str,
    truncated: bool,
    usage: &TokenUsage,
    vendor_cost: Option<f64>,
    model: Option<&str>,
) -> Settlement {
    let (raw, cut) = cap_output(crate::redact::redact(raw).into_owned());
    Settlement {
        outcome: redact_outcome(outcome),
        raw_output: (!raw.is_empty()).then_some(raw),
        output_truncated: truncated || cut,
        usage: Usage {
            tokens_in: usage.tokens_in,
            tokens_out: usage.tokens_out,
            cost_usd: vendor_cost
                .unwrap_or_else(|| engine::price_usd(model, usage.tokens_in, usage.tokens_out)),
        },
    }
}

/// The outcome with secrets redacted from every string of the result (or the failure
/// reason, which can carry a stderr tail) before the engine stores it.
fn redact_outcome(outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::Failed(why) => Outcome::Failed(crate::redact::redact(&why).into_owned()),
        Outcome::Parsed(r) => {
            let Ok(text) = serde_json::to_string(&r) else {
                return Outcome::Parsed(r);
            };
            match crate::redact::redact(&text) {
                std::borrow::Cow::Borrowed(_) => Outcome::Parsed(r),
                // The marker holds no JSON metacharacters, so the text still parses.
                std::borrow::Cow::Owned(clean) => match serde_json::from_str(&clean) {
                    Ok(parsed) => Outcome::Parsed(parsed),
                    Err(e) => Outcome::Failed(format!("redacting the result: {e}")),
                },
            }
        }
    }
}

/// Cuts `text` to `STORED_OUTPUT_LIMIT` bytes on a character boundary.
pub(crate) fn cap_output(text: String) -> (String, bool) {
    if text.len() <= STORED_OUTPUT_LIMIT {
        return (text, false);
    }
    let mut end = STORED_OUTPUT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_string(), true)
}

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("daemon: {0}")]
    Io(std::io::Error),
    #[error(transparent)]
    Invalid(#[from] crate::Invalid),
    #[error(
        "daemon {0}: its lease ran out and another daemon took its jobs over; stopping so none runs twice"
    )]
    LeaseLost(String),
    #[error(
        "the store {} was {how} under the running daemon; it stopped claiming and exits rather than write to a file nobody reads ({left})",
        path.display()
    )]
    StoreGone {
        path: PathBuf,
        how: &'static str,
        left: String,
    },
    #[error("the home {} was removed under the running daemon; it stopped", .0.display())]
    HomeRemoved(PathBuf),
    #[error(
        "the disk holding the store {store} is full ({cause}); free space, then start the daemon again"
    )]
    DiskFull { store: String, cause: String },
}

impl From<std::io::Error> for DaemonError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e)
    }
}

impl DaemonError {
    /// Bad input (exit 2): a flag or config value the daemon was started with.
    pub(crate) fn is_invalid(&self) -> bool {
        match self {
            Self::Invalid(_) => true,
            Self::Store(e) => e.is_invalid(),
            Self::Engine(e) => e.is_invalid(),
            Self::Lock(_)
            | Self::Io(_)
            | Self::LeaseLost(_)
            | Self::StoreGone { .. }
            | Self::HomeRemoved(_)
            | Self::DiskFull { .. } => false,
        }
    }

    /// The store's server went away; the daemon reconnects rather than stops.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            Self::Store(e) | Self::Engine(EngineError::Store(e)) => e.is_connection_lost(),
            _ => false,
        }
    }
}

/// Says `line` on stderr as well as in the log: what the operator must hear while the
/// daemon runs on (the log may sit on the very disk that is full). A closed stderr is no
/// reason to stop.
pub(crate) fn notice(line: std::fmt::Arguments<'_>) {
    tracing::error!("{line}");
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Why a daemon returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaemonExit {
    /// `until_idle`: nothing was queued or running any more.
    Idle,
    /// A stop was requested; `terminated` jobs outlived the shutdown grace and were killed.
    Shutdown { terminated: usize },
}

/// A configured daemon; `run` it on a tokio runtime or `spawn` it on its own thread.
pub struct Daemon {
    home: Home,
    config: Config,
    /// Where a running daemon re-reads its config from (SIGHUP, or the file changing).
    config_file: Option<PathBuf>,
    parallel: Option<usize>,
    until_idle: bool,
    only_root: Option<String>,
    /// Host labels; `None` keeps `[daemon].labels`.
    labels: Option<Vec<String>>,
    hooks: Arc<dyn Hooks + Send + Sync>,
    clock: Arc<dyn Clock>,
    signals: bool,
    shutdown: ShutdownHandle,
    /// Run once the lock is held and start-up (recovery included) succeeded.
    on_started: Option<Box<dyn FnOnce() + Send>>,
}

impl Daemon {
    /// A daemon for `home` with its database, default config, `[daemon].parallel` and no
    /// hooks attached.
    pub fn new(home: Home) -> Self {
        Self {
            home,
            config: Config::default(),
            config_file: None,
            parallel: None,
            until_idle: false,
            only_root: None,
            labels: None,
            hooks: Arc::new(NoHooks),
            clock: Arc::new(SteadyClock::default()),
            signals: false,
            shutdown: ShutdownHandle::default(),
            on_started: None,
        }
    }

    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Keep the config in step with this file while running: re-read on SIGHUP (with
    /// `handle_signals`) and whenever it changes, checked once per `[daemon].tick`.
    pub(crate) fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.config_file = Some(path.into());
        self
    }

    /// Jobs run at once; `None` keeps `[daemon].parallel`.
    pub fn parallel(mut self, n: Option<usize>) -> Self {
        self.parallel = n;
        self
    }

    /// Return `DaemonExit::Idle` once nothing is queued or running.
    pub(crate) fn until_idle(mut self, yes: bool) -> Self {
        self.until_idle = yes;
        self
    }

    /// Claim only jobs of this tree (`job run --wait` runs its own tree and nothing else).
    pub(crate) fn only_root(mut self, root: Option<String>) -> Self {
        self.only_root = root;
        self
    }

    /// The host labels this daemon claims pinned jobs for (`daemon run --labels`); `None`
    /// keeps `[daemon].labels`.
    pub fn labels(mut self, labels: Option<Vec<String>>) -> Self {
        self.labels = labels;
        self
    }

    /// Side effects run inside each settlement's transaction (chat's hooks, the relay).
    pub fn hooks(mut self, hooks: Arc<dyn Hooks + Send + Sync>) -> Self {
        self.hooks = hooks;
        self
    }

    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Stop gracefully on SIGINT/SIGTERM and reload the config on SIGHUP (the foreground
    /// `daemon run`).
    pub(crate) fn handle_signals(mut self, yes: bool) -> Self {
        self.signals = yes;
        self
    }

    /// Called once the daemon holds its lock and has started: what `daemon run` says it
    /// started must not be said by a daemon that is refused the lock.
    pub(crate) fn on_started(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.on_started = Some(Box::new(f));
        self
    }

    /// A handle that stops this daemon from anywhere.
    pub(crate) fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    /// The daemon lock of the home's store (see `lock`). The store is opened (made, when
    /// new) first: a lock file beside no store says the store vanished, which
    /// `Store::open` refuses, and a new store's lock must not look like that.
    fn lock(&self) -> Result<DaemonLock, DaemonError> {
        let location = crate::store::Location::of_home(&self.home).map_err(StoreError::from)?;
        if matches!(location, crate::store::Location::Sqlite(_)) {
            drop(crate::store::Store::open_location(&location)?);
        }
        Ok(DaemonLock::acquire_for(&self.home)?)
    }

    fn effective_parallel(&self) -> Result<usize, crate::Invalid> {
        match self.parallel.unwrap_or(self.config.daemon.parallel) {
            0 => Err(crate::Invalid("--parallel must be at least 1".into())),
            n => Ok(n),
        }
    }

    /// Takes the store's lock, recovers orphaned jobs and runs the pool until idle (with
    /// `until_idle`) or until a stop is requested.
    pub async fn run(self) -> Result<DaemonExit, DaemonError> {
        self.effective_parallel()?;
        let lock = self.lock()?;
        pool::run(self, lock).await
    }

    /// Runs the daemon on its own thread with its own tokio runtime. The lock is taken
    /// before this returns, so a `LockError::Held` means another daemon serves the store.
    pub fn spawn(self) -> Result<DaemonHandle, DaemonError> {
        let lock = self.lock()?;
        let shutdown = self.shutdown.clone();
        let parallel = self.effective_parallel()?;
        let thread = std::thread::Builder::new()
            .name("gitmoot-daemon".into())
            .spawn(move || runtime(parallel)?.block_on(pool::run(self, lock)))?;
        Ok(DaemonHandle { shutdown, thread })
    }
}

/// The tokio runtime a daemon of `parallel` job slots runs on: a worker thread per slot,
/// two at least and eight at most. Starting a job holds its worker until the child has
/// replaced itself with the agent (the spawn is vfork-style), so with fewer workers than
/// slots the other jobs' output, exits and starts wait behind each start.
pub fn runtime(parallel: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(parallel.clamp(2, 8))
        .enable_all()
        .build()
}

/// An embedded daemon running on its own thread.
pub struct DaemonHandle {
    shutdown: ShutdownHandle,
    thread: std::thread::JoinHandle<Result<DaemonExit, DaemonError>>,
}

impl DaemonHandle {
    /// Asks the daemon to stop (running jobs get `[daemon].shutdown_grace`).
    pub fn shutdown(&self) {
        self.shutdown.request();
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the daemon thread to end.
    pub fn join(self) -> Result<DaemonExit, DaemonError> {
        self.thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the daemon thread panicked").into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_its_job() {
        let home = Path::new("/h");
        for id in ["job-abc", "job-abc/cont"] {
            let path = record_path(home, id, RuntimeKind::Codex);
            let name = path.file_name().unwrap().to_str().unwrap();
            assert_eq!(record_job(name).as_deref(), Some(id));
        }
        assert_eq!(record_job("spare-0a1b2c3d4e5f"), None);
        assert_eq!(record_job("job-abc.perl.out"), None);
    }

    #[test]
    fn stored_output_is_cut_on_a_character_boundary_and_marked() {
        let text = format!("{}é", "a".repeat(STORED_OUTPUT_LIMIT - 1));
        let (kept, cut) = cap_output(text);
        assert!(cut);
        assert_eq!(kept.len(), STORED_OUTPUT_LIMIT - 1);
        let (kept, cut) = cap_output("short".into());
        assert_eq!((kept.as_str(), cut), ("short", false));
    }
}
