//! Checkpoints of a busy writer's write-ahead log, on a thread of their own.
//!
//! A checkpoint copies the log's pages back into the database file and syncs it: tens of
//! milliseconds every ~40 MB for a busy daemon. Run by SQLite's automatic checkpoint it
//! happens inside a commit, so for that long no job settles and no slot refills. Here the
//! writer's commits only count the log's pages; past `EVERY`, a thread with a connection
//! of its own copies them back while the writer goes on. Should the log still reach
//! `FORCE` pages (the thread is gone or cannot keep up), the commit checkpoints itself, as
//! the automatic checkpoint would have.
//!
//! Owns only that thread; touches nothing but the log.

use std::path::Path;
use std::sync::mpsc;

use rusqlite::Connection;
use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;

/// Log pages (4 KiB) after which the thread checkpoints: ten times SQLite's default, so
/// the hot index pages a job rewrites are copied back ten times less often.
const EVERY: i32 = 10_000;
/// Log pages after which the writer's own commit checkpoints.
const FORCE: i32 = 4 * EVERY;

/// Moves `conn`'s checkpoints (a connection to the database file `db`) to a thread that
/// lives as long as the connection.
pub(super) fn in_background(conn: &mut Connection, db: &Path) -> super::Result<()> {
    let (ask, asked) = mpsc::sync_channel::<()>(1);
    let checkpointer = Connection::open(db)?;
    // A connection learns the file is in WAL mode on its first read; until then a
    // checkpoint is a no-op.
    checkpointer.query_row("PRAGMA journal_mode", [], |_| Ok(()))?;
    std::thread::Builder::new()
        .name("gitmoot-checkpoint".into())
        .spawn(move || {
            // Ends once the writer's connection, which holds `ask`, is gone.
            while asked.recv().is_ok() {
                if let Err(e) =
                    checkpointer.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE)
                {
                    tracing::warn!("checkpointing the store: {e}");
                }
            }
        })?;
    // The log size at which to ask next. A pass copies the log as it was when the pass
    // began; the writer's commits meanwhile keep it from starting over, so the next pass
    // is asked for once a quarter of `EVERY` more has come, not on every commit.
    let mut ask_at = EVERY;
    conn.wal_hook(Some(move |wal: &mut Wal, pages: i32| {
        if pages >= FORCE {
            return wal.checkpoint();
        }
        if pages < ask_at - EVERY {
            // The log started over after a full pass.
            ask_at = EVERY;
        }
        if pages >= ask_at {
            ask_at = pages + EVERY / 4;
            let _ = ask.try_send(());
        }
        Ok(())
    }))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use std::time::{Duration, Instant};

    #[test]
    fn a_log_past_its_threshold_is_copied_back_by_the_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gitmoot.db");
        let mut store = Store::open(&path).unwrap();
        store.tune_for_batches().unwrap();
        let before = std::fs::metadata(&path).unwrap().len();
        // Each commit adds 1 MiB (256 pages) to the log; 44 of them pass `EVERY`, and the
        // pass copies back what the log held then (about 39 of the 44 MiB).
        store
            .write(|tx| tx.batch("CREATE TABLE ballast(b BLOB)"))
            .unwrap();
        for _ in 0..44 {
            store
                .write(|tx| tx.batch("INSERT INTO ballast VALUES (zeroblob(1048576))"))
                .unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        let copied = loop {
            let len = std::fs::metadata(&path).unwrap().len();
            if len > before + 30 * 1024 * 1024 || Instant::now() > deadline {
                break len;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            copied > before + 30 * 1024 * 1024,
            "the log was never checkpointed: the file holds {copied} bytes"
        );
    }
}
