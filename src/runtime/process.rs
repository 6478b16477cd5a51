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

/// The daemon's end of the pipe its jobs' guards wait on: nobody ever writes it, so a
/// read returns only once this process is gone and the write end closes with it.
#[derive(Debug, Clone, Copy)]
struct Lifeline {
    read: i32,
    write: i32,
}

fn lifeline() -> std::io::Result<Lifeline> {
    static LIFELINE: std::sync::OnceLock<Lifeline> = std::sync::OnceLock::new();
    if let Some(l) = LIFELINE.get() {
        return Ok(*l);
    }
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two descriptors; close-on-exec keeps them out of agents.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let made = Lifeline {
        read: fds[0],
        write: fds[1],
    };
    let kept = *LIFELINE.get_or_init(|| made);
    if kept.read != made.read {
        // Another thread won the race: ours is not needed.
        // SAFETY: descriptors this call just made and nobody else has seen.
        unsafe {
            libc::close(made.read);
            libc::close(made.write);
        }
    }
    Ok(kept)
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

/// [`run_streaming`] with the child's stdout going straight into the file `record`
/// (created 0600), which this side tails for the capture and the line feed. The child
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
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let lifeline = lifeline().map_err(|source| SpawnError::Spawn {
        program: program.clone(),
        source,
    })?;
    let sandbox = inv.sandbox.clone();
    // SAFETY: between fork and exec only async-signal-safe calls run (prctl, fork, close,
    // read, kill, _exit, the sandbox's syscalls), touching only the child being set up
    // and its guard.
    unsafe {
        cmd.pre_exec(move || {
            // The leader dies with the daemon thread that spawned it.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Its descendants too: a guard left in the job's process group waits on the
            // daemon's lifeline pipe and, when the daemon is gone (its write end closed,
            // however it died), kills the whole group, so a crashed daemon's agents cannot
            // run on unsupervised. A normal end sweeps the group, guard included.
            match libc::fork() {
                -1 => Err(std::io::Error::last_os_error()),
                0 => {
                    // Keep nothing but the lifeline: a copy of another job's stdin pipe
                    // or of the daemon's lock would hold them open past their owners.
                    let keep = lifeline.read as u32;
                    if keep > 0 {
                        libc::close_range(0, keep - 1, 0);
                    }
                    libc::close_range(keep + 1, u32::MAX, 0);
                    let mut byte = 0u8;
                    while libc::read(lifeline.read, (&raw mut byte).cast(), 1) < 0 {}
                    libc::kill(0, libc::SIGKILL);
                    libc::_exit(0)
                }
                // The guard stays unrestricted; the agent is sandboxed last, once nothing
                // else of the set-up needs to write.
                _ => match &sandbox {
                    Some(ro) => ro.apply(),
                    None => Ok(()),
                },
            }
        });
    }
    if let Some(dir) = &inv.cwd {
        cmd.current_dir(dir);
    }
    // The reading side opens for writing too: punching holes (fallocate) needs it.
    let record_open = |path: &Path, create: bool| {
        std::fs::OpenOptions::new()
            .read(!create)
            .write(true)
            .create(create)
            .truncate(create)
            .mode(0o600)
            .open(path)
            .map_err(|source| SpawnError::Record {
                path: path.to_path_buf(),
                source,
            })
    };
    let recorded = match record {
        Some(path) => {
            let writer = record_open(path, true)?;
            let reader = record_open(path, false)?;
            cmd.stdout(Stdio::from(writer));
            Some(reader)
        }
        None => {
            cmd.stdout(Stdio::piped());
            None
        }
    };
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
    let stderr = child.stderr.take().expect("stderr is piped");
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
            let stdout = child.stdout.take().expect("stdout is piped");
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

/// The kept part of one output stream: its first `head` bytes and its last `tail`, with
/// each line fed on the way.
struct Capture {
    head: usize,
    tail: usize,
    first: Vec<u8>,
    last: Vec<u8>,
    dropped: bool,
    feed: Option<LineFeed>,
}

impl Capture {
    fn new(head: usize, tail: usize, feed: Option<LineFeed>) -> Self {
        Self {
            head,
            tail,
            first: Vec::new(),
            last: Vec::new(),
            dropped: false,
            feed,
        }
    }

    async fn push(&mut self, chunk: &[u8]) {
        if let Some(feed) = self.feed.as_mut() {
            feed.push(chunk).await;
        }
        let room = self.head.saturating_sub(self.first.len());
        let (to_head, rest) = chunk.split_at(chunk.len().min(room));
        self.first.extend_from_slice(to_head);
        self.last.extend_from_slice(rest);
        if self.last.len() > self.tail {
            let cut = self.last.len() - self.tail;
            self.last.drain(..cut);
            self.dropped = true;
        }
    }

    /// The kept bytes (head then tail) and whether anything between them was dropped.
    async fn finish(mut self) -> (Vec<u8>, bool) {
        if let Some(feed) = self.feed.as_mut() {
            feed.finish().await;
        }
        self.first.extend_from_slice(&self.last);
        (self.first, self.dropped)
    }
}

/// Reads a pipe to its end (or until `stop`) into `cap`.
async fn read_capped(
    mut r: impl AsyncRead + Unpin,
    mut cap: Capture,
    mut stop: watch::Receiver<bool>,
) -> (Vec<u8>, bool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = tokio::select! {
            read = r.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            _ = stop.wait_for(|s| *s) => break,
        };
        cap.push(&buf[..n]).await;
    }
    cap.finish().await
}

