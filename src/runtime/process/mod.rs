//! Running one runtime child: its own process group, stdin feeding, capped output capture,
//! an optional live feed of its output lines, a deadline and external termination that
//! take the whole group down.
//!
//! Owns spawning and killing only; what the arguments mean and how the output is read
//! belongs to the adapters in the sibling files.

mod capture;
mod group;
mod record;
mod spawn;

use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, watch};

use capture::{Capture, LineFeed, read_capped};
use group::{guard, terminate_group};
pub use group::{is_alive, kill_marked, signal_group};
pub use record::read_record;
use record::tail_capped;
use spawn::Spec;

/// Stdout kept for parsing: its first `CAPTURE_HEAD` bytes and its last
/// `CAPTURE_LIMIT - CAPTURE_HEAD` (the result is usually at the end); the middle of a
/// longer output is drained and dropped.
pub const CAPTURE_LIMIT: usize = 4 * 1024 * 1024;
/// The head part of `CAPTURE_LIMIT`.
pub const CAPTURE_HEAD: usize = 1024 * 1024;
/// After the child is gone, how long its pipes may stay open before whatever holds them
/// (a grandchild that left the process group) is killed and the pipes are dropped.
pub const PIPE_GRACE: Duration = Duration::from_millis(500);
/// The variable that marks every process a job started, even one that left its group.
pub const JOB_MARKER: &str = "GITMOOT_JOB_ID";
/// Stderr kept (its tail) for error messages.
pub const STDERR_TAIL_LIMIT: usize = 64 * 1024;
/// Between SIGTERM and SIGKILL when a group is terminated.
pub const TERM_GRACE: Duration = Duration::from_millis(1_500);
/// Longest line handed to the line feed; the rest of a longer line is dropped from the
/// feed (the capture still holds it) so one huge JSON event cannot balloon memory.
pub const LINE_LIMIT: usize = 1024 * 1024;

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

