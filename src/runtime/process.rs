//! Running one runtime child: its own process group, stdin feeding, capped output capture,
//! an optional live feed of its output lines, a deadline and external termination that
//! take the whole group down.
//!
//! Owns spawning and killing only; what the arguments mean and how the output is read
//! belongs to the adapters in the sibling files.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::{mpsc, watch};

/// Stdout kept for parsing; beyond it the child's output is drained and dropped.
pub const CAPTURE_LIMIT: usize = 4 * 1024 * 1024;
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
    let out_task = tokio::spawn(read_capped(
        stdout,
        CAPTURE_LIMIT,
        false,
        feed(OutputStream::Stdout),
    ));
    let err_task = tokio::spawn(read_capped(
        stderr,
        STDERR_TAIL_LIMIT,
        true,
        feed(OutputStream::Stderr),
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
    // Leftover group members (a backgrounded grandchild) would hold the pipes open and
    // outlive the job; sweep them.
    signal_group(pgid, libc::SIGKILL);
    let (stdout, stdout_truncated) = out_task.await.unwrap_or_default();
    let (stderr_tail, _) = err_task.await.unwrap_or_default();
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

/// Reads to end of stream keeping at most `limit` bytes: the head, or the tail when
/// `keep_tail`, feeding each line to `feed` on the way. Returns whether anything was
/// dropped from the capture.
async fn read_capped(
    mut r: impl AsyncRead + Unpin,
    limit: usize,
    keep_tail: bool,
    mut feed: Option<LineFeed>,
) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut dropped = false;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some(feed) = feed.as_mut() {
            feed.push(&buf[..n]).await;
        }
        if keep_tail {
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > limit {
                let cut = kept.len() - limit;
                kept.drain(..cut);
                dropped = true;
            }
        } else {
            let room = limit.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
            dropped |= n > room;
        }
    }
    if let Some(feed) = feed.as_mut() {
        feed.finish().await;
    }
    (kept, dropped)
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
    async fn output_beyond_the_capture_limit_is_dropped_and_marked() {
        let inv = sh(&format!("head -c {} /dev/zero", CAPTURE_LIMIT + 10));
        let out = run(&inv, None, no_kill(), |_| {}).await.unwrap();
        assert_eq!(out.stdout.len(), CAPTURE_LIMIT);
        assert!(out.stdout_truncated);
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
