//! What the human has read (`chat_seen`): one row per thread with the newest seq the human
//! saw and how many messages others posted after it. The thread list's badges and the
//! control room's unread total read these rows, never the message history; must not touch
//! messages or mentions.

use rusqlite::{Connection, params};

use crate::store::Result;

/// A counter per thread, raised by every message the human did not write and reset when
/// the human reads the thread. History present when the table is created counts as read:
/// an upgrade must not light every badge at once.
pub(in crate::store) const SCHEMA: &str = "
CREATE TABLE chat_seen (
    thread_id TEXT PRIMARY KEY REFERENCES chat_threads(id),
    seq       INTEGER NOT NULL,
    unread    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO chat_seen(thread_id, seq, unread)
    SELECT thread_id, MAX(seq), 0 FROM chat_messages GROUP BY thread_id;
";

/// Counts one message someone other than the human posted to `thread_id` (the caller
/// skips the human's own posts: writing in a thread is no news to its writer).
pub fn count_unseen(conn: &Connection, thread_id: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO chat_seen(thread_id, seq, unread) VALUES (?1, 0, 1)
         ON CONFLICT(thread_id) DO UPDATE SET unread = unread + 1",
    )?
    .execute([thread_id])?;
    Ok(())
}

/// Records that the human has read `thread_id` up to `seq` (never backwards) and returns
/// what is still unread after it: messages by others posted past `seq` meanwhile.
pub fn mark_seen(conn: &Connection, thread_id: &str, seq: i64) -> Result<i64> {
    let left: i64 = conn
        .prepare_cached(
            "SELECT COUNT(*) FROM chat_messages WHERE thread_id = ?1 AND seq > ?2 AND author_kind != 'human'",
        )?
        .query_row(params![thread_id, seq], |r| r.get(0))?;
    conn.prepare_cached(
        "INSERT INTO chat_seen(thread_id, seq, unread) VALUES (?1, ?2, ?3)
         ON CONFLICT(thread_id) DO UPDATE SET seq = MAX(seq, excluded.seq),
             unread = CASE WHEN excluded.seq >= seq THEN excluded.unread ELSE unread END",
    )?
    .execute(params![thread_id, seq, left])?;
    Ok(left)
}

/// The human's unread count per thread, threads with none left out.
pub fn unseen_by_thread(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let mut st = conn.prepare_cached("SELECT thread_id, unread FROM chat_seen WHERE unread > 0")?;
    Ok(st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}
