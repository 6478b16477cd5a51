//! The child's three descriptors: `/dev/null` or a pipe for stdin, pipes for stdout and
//! stderr, and the stdout record this side moves stdout into; and feeding stdin once the
//! child runs.
//!
//! Owns descriptors only: spawning, waiting and signalling are `spawn.rs`'s and
//! `group.rs`'s.

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;

use super::{SpawnError, Stdin};

/// The ends of the child's stdin, stdout and stderr, both sides.
pub(super) struct Stdio {
    /// The child's ends in descriptor order, to be dropped once it is spawned: end of
    /// input and end of output are then the child's alone.
    pub(super) child: [OwnedFd; 3],
    /// This side's end of the stdin pipe, when there are bytes to feed.
    pub(super) stdin: Option<PipeWriter>,
    pub(super) stdout: PipeReader,
    /// The stdout record, read and written by this side only.
    pub(super) record: Option<std::fs::File>,
    pub(super) stderr: PipeReader,
}

/// Opens the three streams of `stdin`, stdout and stderr, and the stdout record at
/// `record` (created 0600, or an ended run's record renamed to it, see `spare.rs`).
pub(super) fn open(
    stdin: &Stdin,
    record: Option<&Path>,
    spawn_error: &impl Fn(std::io::Error) -> SpawnError,
) -> Result<Stdio, SpawnError> {
    let (stdin_child, stdin_feed): (OwnedFd, _) = match stdin {
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
    let record = record.map(open_record).transpose()?;
    let (stdout, stdout_child) = std::io::pipe().map_err(spawn_error)?;
    let (stderr, stderr_child) = std::io::pipe().map_err(spawn_error)?;
    Ok(Stdio {
        child: [stdin_child, stdout_child.into(), stderr_child.into()],
        stdin: stdin_feed,
        stdout,
        record,
        stderr,
    })
}

/// The record at `path`, empty, for this side to write and read.
fn open_record(path: &Path) -> Result<std::fs::File, SpawnError> {
    let record_error = |source| SpawnError::Record {
        path: path.to_path_buf(),
        source,
    };
    // An ended run's record, emptied, takes the name: no new inode.
    let reused = super::super::spare::reuse_record(path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        // Emptied below, and only when it is not empty already.
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(record_error)?;
    // One an earlier run of the same job left is emptied, and only when not empty
    // already: on ext4 a truncation forces the output out to disk at the next close.
    if !reused && file.metadata().is_ok_and(|m| m.len() > 0) {
        file.set_len(0).map_err(record_error)?;
    }
    super::record::clear_mark(&file);
    Ok(file)
}

/// A pipe's reading end, non-blocking, for `paced.rs`.
pub(super) fn receiver(r: PipeReader) -> std::io::Result<OwnedFd> {
    let fd = OwnedFd::from(r);
    set_nonblocking(fd.as_raw_fd())?;
    Ok(fd)
}

/// Adds `O_NONBLOCK` to a descriptor the caller holds.
fn set_nonblocking(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl(2) on a descriptor the caller holds, only adding O_NONBLOCK.
    let set = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if set {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Gives the running child its input. A prompt that fits the pipe's buffer is written at
/// once and its end closed; what does not fit goes on the side, so a child that never
/// reads its stdin does not block us (a closed pipe is ignored).
pub(super) fn feed(
    stdin: &Stdin,
    feed: Option<PipeWriter>,
    spawn_error: &impl Fn(std::io::Error) -> SpawnError,
) -> Result<(), SpawnError> {
    let (Stdin::Bytes(bytes), Some(w)) = (stdin, feed) else {
        return Ok(());
    };
    let written = prefill(&w, bytes).unwrap_or(0);
    if written < bytes.len() {
        let mut pipe = pipe::Sender::from_owned_fd(w.into()).map_err(spawn_error)?;
        let rest = bytes[written..].to_vec();
        tokio::spawn(async move {
            let _ = pipe.write_all(&rest).await;
            let _ = pipe.shutdown().await;
        });
    }
    Ok(())
}

/// Writes as much of `bytes` as `pipe`'s buffer takes now, without waiting; returns how
/// much that was (all of it when the reader is gone: there is nothing more to write). The
/// descriptor is left non-blocking, as the side writer needs it.
fn prefill(pipe: &PipeWriter, bytes: &[u8]) -> std::io::Result<usize> {
    use std::io::Write;
    set_nonblocking(pipe.as_raw_fd())?;
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
