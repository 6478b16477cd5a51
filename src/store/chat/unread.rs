//! The unread badge counters (`chat_unread`, kept by triggers on `chat_mentions`) and the
//! badge reads over them, which never scan the mention rows.

use crate::store::Result;
use crate::store::tx::{Tx, params};

/// Unread resolved mentions per agent, for inbox badges (from the maintained counters).
pub fn unread_counts<'a>(tx: impl Into<Tx<'a>>, origin: &str) -> Result<Vec<(String, i64)>> {
    tx.into().query_map(
        "SELECT agent, SUM(n) FROM chat_unread WHERE agent_origin = ?1
         GROUP BY agent HAVING SUM(n) > 0 ORDER BY agent",
        params![origin],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Unread resolved mentions per thread, every origin (the thread list's badges).
pub fn unread_by_thread<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<(String, i64)>> {
    tx.into().query_map(
        "SELECT thread_id, SUM(n) FROM chat_unread GROUP BY thread_id HAVING SUM(n) > 0",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Every unread resolved mention, from the counters (a change signature for badges).
pub fn unread_total<'a>(tx: impl Into<Tx<'a>>) -> Result<i64> {
    tx.into()
        .one("SELECT COALESCE(SUM(n), 0) FROM chat_unread", params![])
}

/// Unread resolved mentions of one thread for agents of `origin`, from the counters.
pub fn unread_in_thread<'a>(tx: impl Into<Tx<'a>>, thread_id: &str, origin: &str) -> Result<i64> {
    tx.into().one(
        "SELECT COALESCE(SUM(n), 0) FROM chat_unread WHERE thread_id = ?1 AND agent_origin = ?2",
        params![thread_id, origin],
    )
}
