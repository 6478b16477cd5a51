//! Running one runtime child: its own process group, stdin feeding, capped output capture,
//! an optional live feed of its output lines, a deadline and external termination that
//! take the whole group down.
//!
//! Owns spawning and killing only; what the arguments mean and how the output is read
//! belongs to the adapters in the sibling files.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::{mpsc, watch};

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

/// Sends `signal` to every process of the group led by `pgid`; a gone group is fine.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid only signals that process group.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Whether `pid` names a live (not zombie) process.
pub fn is_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// Runs the invocation to its end, the deadline or a kill request, whichever comes first.
///
/// The child leads a new process group, so termination reaches every grandchild; the
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

/// [`run_streaming`], also appending the child's stdout to `record` (created 0600) as it
/// arrives, so a daemon that dies after its agent finished leaves the agent's output for
/// recovery to settle from. The record is bounded: its first `CAPTURE_LIMIT` bytes.
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
    let mut cmd = Command::new(&inv.program);
    // The invocation's environment is the child's whole environment: nothing of the
    // daemon's leaks through (secrets, the home) unless the allow-list put it there.
    cmd.args(&inv.args)
        .env_clear()
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .stdin(match inv.stdin {
            Stdin::Null => Stdio::null(),
            Stdin::Bytes(_) => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: prctl is async-signal-safe and touches only the child being set up.
    unsafe {
        cmd.pre_exec(|| {
            // The leader dies with the daemon thread that spawned it: a crashed daemon's
            // agents cannot run on unsupervised (recovery fails and re-queues their jobs).
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    if let Some(dir) = &inv.cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|source| SpawnError::Spawn {
        program: program.clone(),
        source,
    })?;
    let pgid = child.id().unwrap_or(0) as i32;
    on_spawn(pgid as u32);

    if let (Stdin::Bytes(bytes), Some(mut pipe)) = (&inv.stdin, child.stdin.take()) {
        let bytes = bytes.clone();
        // A child that never reads its stdin must not block us: write on the side and
        // ignore a closed pipe.
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
            let _ = pipe.shutdown().await;
        });
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let feed = |stream| lines.clone().map(|tx| LineFeed::new(tx, stream));
    let (stop_tx, stop_rx) = watch::channel(false);
    let record = match record {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(path)
                .map_err(|source| SpawnError::Record {
                    path: path.to_path_buf(),
                    source,
                })?,
        ),
        None => None,
    };
    let out_task = tokio::spawn(read_capped(
        stdout,
        CAPTURE_HEAD,
        CAPTURE_LIMIT - CAPTURE_HEAD,
        feed(OutputStream::Stdout),
        stop_rx.clone(),
        record,
    ));
    let err_task = tokio::spawn(read_capped(
        stderr,
        0,
        STDERR_TAIL_LIMIT,
        feed(OutputStream::Stderr),
        stop_rx,
        None,
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

/// SIGTERM to the group, a short grace for the leader, then SIGKILL to the group.
async fn terminate_group(pgid: i32, child: &mut tokio::process::Child) {
    signal_group(pgid, libc::SIGTERM);
    if tokio::time::timeout(TERM_GRACE, child.wait())
        .await
        .is_err()
    {
        signal_group(pgid, libc::SIGKILL);
        let _ = child.wait().await;
    }
    signal_group(pgid, libc::SIGKILL);
}

/// Splits one stream into lines for the live feed.
struct LineFeed {
    tx: Option<LineSender>,
    stream: OutputStream,
    pending: Vec<u8>,
    /// The current line passed `LINE_LIMIT`; skip to its newline.
    overlong: bool,
}

impl LineFeed {
    fn new(tx: LineSender, stream: OutputStream) -> Self {
        Self {
            tx: Some(tx),
            stream,
            pending: Vec::new(),
            overlong: false,
        }
    }

    async fn push(&mut self, mut chunk: &[u8]) {
        while self.tx.is_some() && !chunk.is_empty() {
            let (piece, complete) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], Some(i + 1)),
                None => (chunk, None),
            };
            if !self.overlong {
                let room = LINE_LIMIT - self.pending.len();
                self.pending
                    .extend_from_slice(&piece[..piece.len().min(room)]);
                self.overlong = piece.len() > room;
            }
            match complete {
                Some(used) => {
                    self.emit().await;
                    chunk = &chunk[used..];
                }
                None => chunk = &[],
            }
        }
    }

    async fn emit(&mut self) {
        let bytes = std::mem::take(&mut self.pending);
        self.overlong = false;
        if let Some(tx) = &self.tx {
            let line = OutputLine {
                stream: self.stream,
                bytes,
            };
            if tx.send(line).await.is_err() {
                self.tx = None;
            }
        }
    }

    async fn finish(&mut self) {
        if !self.pending.is_empty() || self.overlong {
            self.emit().await;
        }
    }
}

/// SIGKILLs every process whose environment carries `JOB_MARKER=<one of jobs>`: each
/// job's whole descendant tree, including children that left its process group or
/// session. One pass over `/proc` whatever the number of jobs.
pub fn kill_marked(jobs: &[&str]) {
    if jobs.is_empty() {
        return;
    }
    let needles: Vec<String> = jobs.iter().map(|j| format!("{JOB_MARKER}={j}")).collect();
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if pid as u32 == me {
            continue;
        }
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if env
            .split(|b| *b == 0)
            .any(|kv| needles.iter().any(|n| kv == n.as_bytes()))
        {
            // SAFETY: kill(2) on one pid that carries a marker of these jobs.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Reads to end of stream (or until `stop`) keeping the first `head` bytes and the last
/// `tail`, feeding each line to `feed` on the way. Returns the kept bytes (head then
/// tail) and whether anything between them was dropped.
async fn read_capped(
    mut r: impl AsyncRead + Unpin,
    head: usize,
    tail: usize,
    mut feed: Option<LineFeed>,
    mut stop: watch::Receiver<bool>,
    mut record: Option<std::fs::File>,
) -> (Vec<u8>, bool) {
    let mut first = Vec::new();
    let mut last = Vec::new();
    let mut recorded = 0usize;
    let mut dropped = false;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = tokio::select! {
            read = r.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            _ = stop.wait_for(|s| *s) => break,
        };
        if let Some(feed) = feed.as_mut() {
            feed.push(&buf[..n]).await;
        }
        // The record is bounded like the capture: its first `head + tail` bytes.
        let room = (head + tail).saturating_sub(recorded);
        if room > 0
            && let Some(file) = record.as_mut()
        {
            let part = &buf[..n.min(room)];
            recorded += part.len();
            // A local file write of one chunk: brief enough to do on the reader task.
            if std::io::Write::write_all(file, part).is_err() {
                record = None;
            }
        }
        let room = head.saturating_sub(first.len());
        let (to_head, rest) = buf[..n].split_at(n.min(room));
        first.extend_from_slice(to_head);
        last.extend_from_slice(rest);
        if last.len() > tail {
            let cut = last.len() - tail;
            last.drain(..cut);
            dropped = true;
        }
    }
    if let Some(feed) = feed.as_mut() {
        feed.finish().await;
    }
    first.extend_from_slice(&last);
    (first, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Invocation {
        Invocation {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            cwd: None,
            stdin: Stdin::Null,
        }
    }

    fn no_kill() -> watch::Receiver<Option<KillRequest>> {
        watch::channel(None).1
    }

    #[tokio::test]
    async fn captures_stdout_stderr_and_the_exit_code() {
        let mut inv = sh("cat; echo oops >&2; exit 3");
        inv.stdin = Stdin::Bytes(b"hello".to_vec());
        let out = run(&inv, None, no_kill(), |_| {}).await.unwrap();
        assert_eq!(out.stdout, b"hello");
        assert_eq!(out.stderr_summary(), "oops");
        assert_eq!(out.exit, Exit::Code(3));
    }

    #[tokio::test]
    async fn the_deadline_kills_the_whole_group() {
        let dir = std::env::temp_dir().join(format!("gm-proc-{}", crate::ids::random_hex(4)));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("pid");
        let inv = sh(&format!(
            "sleep 300 & echo $! > {}; wait",
            pidfile.display()
        ));
        let mut leader = 0;
        let out = run(&inv, Some(Duration::from_millis(300)), no_kill(), |p| {
            leader = p
        })
        .await
        .unwrap();
        assert_eq!(out.exit, Exit::TimedOut(Duration::from_millis(300)));
        let grandchild: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL is delivered asynchronously: allow the scheduler a moment on a busy box.
        let gone = |pid: i32| {
            (0..100).any(|_| {
                let dead = !is_alive(pid);
                if !dead {
                    std::thread::sleep(Duration::from_millis(20));
                }
                dead
            })
        };
        assert!(gone(grandchild), "grandchild {grandchild} survived");
        assert!(gone(leader as i32));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_kill_request_terminates_and_says_why() {
        let (tx, rx) = watch::channel(None);
        let inv = sh("sleep 300");
        let handle = tokio::spawn(async move { run(&inv, None, rx, |_| {}).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.send(Some(KillRequest("operator".into()))).unwrap();
        let out = handle.await.unwrap().unwrap();
        assert_eq!(out.exit, Exit::Killed("operator".into()));
    }

    #[tokio::test]
    async fn output_beyond_the_capture_limit_keeps_its_head_and_tail() {
        let inv = sh(&format!(
            "echo first; head -c {} /dev/zero; echo; echo last",
            CAPTURE_LIMIT + 10
        ));
        let out = run(&inv, None, no_kill(), |_| {}).await.unwrap();
        assert_eq!(out.stdout.len(), CAPTURE_LIMIT);
        assert!(out.stdout_truncated);
        assert!(out.stdout.starts_with(b"first\n"));
        assert!(out.stdout.ends_with(b"\nlast\n"));
    }

    #[tokio::test]
    async fn lines_are_fed_as_they_arrive_and_the_capture_is_unchanged() {
        let (tx, mut rx) = mpsc::channel(16);
        // The second line is printed only after the test has seen the first, so the
        // feed must deliver lines while the child still runs.
        let dir = std::env::temp_dir().join(format!("gm-lines-{}", crate::ids::random_hex(4)));
        std::fs::create_dir_all(&dir).unwrap();
        let gate = dir.join("go");
        let inv = sh(&format!(
            "echo one; echo warn >&2; while [ ! -e {} ]; do sleep 0.01; done; printf 'two\\nthree'",
            gate.display()
        ));
        let handle =
            tokio::spawn(
                async move { run_streaming(&inv, None, no_kill(), |_| {}, Some(tx)).await },
            );
        let mut seen = Vec::new();
        while seen.len() < 2 {
            seen.push(rx.recv().await.unwrap());
        }
        std::fs::write(&gate, "").unwrap();
        while let Some(line) = rx.recv().await {
            seen.push(line);
        }
        let out = handle.await.unwrap().unwrap();
        let text = |s: OutputStream| -> Vec<String> {
            seen.iter()
                .filter(|l| l.stream == s)
                .map(|l| String::from_utf8_lossy(&l.bytes).into_owned())
                .collect()
        };
        assert_eq!(text(OutputStream::Stdout), ["one", "two", "three"]);
        assert_eq!(text(OutputStream::Stderr), ["warn"]);
        assert_eq!(out.stdout, b"one\ntwo\nthree");
        assert_eq!(out.stderr_summary(), "warn");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error_naming_it() {
        let mut inv = sh("true");
        inv.program = "/nonexistent/claude".into();
        let err = run(&inv, None, no_kill(), |_| {}).await.unwrap_err();
        assert!(err.to_string().contains("/nonexistent/claude"), "{err}");
    }
}
