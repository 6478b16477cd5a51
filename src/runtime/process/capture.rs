//! The kept part of a child's output stream (its head and tail) and the live line feed
//! that hands each complete line on as it arrives.
//!
//! Reads bytes it is given; never opens files or spawns.

use super::paced::{PacedPipe, read_fd};
use super::{LINE_LIMIT, LineSender, OutputLine, OutputStream};

/// Splits one stream into lines for the live feed.
pub(super) struct LineFeed {
    tx: Option<LineSender>,
    stream: OutputStream,
    pending: Vec<u8>,
    /// The current line passed `LINE_LIMIT`; skip to its newline.
    overlong: bool,
}

impl LineFeed {
    pub(super) fn new(tx: LineSender, stream: OutputStream) -> Self {
        Self {
            tx: Some(tx),
            stream,
            pending: Vec::new(),
            overlong: false,
        }
    }

    pub(super) async fn push(&mut self, mut chunk: &[u8]) {
        while self.tx.is_some() && !chunk.is_empty() {
            let (piece, complete) = match memchr::memchr(b'\n', chunk) {
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

    /// Ends the line in progress: what follows is not its continuation.
    pub(super) async fn finish(&mut self) {
        if !self.pending.is_empty() || self.overlong {
            self.emit().await;
        }
    }
}

/// The kept part of one output stream: its first `head` bytes and its last `tail`, with
/// each line fed on the way.
pub(super) struct Capture {
    pub(super) head: usize,
    pub(super) tail: usize,
    first: Vec<u8>,
    /// The newest bytes: up to `head` more than `tail` before its oldest are cut, so a cut
    /// moves `tail` bytes once per `head` pushed rather than on every push, and the head
    /// fits in front of them at the end.
    last: Vec<u8>,
    dropped: bool,
    feed: Option<LineFeed>,
}

impl Capture {
    pub(super) fn new(head: usize, tail: usize, feed: Option<LineFeed>) -> Self {
        Self {
            head,
            tail,
            first: Vec::new(),
            last: Vec::new(),
            dropped: false,
            feed,
        }
    }

    pub(super) async fn push(&mut self, chunk: &[u8]) {
        if let Some(feed) = self.feed.as_mut() {
            feed.push(chunk).await;
        }
        let room = self.head.saturating_sub(self.first.len());
        let (to_head, rest) = chunk.split_at(chunk.len().min(room));
        self.first.extend_from_slice(to_head);
        // Only what can stay is copied in.
        let kept = &rest[rest.len().saturating_sub(self.tail)..];
        self.dropped |= kept.len() < rest.len();
        if self.last.len() + kept.len() > self.tail + self.head.max(self.tail / 4) {
            self.keep_tail(self.tail.saturating_sub(kept.len()));
        }
        self.last.extend_from_slice(kept);
    }

    /// Cuts the oldest of the newest bytes down to `n`.
    fn keep_tail(&mut self, n: usize) {
        if self.last.len() > n {
            self.last.drain(..self.last.len() - n);
            self.dropped = true;
        }
    }

    /// The kept bytes (head then tail) and whether anything between them was dropped.
    pub(super) async fn finish(mut self) -> (Vec<u8>, bool) {
        if let Some(feed) = self.feed.as_mut() {
            feed.finish().await;
        }
        self.keep_tail(self.tail);
        // The head goes in front of the tail within the room the tail already has: no
        // second buffer of the kept size.
        let first = std::mem::take(&mut self.first);
        self.last.splice(0..0, first);
        (self.last, self.dropped)
    }
}

/// Reads a pipe to its end (or until told to stop) into `cap`, on the cadence while the
/// child is quiet.
pub(super) async fn read_capped(mut pipe: PacedPipe, mut cap: Capture) -> (Vec<u8>, bool) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Some(n) = pipe.next(|fd| read_fd(fd, &mut buf)).await {
        cap.push(&buf[..n]).await;
    }
    cap.finish().await
}
