//! The unread badge counters (`chat_unread`, kept by triggers on `chat_mentions`) and the
//! badge reads over them, which never scan the mention rows.

use crate::store::Result;
use crate::store::tx::{Tx, params};

/// Unread badge counters kept by triggers in the writer's own transaction, so they are
/// exact under any number of concurrent writers (SQLite serialises them) and a badge read
/// is a few rows however long the history. A counted mention is `unread = 1 AND resolved
/// = 1`; rows that fall to zero stay and are filtered out on read.
pub(in crate::store) const UNREAD_COUNTERS: &str = "
CREATE TABLE chat_unread (
    agent        TEXT NOT NULL,
    agent_origin TEXT NOT NULL,
    thread_id    TEXT NOT NULL,
    n            INTEGER NOT NULL,
    PRIMARY KEY (agent, agent_origin, thread_id)
) WITHOUT ROWID;
INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
    SELECT agent, agent_origin, thread_id, COUNT(*) FROM chat_mentions
    WHERE unread = 1 AND resolved = 1 GROUP BY agent, agent_origin, thread_id;
";

/// The triggers that keep `chat_unread` in step with `chat_mentions`; run again whenever
/// the mentions table is rebuilt (dropping a table drops its triggers).
pub(in crate::store) const UNREAD_TRIGGERS: &str = "
CREATE TRIGGER chat_unread_insert AFTER INSERT ON chat_mentions
    WHEN NEW.unread = 1 AND NEW.resolved = 1
BEGIN
    INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
        VALUES (NEW.agent, NEW.agent_origin, NEW.thread_id, 1)
        ON CONFLICT(agent, agent_origin, thread_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER chat_unread_update_old AFTER UPDATE OF unread, resolved, agent, agent_origin, thread_id
    ON chat_mentions WHEN OLD.unread = 1 AND OLD.resolved = 1
BEGIN
    UPDATE chat_unread SET n = n - 1
        WHERE agent = OLD.agent AND agent_origin = OLD.agent_origin AND thread_id = OLD.thread_id;
END;
CREATE TRIGGER chat_unread_update_new AFTER UPDATE OF unread, resolved, agent, agent_origin, thread_id
    ON chat_mentions WHEN NEW.unread = 1 AND NEW.resolved = 1
BEGIN
    INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
        VALUES (NEW.agent, NEW.agent_origin, NEW.thread_id, 1)
        ON CONFLICT(agent, agent_origin, thread_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER chat_unread_delete AFTER DELETE ON chat_mentions
    WHEN OLD.unread = 1 AND OLD.resolved = 1
BEGIN
    UPDATE chat_unread SET n = n - 1
        WHERE agent = OLD.agent AND agent_origin = OLD.agent_origin AND thread_id = OLD.thread_id;
END;
";

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
