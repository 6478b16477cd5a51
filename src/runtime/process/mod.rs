//! Running one runtime child: its own process group, stdin feeding, capped output capture,
//! an optional live feed of its output lines, a deadline and external termination that
//! take the whole group down.
//!
//! Owns spawning and killing only; what the arguments mean and how the output is read
//! belongs to the adapters in the sibling files.

mod cadence;
mod capture;
mod cgroup;
mod group;
mod guard;
mod lines;
mod paced;
mod record;
mod spawn;
mod stdio;

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use cadence::Reading;
pub(crate) use cadence::next_boundary;
use capture::{Capture, LineFeed, read_capped};
use group::terminate_group;
pub use group::{kill_marked, live_marked, signal_group};
use guard::guard;
pub(crate) use lines::{LineReceiver, LineSender, line_channel};
use paced::PacedPipe;
pub use record::read_record;
use record::{Record, read_recorded};
use spawn::Spec;

/// Stdout kept for parsing: its first `CAPTURE_HEAD` bytes and its last
/// `CAPTURE_LIMIT - CAPTURE_HEAD` (the result is usually at the end); the middle of a
/// longer output is drained and dropped.
pub(crate) const CAPTURE_LIMIT: usize = 4 * 1024 * 1024;
/// The head part of `CAPTURE_LIMIT`.
pub(crate) const CAPTURE_HEAD: usize = 1024 * 1024;
/// After the child is gone, how long its pipes may stay open before whatever holds them
/// (a grandchild that left the process group) is killed and the pipes are dropped.
pub(crate) const PIPE_GRACE: Duration = Duration::from_millis(500);
/// The variable that marks every process a job started, even one that left its group.
pub(crate) const JOB_MARKER: &str = "GITMOOT_JOB_ID";
/// Stderr kept (its tail) for error messages.
pub(crate) const STDERR_TAIL_LIMIT: usize = 64 * 1024;
/// Between SIGTERM and SIGKILL when a group is terminated.
pub(crate) const TERM_GRACE: Duration = Duration::from_millis(1_500);
/// Longest line handed to the line feed; the rest of a longer line is dropped from the
/// feed (the capture still holds it) so one huge JSON event cannot balloon memory.
pub(crate) const LINE_LIMIT: usize = 1024 * 1024;

/// Which of the child's output streams a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// One line of the child's output, delivered as soon as it is complete (without its
/// newline; the last unterminated piece arrives at end of stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLine {
    pub stream: OutputStream,
    pub bytes: Vec<u8>,
}

/// What to feed the child on stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// `/dev/null`: the child sees end of input at once.
    Null,
    /// These bytes, then end of input.
    Bytes(Vec<u8>),
}

/// One fully resolved command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The child's entire environment (nothing is inherited).
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub stdin: Stdin,
    /// The kernel confinement of the agent's policy (`None`: unconfined).
    pub sandbox: Option<super::sandbox::Confinement>,
}

/// Why a child was terminated from outside before it exited by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillRequest(pub String);

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// The deadline passed; the group was terminated.
    TimedOut(Duration),
    /// A `KillRequest` arrived; the group was terminated.
    Killed(String),
}

/// What the child printed and how it ended.
#[derive(Debug, Clone)]
pub struct ProcessOutput {
    pub stdout: Vec<u8>,
    /// Stdout went past `CAPTURE_LIMIT`; the rest was dropped.
    pub stdout_truncated: bool,
    /// The last `STDERR_TAIL_LIMIT` bytes of stderr.
    pub stderr_tail: Vec<u8>,
    pub exit: Exit,
    pub elapsed: Duration,
}

