//! The stdout record: the file this side moves a child's stdout into as it reads it (with
//! `splice`, so a chunk is on disk before this side looks at it and nothing is ever only in
//! this process's memory), kept within `CAPTURE_LIMIT` on disk at every moment, and read
//! back by recovery after a crash.
//!
//! The child prints into a pipe, so one that prints faster than it is read waits on it:
//! the record is only ever written here, one chunk at a time, and trimmed after each
//! chunk that took it past `TRIM_AT`. Trimmed, it keeps the output's first `CAPTURE_HEAD`
//! bytes and at least its last `KEEP_TAIL`; the middle is cut out of the file
//! (`FALLOC_FL_COLLAPSE_RANGE`) or, on a file system that cannot collapse, freed in place
//! (a hole: the length grows, the disk use does not). A collapsed record is marked with an
//! extended attribute, since its length no longer says it was cut.
//!
//! What a dead daemon had not read yet is still in the pipe, whose reading end the guard
//! also holds (`guard.rs`): it appends that to the record once the daemon is gone.
//!
//! Knows bytes and files only; which file a job's record is belongs to the daemon.

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::capture::Capture;
use super::paced::PacedPipe;
use super::{CAPTURE_HEAD, CAPTURE_LIMIT};

/// The most moved from the pipe in one step.
const CHUNK: usize = 64 * 1024;
/// The least of the output's end a trimmed record keeps (the result is at the end).
const KEEP_TAIL: u64 = 1024 * 1024;
/// A record longer than this after a chunk is trimmed. Below `CAPTURE_LIMIT` by a chunk
/// and by what the guard may append from the pipe after a crash.
const TRIM_AT: u64 = (CAPTURE_LIMIT - 2 * CHUNK) as u64;
/// The extended attribute of a record whose middle was collapsed out.
const CUT_MARK: &std::ffi::CStr = c"user.gitmoot.cut";

/// Moves the pipe's bytes into `record` and from there into `cap` until the pipe's end
/// (or until told to stop), on the cadence while the child is quiet.
pub(super) async fn read_recorded(
    mut pipe: PacedPipe,
    mut record: Record,
    mut cap: Capture,
) -> (Vec<u8>, bool) {
    let mut buf = vec![0u8; CHUNK];
    while let Some(n) = pipe.next(|fd| record.take(fd, &mut buf)).await {
        cap.push(&buf[..n]).await;
    }
    cap.finish().await
}

/// How a record's middle is taken off the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shrink {
    /// Cut out of the file: its length stays within the cap.
    Collapse,
    /// Freed in place: its disk use stays within the cap, its length grows.
    Punch,
    /// Neither works here: the record is as long as the output.
    Off,
}

/// How a chunk goes from the pipe into the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moving {
    /// `splice`: the kernel moves it, and it is on disk before this side reads it back.
    Splice,
    /// A read and a write, where the file system takes no `splice`.
    Copy,
    /// The record could not be written (a full disk): the output is still read and
    /// captured, only no longer recorded.
    Unrecorded,
}

/// One record being written.
#[derive(Debug)]
pub(super) struct Record {
    file: std::fs::File,
    /// The file's length: every byte of it was written here.
    len: u64,
    /// How bytes get from the pipe to the record.
    moving: Moving,
    shrink: Shrink,
    /// The file system's block: collapsed and punched ranges are whole blocks.
    block: u64,
    /// Where the hole ends so far (`Shrink::Punch`).
    punched: u64,
    /// The collapse mark is set.
    marked: bool,
}

impl Record {
    /// A record over `file`, opened for reading and writing and empty.
    pub(super) fn new(file: std::fs::File) -> Self {
        use std::os::unix::fs::MetadataExt;
        let block = file.metadata().map_or(4096, |m| m.blksize()).max(1);
        // The head stays whole: a block that straddles its end cannot go.
        let shrink = if (CAPTURE_HEAD as u64).is_multiple_of(block) {
            Shrink::Collapse
        } else {
            Shrink::Off
        };
        Self {
            file,
            len: 0,
            moving: Moving::Splice,
            shrink,
            block,
            punched: CAPTURE_HEAD as u64,
            marked: false,
        }
    }

