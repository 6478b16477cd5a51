//! Per-agent inboxes: the resolved mentions of an agent, newest first, and marking them
//! read (`chat read`, the control room's inbox pane and the auto-respond sweep).

use crate::store::Tx;

use super::Result;
use crate::Invalid;
use crate::store::StoreError;
use crate::store::chat::{self as rows, InboxRow, Thread};

/// The agent's inbox; an unknown agent simply has an empty one.
pub fn inbox(
    conn: &Tx<'_>,
    agent: &str,
    unread_only: bool,
    limit: Option<usize>,
) -> Result<Vec<InboxRow>> {
    let origin = rows::origin(conn)?;
    Ok(rows::inbox(conn, agent, &origin, unread_only, limit)?)
}

/// Streams one inbox page (mentions older than the `before` mention id, newest first, at
/// most `limit`) to `each`; what `chat inbox` prints, one row at a time.
pub fn inbox_each<E: From<StoreError>>(
    conn: &Tx<'_>,
    agent: &str,
    unread_only: bool,
    limit: Option<usize>,
    before: Option<i64>,
    each: impl FnMut(InboxRow) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let origin = rows::origin(conn)?;
    rows::inbox_each(conn, agent, &origin, unread_only, limit, before, each)
}

/// Unread counts per agent, for badges.
pub fn unread_counts(conn: &Tx<'_>) -> Result<Vec<(String, i64)>> {
    Ok(rows::unread_counts(conn, &rows::origin(conn)?)?)
}

/// Which mentions `mark_read` clears.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadSelection {
    /// Every unread mention (of the thread, when one is given).
    All,
    /// The mentions on these seqs of the given thread.
    Seqs(Vec<i64>),
}

/// Marks an agent's mentions read; returns how many changed. Seqs need a thread.
pub fn mark_read(
    conn: &Tx<'_>,
    agent: &str,
    thread: Option<&Thread>,
    which: &ReadSelection,
) -> Result<usize> {
    let origin = rows::origin(conn)?;
    let thread_id = thread.map(|t| t.id.as_str());
    match which {
        ReadSelection::All => Ok(rows::mark_read(
            conn, agent, &origin, thread_id, None, None,
        )?),
        ReadSelection::Seqs(seqs) => {
            if thread.is_none() {
                return Err(Invalid("chat read SEQ… needs --thread THREAD".into()).into());
            }
            Ok(rows::mark_read(
                conn,
                agent,
                &origin,
                thread_id,
                Some(seqs),
                None,
            )?)
        }
    }
}