/// Where the live line feed goes. The reader waits for room, so a consumer that stops
/// draining slows the child rather than growing memory; a dropped receiver ends the feed.
pub type LineSender = mpsc::Sender<OutputLine>;

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
    /// Enforced `read-only` for a runtime without a sandbox of its own.
    pub sandbox: Option<super::sandbox::ReadOnly>,
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
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The last few non-empty stderr lines, for one-line error messages.
    pub fn stderr_summary(&self) -> String {
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
pub async fn run_streaming(
    inv: &Invocation,
    timeout: Option<Duration>,
    kill: watch::Receiver<Option<KillRequest>>,
    on_spawn: impl FnOnce(u32),
    lines: Option<LineSender>,
) -> Result<ProcessOutput, SpawnError> {
    run_recorded(inv, None, timeout, kill, on_spawn, lines).await
}

/// Writes as much of `bytes` as `pipe`'s buffer takes now, without waiting; returns how
/// much that was (all of it when the reader is gone: there is nothing more to write). The
/// descriptor is left non-blocking, as the side writer needs it.
fn prefill(pipe: &std::io::PipeWriter, bytes: &[u8]) -> std::io::Result<usize> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let fd = pipe.as_raw_fd();
    // SAFETY: flags of a descriptor this function's caller owns.
    let set = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if !set {
        return Err(std::io::Error::last_os_error());
    }
    let mut written = 0;
    let mut w = pipe;
    while written < bytes.len() {
        match w.write(&bytes[written..]) {
            Ok(0) => break,
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(bytes.len()),
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

/// [`run_streaming`] with the child's stdout going straight into the file `record`
/// (created 0600, or an ended run's record renamed to it, see `spare.rs`), which this side
/// tails for the capture and the line feed. The child
/// writes the file itself, so what it printed survives a daemon that dies before reading
/// it: recovery settles finished work from the file ([`read_record`]). The file stays
/// bounded on disk: what has been read beyond its first `CAPTURE_HEAD` bytes and its last
/// `CAPTURE_LIMIT - CAPTURE_HEAD` is punched out as it goes.
pub async fn run_recorded(
    inv: &Invocation,
    record: Option<&Path>,
    timeout: Option<Duration>,
    mut kill: watch::Receiver<Option<KillRequest>>,
    on_spawn: impl FnOnce(u32),
    lines: Option<LineSender>,
) -> Result<ProcessOutput, SpawnError> {
    let started = Instant::now();
    let program = inv.program.display().to_string();
    let spawn_error = |source| SpawnError::Spawn {
        program: program.clone(),
        source,
    };
    // The invocation's environment is the child's whole environment: nothing of the
    // daemon's leaks through (secrets, the home) unless the allow-list put it there.
    let spec = Spec::new(
        &inv.program,
        &inv.args,
        &inv.env,
        inv.cwd.as_deref(),
        inv.sandbox.as_ref(),
    )
    .map_err(spawn_error)?;
    // The reading side opens for writing too: punching holes (fallocate) needs it.
    let record_open = |path: &Path, create: bool| {
        std::fs::OpenOptions::new()
            .read(!create)
            .write(true)
            .create(create)
            .mode(0o600)
            .open(path)
            .map_err(|source| SpawnError::Record {
                path: path.to_path_buf(),
                source,
            })
    };
    let (stdin_child, stdin_feed): (OwnedFd, _) = match inv.stdin {
        Stdin::Null => (
            std::fs::File::open("/dev/null")
                .map_err(spawn_error)?
                .into(),
            None,
        ),
        Stdin::Bytes(_) => {
            let (r, w) = std::io::pipe().map_err(spawn_error)?;
            (r.into(), Some(w))
        }
    };
    let (stdout_child, stdout_pipe, recorded): (OwnedFd, _, _) = match record {
        Some(path) => {
            // An ended run's record, emptied, takes the name: no new inode.
            let reused = super::spare::reuse_record(path);
            let writer = record_open(path, true)?;
            // One an earlier run of the same job left is emptied, and only when not empty
            // already: on ext4 a truncation forces the output out to disk when the child
            // closes it.
            if !reused && writer.metadata().is_ok_and(|m| m.len() > 0) {
                writer.set_len(0).map_err(|source| SpawnError::Record {
                    path: path.to_path_buf(),
                    source,
                })?;
            }
            let reader = record_open(path, false)?;
            (writer.into(), None, Some(reader))
        }
        None => {
            let (r, w) = std::io::pipe().map_err(spawn_error)?;
            (w.into(), Some(r), None)
        }
    };
    let (stderr_pipe, stderr_child) = std::io::pipe().map_err(spawn_error)?;
    let stderr_child: OwnedFd = stderr_child.into();
    let mut child = spec
        .spawn([&stdin_child, &stdout_child, &stderr_child])
        .map_err(spawn_error)?;
    // Only the child holds its ends now: end of input and end of output are the child's.
    drop((stdin_child, stdout_child, stderr_child));
    let receiver = |r: std::io::PipeReader| pipe::Receiver::from_owned_fd(r.into());
    let stderr = receiver(stderr_pipe);
    let stdout = stdout_pipe.map(receiver).transpose();
    let (stderr, stdout) = match (stderr, stdout) {
        (Ok(e), Ok(o)) => (e, o),
        (Err(source), _) | (_, Err(source)) => return Err(spawn_error(source)),
    };
    let pgid = child.id();
    if let Err(source) = guard().watch(pgid) {
        signal_group(pgid, libc::SIGKILL);
        let _ = child.wait().await;
        return Err(SpawnError::Guard { source });
    }
    on_spawn(pgid as u32);

    // Only now, with the group in the guard's list, does a child waiting on its input get
    // it. A prompt that fits the pipe's buffer is written at once and its end closed;
    // what does not fit goes on the side, so a child that never reads its stdin does not
    // block us (a closed pipe is ignored).
    if let (Stdin::Bytes(bytes), Some(w)) = (&inv.stdin, stdin_feed) {
        let written = prefill(&w, bytes).unwrap_or(0);
        if written < bytes.len() {
            let mut pipe = pipe::Sender::from_owned_fd(w.into()).map_err(spawn_error)?;
            let rest = bytes[written..].to_vec();
            tokio::spawn(async move {
                let _ = pipe.write_all(&rest).await;
                let _ = pipe.shutdown().await;
            });
        }
    }
    let feed = |stream| lines.clone().map(|tx| LineFeed::new(tx, stream));
    let (stop_tx, stop_rx) = watch::channel(false);
    // Flips once the child has exited and its group is swept: the record's writers are done.
    let (exited_tx, exited_rx) = watch::channel(false);
    let out_capture = Capture::new(
        CAPTURE_HEAD,
        CAPTURE_LIMIT - CAPTURE_HEAD,
        feed(OutputStream::Stdout),
    );
    let out_task = match recorded {
        Some(file) => tokio::spawn(tail_capped(file, out_capture, exited_rx)),
        None => {
            let stdout = stdout.expect("stdout is piped when not recorded");
            tokio::spawn(read_capped(stdout, out_capture, stop_rx.clone()))
        }
    };
    let err_task = tokio::spawn(read_capped(
        stderr,
        Capture::new(0, STDERR_TAIL_LIMIT, feed(OutputStream::Stderr)),
        stop_rx,
    ));
    drop(lines);

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
    let exit = match waited {
        Ok(status) => {
            let status = status.map_err(|source| SpawnError::Wait {
                program: program.clone(),
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
            terminate_group(pgid, &mut child).await;
            exit
        }
    };
    let marker = inv
        .env
        .iter()
        .find(|(k, _)| k == JOB_MARKER)
        .map(|(_, v)| v);
    if let (Exit::TimedOut(_) | Exit::Killed(_), Some(job)) = (&exit, marker) {
        kill_marked(&[job]);
    }
    // Leftover group members (a backgrounded grandchild) would hold the pipes open and
    // outlive the job; sweep them.
    signal_group(pgid, libc::SIGKILL);
    guard().release(pgid);
    let _ = exited_tx.send(true);
    let readers = async { (out_task.await, err_task.await) };
    tokio::pin!(readers);
    let (out, err) = match tokio::time::timeout(PIPE_GRACE, &mut readers).await {
        Ok(done) => done,
        Err(_) => {
            // Something outside the group (`setsid`) still holds the pipes: it must not
            // keep the slot, nor outlive the job.
            if let Some(job) = marker {
                kill_marked(&[job]);
            }
            let _ = stop_tx.send(true);
            readers.await
        }
    };
    let (stdout, stdout_truncated) = out.unwrap_or_default();
    let (stderr_tail, _) = err.unwrap_or_default();
    Ok(ProcessOutput {
        stdout,
        stdout_truncated,
        stderr_tail,
        exit,
        elapsed: started.elapsed(),
    })
}

#[cfg(test)]
mod tests;
