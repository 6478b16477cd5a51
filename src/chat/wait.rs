//! `chat wait`: the moot turn-taking primitive. A snapshot is every message after a seq
//! plus whether the moot cap is reached; waiting re-snapshots only when
//! `PRAGMA data_version` says another connection committed.

use std::time::{Duration, Instant};

use crate::store::Tx;
use serde::Serialize;

use super::{Result, cap};
use crate::store::Store;
use crate::store::chat::{self as rows, Message, Thread};

/// What `chat wait` reports.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    pub messages: Vec<Message>,
    /// The thread's newest seq, whatever `--since-seq` said.
    pub last_seq: i64,
    pub cap_reached: bool,
}

impl Snapshot {
    /// Whether the waiter should stop now.
    pub(crate) fn is_ready(&self) -> bool {
        !self.messages.is_empty() || self.cap_reached
    }
}

pub fn snapshot(conn: &Tx<'_>, thread: &Thread, since: i64) -> Result<Snapshot> {
    let messages = rows::messages(conn, &thread.id, since, None)?;
    let last_seq = rows::last_seq(conn, &thread.id)?;
    let cap_reached = match cap::cap(conn, &thread.id)? {
        Some(cap) => cap::agent_turns(conn, &thread.id)? >= cap,
        None => false,
    };
    Ok(Snapshot {
        messages,
        last_seq,
        cap_reached,
    })
}

/// Blocks until a message after `since` exists, the cap is reached or `timeout` passes;
/// always takes at least one snapshot. A timeout returns the last snapshot, which is not
/// `is_ready`.
pub fn wait(store: &Store, thread: &Thread, since: i64, timeout: Duration) -> Result<Snapshot> {
    let deadline = Instant::now() + timeout;
    let mut version = store.data_version()?;
    loop {
        let snap = snapshot(&store.conn(), thread, since)?;
        if snap.is_ready() || Instant::now() >= deadline {
            return Ok(snap);
        }
        // Cheap poll: data_version changes only when another connection commits.
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(25)));
            let v = store.data_version()?;
            if v != version {
                version = v;
                break;
            }
        }
    }
}
