//! The stdout record: the file a child writes its stdout into, tailed while it runs, kept
//! bounded on disk by punching holes, and read back by recovery after a crash.

use std::path::Path;
use std::time::Duration;

use tokio::sync::watch;

use super::capture::Capture;
use super::{CAPTURE_HEAD, CAPTURE_LIMIT};

/// Between two looks at a record file that had nothing new: short while output flows,
/// backing off while the child is quiet.
const TAIL_POLL: (Duration, Duration) = (Duration::from_millis(2), Duration::from_millis(50));
/// Punch the record in steps at least this big, not once per read.
const PUNCH_STEP: u64 = 1024 * 1024;

/// Follows the record file the child writes until the child has `exited` and everything
/// it wrote is read, into `cap`; frees what the capture no longer needs from the disk.
pub(super) async fn tail_capped(
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
