//! The stdout record: the file this side writes what it reads of a child's stdout into,
//! never longer than `CAPTURE_LIMIT` at any moment, and read back by recovery after a
//! crash.
//!
//! Up to `RING_END` bytes of output the file is the output itself. Past that it is exactly
//! `CAPTURE_LIMIT` long: the output's first `CAPTURE_HEAD` bytes, a ring holding its last
//! `RING` bytes (output byte `s` sits at `CAPTURE_HEAD + (s - CAPTURE_HEAD) % RING`), and a
//! trailer (the output's length, then `MAGIC`) that says where the ring starts.
//!
//! Knows bytes and files only; which file a job's record is belongs to the daemon.

use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{CAPTURE_HEAD, CAPTURE_LIMIT};

/// The trailer: the output's length (u64, little-endian) and `MAGIC`.
pub(super) const TRAILER: usize = 16;
const MAGIC: &[u8; 8] = b"gmrecrng";
/// Where the ring ends and the trailer begins.
const RING_END: usize = CAPTURE_LIMIT - TRAILER;
/// The kept tail of a record whose output passed `RING_END`.
const RING: usize = RING_END - CAPTURE_HEAD;

/// Writes the output into the record as it is read.
pub(super) struct Record {
    /// `None` once a write failed (a full disk): the record then stays as it was, and the
    /// live capture goes on without it.
    file: Option<std::fs::File>,
    /// Output bytes written so far.
    len: u64,
}

impl Record {
    pub(super) fn new(file: std::fs::File) -> Self {
        Self {
            file: Some(file),
            len: 0,
        }
    }

    /// Adds `chunk`, the next bytes of the output. The data goes first and the trailer
    /// after it: a crash in between leaves the newest chunk read as the ring's oldest
    /// bytes, never the result at its end lost.
    pub(super) fn write(&mut self, mut chunk: &[u8]) {
        let Some(file) = &self.file else { return };
        let head = CAPTURE_HEAD as u64;
        let mut written = Ok(());
        while !chunk.is_empty() && written.is_ok() {
            let (at, room) = if self.len < head {
                (self.len, head - self.len)
            } else {
                let into = (self.len - head) % RING as u64;
                (head + into, RING as u64 - into)
            };
            let n = chunk.len().min(room as usize);
            written = file.write_all_at(&chunk[..n], at);
            self.len += n as u64;
            chunk = &chunk[n..];
        }
        if written.is_ok() && self.len > RING_END as u64 {
            let mut trailer = [0u8; TRAILER];
            trailer[..8].copy_from_slice(&self.len.to_le_bytes());
            trailer[8..].copy_from_slice(MAGIC);
            written = file.write_all_at(&trailer, RING_END as u64);
        }
        if written.is_err() {
            self.file = None;
        }
    }
}

/// What recovery reads of a record: the whole output when it was short, else its first
/// `CAPTURE_HEAD` bytes and its last `RING`, and whether anything between them was left
/// out.
pub fn read_record(path: &Path) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len < CAPTURE_LIMIT as u64 {
        let mut all = Vec::with_capacity(len as usize);
        file.read_to_end(&mut all)?;
        return Ok((all, false));
    }
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not a stdout record");
    let mut trailer = [0u8; TRAILER];
    file.read_exact_at(&mut trailer, RING_END as u64)?;
    let printed = u64::from_le_bytes(trailer[..8].try_into().map_err(|_| bad())?);
    if len != CAPTURE_LIMIT as u64 || &trailer[8..] != MAGIC || printed <= RING_END as u64 {
        return Err(bad());
    }
    let start = CAPTURE_HEAD + ((printed - CAPTURE_HEAD as u64) % RING as u64) as usize;
    let mut kept = vec![0u8; CAPTURE_HEAD + RING];
    file.read_exact_at(&mut kept, 0)?;
    // The ring from its oldest byte on: rotate it into output order.
    kept[CAPTURE_HEAD..].rotate_left(start - CAPTURE_HEAD);
    Ok((kept, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `output` in chunks of `step` and reads it back.
    fn round_trip(output: &[u8], step: usize) -> (Vec<u8>, bool, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.out");
        let mut record = Record::new(std::fs::File::create(&path).unwrap());
        let mut longest = 0;
        for chunk in output.chunks(step) {
            record.write(chunk);
            longest = longest.max(std::fs::metadata(&path).unwrap().len());
        }
        let (kept, cut) = read_record(&path).unwrap();
        (kept, cut, longest)
    }

    #[test]
    fn a_short_output_is_the_record_itself() {
        let output = b"one\ntwo\n".repeat(1000);
        let (kept, cut, _) = round_trip(&output, 777);
        assert_eq!((kept, cut), (output, false));
    }

    #[test]
    fn a_long_output_keeps_its_head_and_its_last_bytes_within_the_cap() {
        // Neither the chunk size nor the ring divides the other: the ring wraps mid-chunk.
        let output: Vec<u8> = (0..3 * CAPTURE_LIMIT + 12_345)
            .map(|i| (i % 251) as u8)
            .collect();
        let (kept, cut, longest) = round_trip(&output, 65_521);
        assert!(cut);
        assert_eq!(longest, CAPTURE_LIMIT as u64);
        assert_eq!(&kept[..CAPTURE_HEAD], &output[..CAPTURE_HEAD]);
        assert_eq!(&kept[CAPTURE_HEAD..], &output[output.len() - RING..]);
    }

    #[test]
    fn a_full_length_file_without_a_trailer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.out");
        std::fs::write(&path, vec![b'x'; CAPTURE_LIMIT]).unwrap();
        assert!(read_record(&path).is_err());
    }
}
