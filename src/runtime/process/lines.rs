//! The live line feed's channel, bounded both in lines and in bytes: lines of up to
//! `LINE_LIMIT` each would otherwise let a queue of a few thousand hold gigabytes while its
//! consumer falls behind. A full channel makes the reader wait: a pipe's child waits with
//! it, and a record's tailer keeps its file bounded meanwhile (`record.rs`).
//!
//! Carries lines only; what they are cut from is `capture.rs`'s, what they mean the
//! consumer's.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};

use super::OutputLine;

/// The sending side; clones share the bounds.
#[derive(Debug, Clone)]
pub struct LineSender {
    tx: mpsc::Sender<OutputLine>,
    room: Arc<Semaphore>,
    bytes: usize,
}

/// The receiving side: a line received gives its bytes back to the senders.
#[derive(Debug)]
pub struct LineReceiver {
    rx: mpsc::Receiver<OutputLine>,
    room: Arc<Semaphore>,
    bytes: usize,
}

/// The consumer is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// A channel holding at most `lines` lines and `bytes` bytes of them (a line longer than
/// `bytes` passes alone).
pub fn line_channel(lines: usize, bytes: usize) -> (LineSender, LineReceiver) {
    let (tx, rx) = mpsc::channel(lines);
    let bytes = bytes.min(Semaphore::MAX_PERMITS).min(u32::MAX as usize);
    let room = Arc::new(Semaphore::new(bytes));
    (
        LineSender {
            tx,
            room: room.clone(),
            bytes,
        },
        LineReceiver { rx, room, bytes },
    )
}

/// What a line holds against the byte bound.
fn cost(line: &OutputLine, bytes: usize) -> usize {
    line.bytes.len().min(bytes)
}

impl LineSender {
    /// Sends `line` once there is room for it.
    pub async fn send(&self, line: OutputLine) -> Result<(), Closed> {
        let n = cost(&line, self.bytes) as u32;
        self.room
            .acquire_many(n)
            .await
            .map_err(|_| Closed)?
            .forget();
        self.tx.send(line).await.map_err(|_| Closed)
    }
}

impl LineReceiver {
    /// The next line; `None` once every sender is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<OutputLine> {
        let line = self.rx.recv().await?;
        self.room.add_permits(cost(&line, self.bytes));
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::OutputStream;

    fn line(n: usize) -> OutputLine {
        OutputLine {
            stream: OutputStream::Stdout,
            bytes: vec![b'x'; n],
        }
    }

    #[tokio::test]
    async fn a_sender_waits_while_the_queued_bytes_fill_the_bound() {
        let (tx, mut rx) = line_channel(100, 10);
        tx.send(line(6)).await.unwrap();
        let blocked = tokio::time::timeout(std::time::Duration::from_millis(50), tx.send(line(6)));
        assert!(
            blocked.await.is_err(),
            "12 bytes queued against a bound of 10"
        );
        assert_eq!(rx.recv().await.unwrap().bytes.len(), 6);
        tx.send(line(6)).await.unwrap();
        // Longer than the bound: passes once the queue is empty.
        assert_eq!(rx.recv().await.unwrap().bytes.len(), 6);
        tx.send(line(50)).await.unwrap();
        assert_eq!(rx.recv().await.unwrap().bytes.len(), 50);
        drop(tx);
        assert_eq!(rx.recv().await, None);
    }
}