impl ProcessOutput {
    pub(crate) fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The last few non-empty stderr lines, for one-line error messages.
    pub(crate) fn stderr_summary(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr_tail);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let tail = &lines[lines.len().saturating_sub(3)..];
        let joined = tail.join(" | ");
        let chars: Vec<char> = joined.chars().collect();
        if chars.len() > 600 {
            chars[chars.len() - 600..].iter().collect()
        } else {
            joined
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error(
        "cannot start the guard that kills a job's processes with the daemon (/bin/sh): {source}"
    )]
    Guard { source: std::io::Error },
    #[error("recording output to {path}: {source}")]
    Record {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("waiting for {program}: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
}

/// Runs the invocation to its end, the deadline or a kill request, whichever comes first.
///
/// The child (started by `spawn.rs`) leads a new process group, so termination reaches every grandchild; the
/// group is also swept after a normal exit so nothing a job started outlives it.
/// `on_spawn` receives the child's pid (= its process group id) once it is running.
pub async fn run(
    inv: &Invocation,
    timeout: Option<Duration>,
    kill: watch::Receiver<Option<KillRequest>>,
    on_spawn: impl FnOnce(u32),
) -> Result<ProcessOutput, SpawnError> {
    run_streaming(inv, timeout, kill, on_spawn, None).await
}

/// [`run`], also sending every stdout and stderr line to `lines` as it arrives. The
/// capture in the returned [`ProcessOutput`] is the same as without the feed.
pub(crate) async fn run_streaming(
    inv: &Invocation,
    timeout: Option<Duration>,
    kill: watch::Receiver<Option<KillRequest>>,
    on_spawn: impl FnOnce(u32),
    lines: Option<LineSender>,
) -> Result<ProcessOutput, SpawnError> {
    run_recorded(inv, None, timeout, kill, on_spawn, lines).await
}

/// [`run_streaming`] with the child's stdout moved into the file `record` (created 0600,
/// or an ended run's record renamed to it, see `spare.rs`) before this side reads it, so
/// what the child printed survives a daemon that dies: recovery settles finished work
/// from the file ([`read_record`]), and what was still in the pipe the guard appends to
/// it. The file stays within `CAPTURE_LIMIT` on disk however fast the child prints: the
/// pipe makes a child that prints faster than it is read wait (see `record.rs`).
pub(crate) async fn run_recorded(
    inv: &Invocation,
    record: Option<&Path>,
    timeout: Option<Duration>,
    kill: watch::Receiver<Option<KillRequest>>,
    on_spawn: impl FnOnce(u32),
    lines: Option<LineSender>,
) -> Result<ProcessOutput, SpawnError> {
    let started = Instant::now();
    let program = inv.program.display().to_string();
    let spawn_error = |source| SpawnError::Spawn {
        program: program.clone(),
        source,
    };
    let mut running = start(inv, record, &spawn_error).await?;
    on_spawn(running.pgid as u32);
    // Only now, with the group in the guard's list, does a child waiting on its input get it.
    stdio::feed(&inv.stdin, running.stdin.take(), &spawn_error)?;
    let readers = Readers::start(running.stdout, running.record, running.stderr, lines);
    let exit = supervise(&mut running.child, running.pgid, timeout, kill, &program).await?;
    let (stdout, stdout_truncated, stderr_tail) = collect(inv, running.pgid, &exit, readers).await;
    Ok(ProcessOutput {
        stdout,
        stdout_truncated,
        stderr_tail,
        exit,
        elapsed: started.elapsed(),
    })
}

/// A spawned child whose group the guard holds, with this side's ends of its streams.
struct Running {
    child: spawn::Child,
    pgid: i32,
    stdin: Option<std::io::PipeWriter>,
    stdout: OwnedFd,
    record: Option<std::fs::File>,
    stderr: OwnedFd,
}

/// Spawns the child on its streams and puts its group in the guard's list before anything
/// else can happen to it.
async fn start(
    inv: &Invocation,
    record: Option<&Path>,
    spawn_error: &impl Fn(std::io::Error) -> SpawnError,
) -> Result<Running, SpawnError> {
    // The invocation's environment is the child's whole environment: nothing of the
    // daemon's leaks through (secrets, the home) unless the allow-list put it there.
    let spec = Spec::new(
        &inv.program,
        &inv.args,
        &inv.env,
        inv.cwd.as_deref(),
        inv.sandbox.as_ref(),
        guard().cgroup.as_ref().map(|cg| cg.procs.as_c_str()),
    )
    .map_err(spawn_error)?;
    let stdio::Stdio {
        child: ends,
        stdin,
        stdout,
        record,
        stderr,
    } = stdio::open(&inv.stdin, record, spawn_error)?;
    let [i, o, e] = &ends;
    let mut child = spec.spawn([i, o, e]).map_err(spawn_error)?;
    // Only the child holds its ends now: end of input and end of output are the child's.
    drop(ends);
    let pgid = child.id();
    // The guard holds the pipe too: what a dead daemon did not read, it appends.
    let drain = record.as_ref().map(|file| (stdout.as_fd(), file.as_fd()));
    if let Err(source) = guard().watch(pgid, drain) {
        signal_group(pgid, libc::SIGKILL);
        let _ = child.wait().await;
        return Err(SpawnError::Guard { source });
    }
    let (stderr, stdout) = match (stdio::receiver(stderr), stdio::receiver(stdout)) {
        (Ok(e), Ok(o)) => (e, o),
        (Err(source), _) | (_, Err(source)) => return Err(spawn_error(source)),
    };
    Ok(Running {
        child,
        pgid,
        stdin,
        stdout,
        record,
        stderr,
    })
}

/// The tasks reading the child's stdout and stderr into their captures.
struct Readers {
    out: tokio::task::JoinHandle<(Vec<u8>, bool)>,
    err: tokio::task::JoinHandle<(Vec<u8>, bool)>,
    /// How the readers read: paced, draining, or stopped where they are.
    mode: watch::Sender<Reading>,
    /// The child counts in the cadence's period until its pipes are read.
    _live: cadence::Live,
}

impl Readers {
    fn start(
        stdout: OwnedFd,
        record: Option<std::fs::File>,
        stderr: OwnedFd,
        lines: Option<LineSender>,
    ) -> Self {
        let feed = |stream| lines.clone().map(|tx| LineFeed::new(tx, stream));
        let (mode, mode_rx) = watch::channel(Reading::Paced);
        let paced = |fd| PacedPipe::new(fd, mode_rx.clone());
        let out_capture = Capture::new(
            CAPTURE_HEAD,
            CAPTURE_LIMIT - CAPTURE_HEAD,
            feed(OutputStream::Stdout),
        );
        let out = match record {
            Some(file) => {
                tokio::spawn(read_recorded(paced(stdout), Record::new(file), out_capture))
            }
            None => tokio::spawn(read_capped(paced(stdout), out_capture)),
        };
        let err = tokio::spawn(read_capped(
            paced(stderr),
            Capture::new(0, STDERR_TAIL_LIMIT, feed(OutputStream::Stderr)),
        ));
        Self {
            out,
            err,
            mode,
            _live: cadence::Live::enlist(),
        }
    }
}

/// Waits for the child's exit, the deadline or a kill request, whichever comes first; the
/// last two terminate the group.
async fn supervise(
    child: &mut spawn::Child,
    pgid: i32,
    timeout: Option<Duration>,
    mut kill: watch::Receiver<Option<KillRequest>>,
    program: &str,
) -> Result<Exit, SpawnError> {
    let deadline = async {
        match timeout {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let kill_requested = async {
        loop {
            if let Some(req) = kill.borrow_and_update().clone() {
                return req;
            }
            if kill.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    };
    let waited = tokio::select! {
        status = child.wait() => Ok(status),
        _ = deadline => Err(Exit::TimedOut(timeout.unwrap_or_default())),
        req = kill_requested => Err(Exit::Killed(req.0)),
    };
    Ok(match waited {
        Ok(status) => {
            let status = status.map_err(|source| SpawnError::Wait {
                program: program.to_string(),
                source,
            })?;
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => Exit::Code(code),
                (None, Some(sig)) => Exit::Signal(sig),
                (None, None) => Exit::Code(-1),
            }
        }
        Err(exit) => {
            terminate_group(pgid, child).await;
            exit
        }
    })
}

/// Sweeps what the job left behind and gathers the captures: stdout, whether it was
/// truncated, and stderr's tail.
async fn collect(
    inv: &Invocation,
    pgid: i32,
    exit: &Exit,
    readers: Readers,
) -> (Vec<u8>, bool, Vec<u8>) {
    let marker = inv
        .env
        .iter()
        .find(|(k, _)| k == JOB_MARKER)
        .map(|(_, v)| v);
    if let (Exit::TimedOut(_) | Exit::Killed(_), Some(job)) = (exit, marker) {
        kill_marked(&[job]);
    }
    // The child is gone: what it left in the pipes is read at once, not on the cadence.
    readers.mode.send_replace(Reading::Draining);
    // Leftover group members (a backgrounded grandchild) would hold the pipes open and
    // outlive the job; sweep them.
    signal_group(pgid, libc::SIGKILL);
    let both = async { (readers.out.await, readers.err.await) };
    tokio::pin!(both);
    let (out, err) = match tokio::time::timeout(PIPE_GRACE, &mut both).await {
        Ok(done) => done,
        Err(_) => {
            // Something outside the group (`setsid`) still holds the pipes: it must not
            // keep the slot, nor outlive the job.
            if let Some(job) = marker {
                kill_marked(&[job]);
            }
            readers.mode.send_replace(Reading::Stopped);
            both.await
        }
    };
    // Only now, with the pipes read to their end, may the guard let go of them.
    guard().release(pgid);
    let (stdout, stdout_truncated) = out.unwrap_or_default();
    let (stderr_tail, _) = err.unwrap_or_default();
    (stdout, stdout_truncated, stderr_tail)
}

#[cfg(test)]
mod tests;