    /// Moves what `pipe` holds now (at most `buf`'s length) to the record's end, and
    /// those bytes into `buf`: `Ok(0)` at the pipe's end, `WouldBlock` when it is empty.
    /// A record that cannot be written stops being written; the pipe is still read.
    fn take(&mut self, pipe: RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match self.moving {
            Moving::Splice => match splice(pipe, &self.file, self.len, buf.len()) {
                Ok(n) => {
                    self.file.read_exact_at(&mut buf[..n], self.len)?;
                    n
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(e),
                Err(e) => {
                    // Not a file system that splices: copy. Anything else is the record's
                    // (the pipe's own errors come back from the read below).
                    self.moving = if e.raw_os_error() == Some(libc::EINVAL) {
                        Moving::Copy
                    } else {
                        Moving::Unrecorded
                    };
                    return self.take(pipe, buf);
                }
            },
            Moving::Copy | Moving::Unrecorded => {
                // SAFETY: read(2) into a buffer we own, at most its length.
                let n = unsafe { libc::read(pipe, buf.as_mut_ptr().cast(), buf.len()) };
                let n = usize::try_from(n).map_err(|_| std::io::Error::last_os_error())?;
                if self.moving == Moving::Copy
                    && self.file.write_all_at(&buf[..n], self.len).is_err()
                {
                    self.moving = Moving::Unrecorded;
                }
                n
            }
        };
        if self.moving == Moving::Unrecorded {
            return Ok(n);
        }
        self.len += n as u64;
        if self.len > TRIM_AT {
            self.trim();
        }
        Ok(n)
    }

    fn trim(&mut self) {
        if self.shrink == Shrink::Collapse {
            match self.collapse() {
                Ok(()) => return,
                // Not this file system: free the middle in place instead.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EINVAL)) => {
                    self.shrink = Shrink::Punch
                }
                Err(_) => return,
            }
        }
        if self.shrink == Shrink::Punch {
            self.punch();
        }
    }

    fn collapse(&mut self) -> std::io::Result<()> {
        let head = CAPTURE_HEAD as u64;
        let cut = round_down(self.len - head - KEEP_TAIL, self.block);
        if cut == 0 {
            return Ok(());
        }
        fallocate(&self.file, libc::FALLOC_FL_COLLAPSE_RANGE, head, cut)?;
        self.len -= cut;
        if !self.marked {
            self.marked = set_mark(&self.file).is_ok();
        }
        Ok(())
    }

    fn punch(&mut self) {
        let keep_from = round_down(self.len - KEEP_TAIL, self.block);
        if keep_from <= self.punched {
            return;
        }
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        match fallocate(&self.file, mode, self.punched, keep_from - self.punched) {
            Ok(()) => self.punched = keep_from,
            Err(_) => self.shrink = Shrink::Off,
        }
    }
}

