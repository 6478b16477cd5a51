//! What the human has read (`chat_seen`): one row per thread with the newest seq the human
//! saw and how many messages others posted after it. The thread list's badges and the
//! control room's unread total read these rows, never the message history; must not touch
//! messages or mentions.

use crate::store::tx::{Tx, params};

use crate::store::Result;

/// Counts one message someone other than the human posted to `thread_id` (the caller
/// skips the human's own posts: writing in a thread is no news to its writer).
pub fn count_unseen<'a>(tx: impl Into<Tx<'a>>, thread_id: &str) -> Result<()> {
    tx.into().execute(
        "INSERT INTO chat_seen(thread_id, seq, unread) VALUES (?1, 0, 1)
         ON CONFLICT(thread_id) DO UPDATE SET unread = chat_seen.unread + 1",
        params![thread_id],
    )?;
    Ok(())
}

/// Records that the human has read `thread_id` up to `seq` (never backwards) and returns
/// what is still unread after it: messages by others posted past `seq` meanwhile.
pub fn mark_seen<'a>(tx: impl Into<Tx<'a>>, thread_id: &str, seq: i64) -> Result<i64> {
    let tx = tx.into();
    let left: i64 = tx.one(
        "SELECT COUNT(*) FROM chat_messages WHERE thread_id = ?1 AND seq > ?2 AND author_kind != 'human'",
        params![thread_id, seq],
    )?;
    // The existing row's columns are named by table: PostgreSQL reads a bare name in an
    // upsert's SET as ambiguous with `excluded`.
    tx.execute(
        "INSERT INTO chat_seen(thread_id, seq, unread) VALUES (?1, ?2, ?3)
         ON CONFLICT(thread_id) DO UPDATE SET seq = MAX(chat_seen.seq, excluded.seq),
             unread = CASE WHEN excluded.seq >= chat_seen.seq THEN excluded.unread ELSE chat_seen.unread END",
        params![thread_id, seq, left],
    )?;
    Ok(left)
}

/// The human's unread count per thread, threads with none left out.
pub fn unseen_by_thread<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<(String, i64)>> {
    tx.into().query_map(
        "SELECT thread_id, unread FROM chat_seen WHERE unread > 0",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}
