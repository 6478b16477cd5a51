//! Thread rows and their per-thread metadata (`chat_threads`, `chat_thread_meta`); must not
//! touch messages or mentions.

use crate::store::row::row_columns;
use crate::store::tx::{Tx, params};
use serde::Serialize;

use super::ThreadState;
use crate::clock::Millis;
use crate::store::Result;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thread {
    pub id: String,
    pub slug: String,
    pub title: String,
    pub repo: String,
    pub origin: String,
    pub state: ThreadState,
    pub created_by: String,
    pub created_ms: Millis,
    pub updated_ms: Millis,
}

row_columns! {
    const THREAD_COLS;
    fn thread_row -> Thread {
        id,
        slug,
        title,
        repo,
        origin,
        state,
        created_by,
        created_ms,
        updated_ms,
    }
}

/// The columns of a thread read back, with `updated_ms` raised to its newest message: a
/// send does not rewrite the thread row (one page less per message).
const THREAD_READ: &str = "t.id, t.slug, t.title, t.repo, t.origin, t.state, t.created_by, t.created_ms, \
    MAX(t.updated_ms, COALESCE((SELECT c.ts_ms FROM chat_messages c WHERE c.thread_id = t.id ORDER BY c.seq DESC LIMIT 1), 0))";

pub fn insert_thread<'a>(tx: impl Into<Tx<'a>>, t: &Thread) -> Result<()> {
    let tx = tx.into();
    tx.new_thread(&t.id)?;
    tx.execute(
        &format!(
            "INSERT INTO chat_threads({THREAD_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        ),
        params![
            t.id,
            t.slug,
            t.title,
            t.repo,
            t.origin,
            t.state,
            t.created_by,
            t.created_ms,
            t.updated_ms
        ],
    )?;
    Ok(())
}

pub fn thread<'a>(tx: impl Into<Tx<'a>>, id: &str) -> Result<Option<Thread>> {
    tx.into().query_opt(
        &format!("SELECT {THREAD_READ} FROM chat_threads t WHERE t.id = ?1"),
        params![id],
        thread_row,
    )
}

/// Threads with this slug, in one repo or in all of them, archived included.
pub fn threads_by_slug<'a>(
    tx: impl Into<Tx<'a>>,
    slug: &str,
    repo: Option<&str>,
) -> Result<Vec<Thread>> {
    tx.into().query_map(
        &format!(
            "SELECT {THREAD_READ} FROM chat_threads t WHERE t.slug = ?1 AND (t.repo = ?2 OR ?2 IS NULL) ORDER BY t.repo"
        ),
        params![slug, repo],
        thread_row,
    )
}

/// Threads, most recent activity first.
pub fn list_threads<'a>(
    tx: impl Into<Tx<'a>>,
    repo: Option<&str>,
    include_archived: bool,
) -> Result<Vec<Thread>> {
    tx.into().query_map(
        &format!(
            "SELECT {THREAD_READ} AS activity FROM chat_threads t WHERE (t.repo = ?1 OR ?1 IS NULL) AND (?2 OR t.state = 'open')
             ORDER BY activity DESC, t.id DESC"
        ),
        params![repo, include_archived],
        thread_row,
    )
}

pub fn update_thread<'a>(tx: impl Into<Tx<'a>>, t: &Thread) -> Result<()> {
    tx.into().execute(
        "UPDATE chat_threads SET title = ?2, state = ?3, updated_ms = ?4 WHERE id = ?1",
        params![t.id, t.title, t.state, t.updated_ms],
    )?;
    Ok(())
}

pub fn meta_get<'a>(tx: impl Into<Tx<'a>>, thread_id: &str, key: &str) -> Result<Option<String>> {
    tx.into().query_opt(
        "SELECT value FROM chat_thread_meta WHERE thread_id = ?1 AND key = ?2",
        params![thread_id, key],
        |r| r.get(0),
    )
}

pub fn meta_set<'a>(
    tx: impl Into<Tx<'a>>,
    thread_id: &str,
    key: &str,
    value: &str,
    now: Millis,
) -> Result<()> {
    tx.into().execute(
        "INSERT INTO chat_thread_meta(thread_id, key, value, updated_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(thread_id, key) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms",
        params![thread_id, key, value, now],
    )?;
    Ok(())
}