/// splice(2) of at most `len` bytes from `pipe` to `file` at `at`, without waiting on an
/// empty pipe.
fn splice(pipe: RawFd, file: &std::fs::File, at: u64, len: usize) -> std::io::Result<usize> {
    let mut off = at as libc::loff_t;
    // SAFETY: splice(2) between two descriptors we hold, with an offset we own.
    let n = unsafe {
        libc::splice(
            pipe,
            std::ptr::null_mut(),
            file.as_raw_fd(),
            &mut off,
            len,
            libc::SPLICE_F_NONBLOCK,
        )
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

fn round_down(n: u64, block: u64) -> u64 {
    n - n % block
}

fn fallocate(file: &std::fs::File, mode: i32, offset: u64, len: u64) -> std::io::Result<()> {
    // SAFETY: fallocate(2) on a descriptor we own; the modes only remove a range.
    let done = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            mode,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn set_mark(file: &std::fs::File) -> std::io::Result<()> {
    // SAFETY: an attribute name and a one-byte value, both alive for the call.
    let done = unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            CUT_MARK.as_ptr(),
            b"1".as_ptr().cast(),
            1,
            0,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Forgets that an earlier run's record, now emptied for reuse, was cut.
pub(super) fn clear_mark(file: &std::fs::File) {
    // SAFETY: an attribute name alive for the call; a missing attribute is no error here.
    unsafe {
        libc::fremovexattr(file.as_raw_fd(), CUT_MARK.as_ptr());
    }
}

fn has_mark(file: &std::fs::File) -> bool {
    let mut value = [0u8; 1];
    // SAFETY: reads at most one byte into a buffer of one byte.
    let got = unsafe {
        libc::fgetxattr(
            file.as_raw_fd(),
            CUT_MARK.as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    got >= 0
}

/// What recovery reads of a record: its first `CAPTURE_HEAD` bytes and at most its last
/// `CAPTURE_LIMIT - CAPTURE_HEAD` (what the live capture would have kept, or the part of it
/// the record still holds), and whether anything between them was left out.
pub fn read_record(path: &Path) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len <= CAPTURE_LIMIT as u64 {
        let mut all = Vec::with_capacity(len as usize);
        file.read_to_end(&mut all)?;
        return Ok((all, has_mark(&file)));
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
    use std::io::Write;

    /// Byte `i` of the test output.
    fn byte(i: u64) -> u8 {
        (i % 251) as u8
    }

    /// Moves `len` bytes of output through a pipe into a record (`shrink` forced when
    /// given); returns the record's path, its longest length and most blocks on disk.
    fn through_record(len: u64, shrink: Option<Shrink>) -> (tempfile::TempDir, u64, u64) {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.out");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut record = Record::new(file);
        if let Some(shrink) = shrink {
            record.shrink = shrink;
        }
        let (r, mut w) = std::io::pipe().unwrap();
        let writer = std::thread::spawn(move || {
            let out: Vec<u8> = (0..len).map(byte).collect();
            for piece in out.chunks(40_000) {
                w.write_all(piece).unwrap();
            }
        });
        let mut buf = vec![0u8; CHUNK];
        let (mut longest, mut most_blocks, mut seen) = (0, 0, 0u64);
        loop {
            // The move never waits on an empty pipe.
            let n = match record.take(r.as_raw_fd(), &mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::yield_now();
                    continue;
                }
                moved => moved.unwrap(),
            };
            if n == 0 {
                break;
            }
            assert!(buf[..n].iter().zip(seen..).all(|(b, i)| *b == byte(i)));
            seen += n as u64;
            let meta = record.file.metadata().unwrap();
            longest = longest.max(meta.len());
            most_blocks = most_blocks.max(meta.blocks() * 512);
        }
        writer.join().unwrap();
        assert_eq!(seen, len, "every byte passed through");
        (dir, longest, most_blocks)
    }

    #[test]
    fn a_long_output_keeps_its_head_and_end_and_the_record_never_passes_the_cap() {
        let len = 12 * CAPTURE_LIMIT as u64 + 12_345;
        let (dir, longest, _) = through_record(len, None);
        assert!(longest <= CAPTURE_LIMIT as u64, "{longest} bytes");
        let (kept, cut) = read_record(&dir.path().join("job.out")).unwrap();
        assert!(cut, "a cut record says so");
        assert!(
            kept[..CAPTURE_HEAD]
                .iter()
                .zip(0..)
                .all(|(b, i)| *b == byte(i))
        );
        let tail = &kept[CAPTURE_HEAD..];
        assert!(tail.len() as u64 >= KEEP_TAIL);
        let from = len - tail.len() as u64;
        assert!(tail.iter().zip(from..).all(|(b, i)| *b == byte(i)));
    }

    #[test]
    fn where_collapsing_is_refused_the_middle_is_freed_in_place() {
        let len = 12 * CAPTURE_LIMIT as u64;
        let (dir, longest, most_blocks) = through_record(len, Some(Shrink::Punch));
        assert_eq!(longest, len, "a hole keeps the length");
        // A block or two of slack for what the file system allocates ahead.
        assert!(
            most_blocks <= CAPTURE_LIMIT as u64 + 64 * 1024,
            "{most_blocks} on disk"
        );
        let (kept, cut) = read_record(&dir.path().join("job.out")).unwrap();
        assert!(cut);
        assert_eq!(*kept.last().unwrap(), byte(len - 1));
    }

    #[test]
    fn a_record_that_cannot_be_written_still_passes_the_output_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.out");
        std::fs::write(&path, b"").unwrap();
        // A descriptor the record cannot be written through stands for a full disk.
        let mut record = Record::new(std::fs::File::open(&path).unwrap());
        let (r, mut w) = std::io::pipe().unwrap();
        w.write_all(b"the result\n").unwrap();
        drop(w);
        let mut buf = vec![0u8; CHUNK];
        let n = record.take(r.as_raw_fd(), &mut buf).unwrap();
        assert_eq!(&buf[..n], b"the result\n");
        assert_eq!(record.moving, Moving::Unrecorded);
        assert_eq!(
            record.take(r.as_raw_fd(), &mut buf).unwrap(),
            0,
            "then the end"
        );
    }

    #[test]
    fn a_short_output_is_the_record_itself_and_a_cleared_mark_is_gone() {
        let (dir, longest, _) = through_record(100_000, None);
        assert_eq!(longest, 100_000);
        let path = dir.path().join("job.out");
        let (kept, cut) = read_record(&path).unwrap();
        assert_eq!((kept.len(), cut), (100_000, false));
        let file = std::fs::File::open(&path).unwrap();
        set_mark(&file).unwrap();
        assert!(read_record(&path).unwrap().1);
        clear_mark(&file);
        assert!(!read_record(&path).unwrap().1);
    }
}