/// Between two looks at a record file that had nothing new: short while output flows,
/// backing off while the child is quiet.
const TAIL_POLL: (Duration, Duration) = (Duration::from_millis(2), Duration::from_millis(50));
/// Punch the record in steps at least this big, not once per read.
const PUNCH_STEP: u64 = 1024 * 1024;

/// Follows the record file the child writes until the child has `exited` and everything
/// it wrote is read, into `cap`; frees what the capture no longer needs from the disk.
async fn tail_capped(
    mut file: std::fs::File,
    mut cap: Capture,
    mut exited: watch::Receiver<bool>,
) -> (Vec<u8>, bool) {
    use std::io::Read;
    let mut buf = vec![0u8; 64 * 1024];
    let mut wait = TAIL_POLL.0;
    let (mut read, mut punched) = (0u64, cap.head as u64);
    loop {
        // Read before deciding: once the exit is seen, one more empty read proves the end.
        let done = *exited.borrow_and_update();
        // A regular file: the read returns at once with what is there.
        let n = file.read(&mut buf).unwrap_or(0);
        if n > 0 {
            cap.push(&buf[..n]).await;
            read += n as u64;
            let keep_from = read.saturating_sub(cap.tail as u64);
            if keep_from >= punched + PUNCH_STEP {
                punch(&file, punched, keep_from - punched);
                punched = keep_from;
            }
            wait = TAIL_POLL.0;
            continue;
        }
        if done {
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = exited.changed() => {}
        }
        wait = (wait * 2).min(TAIL_POLL.1);
    }
    cap.finish().await
}

/// Frees `len` bytes at `offset` of `file` on disk, keeping its size; a file system that
/// cannot punch holes keeps them (the record is then as long as the output).
fn punch(file: &std::fs::File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate(2) on a descriptor we own; the flags only deallocate a range.
    unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        );
    }
}

/// What recovery reads of a record: its first `CAPTURE_HEAD` bytes and its last
/// `CAPTURE_LIMIT - CAPTURE_HEAD` (what the live capture would have kept), and whether
/// anything between them was left out.
pub fn read_record(path: &Path) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len <= CAPTURE_LIMIT as u64 {
        let mut all = Vec::with_capacity(len as usize);
        file.read_to_end(&mut all)?;
        return Ok((all, false));
    }
    let mut kept = vec![0u8; CAPTURE_HEAD];
    file.read_exact(&mut kept)?;
    let tail = (CAPTURE_LIMIT - CAPTURE_HEAD) as u64;
    file.seek(SeekFrom::Start(len - tail))?;
    file.read_to_end(&mut kept)?;
    Ok((kept, true))
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
            sandbox: None,
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
    async fn a_recorded_run_is_captured_from_the_file_the_child_writes_which_stays_bounded() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("job.out");
        let big = 4 * CAPTURE_LIMIT;
        let inv = sh(&format!(
            "echo first; head -c {big} /dev/zero | tr '\\0' x; echo; sleep 0.1; echo last"
        ));
        let (tx, mut rx) = mpsc::channel::<OutputLine>(1024);
        let fed = tokio::spawn(async move {
            let mut n = 0;
            while let Some(line) = rx.recv().await {
                n += usize::from(line.stream == OutputStream::Stdout);
            }
            n
        });
        let out = run_recorded(&inv, Some(&record), None, no_kill(), |_| {}, Some(tx))
            .await
            .unwrap();
        assert_eq!(out.exit, Exit::Code(0));
        assert!(out.stdout_truncated);
        assert_eq!(out.stdout.len(), CAPTURE_LIMIT);
        assert!(out.stdout.starts_with(b"first\n"));
        assert!(out.stdout.ends_with(b"\nlast\n"));
        assert_eq!(fed.await.unwrap(), 3, "every line is fed from the file");
        let meta = std::fs::metadata(&record).unwrap();
        assert!(meta.len() > big as u64);
        // What was read past the head and the tail is freed on disk as the run goes.
        assert!(
            meta.blocks() * 512 < 2 * CAPTURE_LIMIT as u64,
            "{} bytes on disk",
            meta.blocks() * 512
        );
        let (kept, cut) = read_record(&record).unwrap();
        assert!(cut);
        assert_eq!(kept, out.stdout);
    }

    #[tokio::test]
    async fn a_recorded_run_keeps_what_the_child_printed_without_a_reader() {
        // The child writes the record itself: its output is on disk the moment it prints,
        // whether or not this side has read it yet (a daemon may die in between).
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("job.out");
        let marker = dir.path().join("printed");
        let inv = sh(&format!("echo result; touch {}; sleep 5", marker.display()));
        let run = run_recorded(&inv, Some(&record), None, no_kill(), |_| {}, None);
        tokio::pin!(run);
        let seen = async {
            while !marker.exists() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            std::fs::read(&record).unwrap()
        };
        tokio::select! {
            bytes = seen => assert_eq!(bytes, b"result\n"),
            _ = &mut run => panic!("the child should still be running"),
        }
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
