//! Schema migrations on `PRAGMA user_version`, written by hand.
//!
//! Each migration runs in one transaction with the version bump, so a crash never leaves a
//! half-migrated database; a database newer than this binary is refused.

use std::path::Path;

use rusqlite::Connection;

use super::{Result, StoreError};

/// The ordered migrations; index + 1 is the schema version each one produces. Each entry is
/// the SQL it runs, in order. A change to the schema appends one entry here (never edits an
/// earlier one), so every home reaches the same tables whatever version it started from.
const MIGRATIONS: &[&[&str]] = &[
    &[
        super::meta::SCHEMA,
        super::agents::SCHEMA,
        super::runs::SCHEMA,
        super::jobs::SCHEMA,
        super::delegations::SCHEMA,
        super::escalations::SCHEMA,
        super::events::SCHEMA,
        super::chat::SCHEMA,
        super::memory::SCHEMA,
    ],
    &[super::activity::SCHEMA],
    &[super::payloads::SCHEMA],
    // Paging and badge reads that stay flat with history: the `job list` index and the
    // maintained unread counters.
    &[
        super::jobs::LIST_INDEX,
        super::chat::UNREAD_COUNTERS,
        super::chat::UNREAD_TRIGGERS,
    ],
    // Cheaper sends: the badge index the counters made unused.
    &[super::chat::DROP_BADGE_INDEX],
    // Cheaper sends: mention ids without AUTOINCREMENT's sequence row.
    &[
        super::chat::MENTIONS_WITHOUT_AUTOINCREMENT,
        super::chat::UNREAD_TRIGGERS,
    ],
    // The human's read position and unread counter per thread.
    &[super::chat::SEEN_SCHEMA],
    // Many daemons: the registry, each job's daemon and its host label.
    &[super::daemons::SCHEMA],
    // Cheaper events: a kind index of the one kind looked up, no per-job index.
    &[super::events::LEANER_INDEXES],
    // Cheaper claims and settlements: the job and run indexes nothing reads.
    &[super::jobs::UNREAD_INDEXES],
    // Cheaper claims and settlements: event ids without AUTOINCREMENT's sequence row.
    &[super::events::WITHOUT_AUTOINCREMENT],
];

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            path: path.to_path_buf(),
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Re-read under the write lock: a concurrent opener may have migrated meanwhile.
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, parts) in MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
        for sql in *parts {
            tx.execute_batch(sql)?;
        }
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    super::meta::ensure_home_id(&(&*tx).into())?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::{MIGRATIONS, SCHEMA_VERSION, migrate};

    fn count(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// A home written at schema 10 (events with AUTOINCREMENT) keeps its event ids and
    /// indexes through the rebuild, writes no sequence row any more, and numbers the next
    /// event after the last.
    #[test]
    fn events_lose_autoincrement_and_keep_ids_and_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gitmoot.db");
        let mut conn = Connection::open(&path).unwrap();
        for parts in &MIGRATIONS[..10] {
            for sql in *parts {
                conn.execute_batch(sql).unwrap();
            }
        }
        conn.pragma_update(None, "user_version", 10).unwrap();
        conn.execute_batch(
            "INSERT INTO events(ts_ms, root_id, job_id, kind) VALUES (1, 'r', 'j', 'queued'),
                 (2, 'r', 'j', 'running'), (3, 'r', 'j', 'succeeded');
             DELETE FROM events WHERE id = 2;",
        )
        .unwrap();
        migrate(&mut conn, &path).unwrap();
        let sql: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'events'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!sql.contains("AUTOINCREMENT"), "{sql}");
        assert_eq!(
            count(
                &conn,
                "SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'events'"
            ),
            0
        );
        assert_eq!(
            count(
                &conn,
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'"
            ),
            2
        );
        conn.execute(
            "INSERT INTO events(ts_ms, root_id, kind) VALUES (4, 'r', 'run_finished')",
            [],
        )
        .unwrap();
        let ids: Vec<i64> = conn
            .prepare("SELECT id FROM events ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(ids, [1, 3, 4]);
    }

    /// A home written by a gitmoot at schema 5 (mentions with AUTOINCREMENT), with read and
    /// unread mentions, comes through the rebuild with its ids, its counters and working
    /// triggers.
    #[test]
    fn mentions_lose_autoincrement_and_keep_ids_counters_and_triggers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gitmoot.db");
        let mut conn = Connection::open(&path).unwrap();
        for parts in &MIGRATIONS[..5] {
            for sql in *parts {
                conn.execute_batch(sql).unwrap();
            }
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
        conn.execute_batch(
            "INSERT INTO chat_threads(id, slug, title, repo, origin, created_ms, updated_ms)
                 VALUES ('t1', 'plan', 'Plan', 'o/r', 'home', 1, 1);
             INSERT INTO chat_messages(id, origin, thread_id, seq, ts_ms, author_kind, author_name,
                 author_origin, body, envelope_json) VALUES
                 ('m1', 'home', 't1', 1, 1, 'human', 'human', 'home', '@a @b', '{}');
             INSERT INTO chat_mentions(message_id, thread_id, seq, kind, agent, agent_origin, unread, created_ms)
                 VALUES ('m1', 't1', 1, 'chat', 'a', 'home', 1, 1),
                        ('m1', 't1', 1, 'chat', 'b', 'home', 0, 1),
                        ('m1', 't1', 1, 'chat', 'a', 'home', 1, 1);",
        )
        .unwrap();
        migrate(&mut conn, &path).unwrap();
        assert_eq!(count(&conn, "PRAGMA user_version"), SCHEMA_VERSION);
        let sql: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'chat_mentions'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!sql.contains("AUTOINCREMENT"), "{sql}");
        let ids: Vec<i64> = conn
            .prepare("SELECT id FROM chat_mentions ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(ids, [1, 2, 3]);
        assert_eq!(
            count(
                &conn,
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'chat_mentions'"
            ),
            4
        );
        let unread_a = "SELECT n FROM chat_unread WHERE agent = 'a'";
        assert_eq!(count(&conn, unread_a), 2);
        conn.execute_batch(
            "INSERT INTO chat_mentions(message_id, thread_id, seq, kind, agent, agent_origin, created_ms)
                 VALUES ('m1', 't1', 1, 'chat', 'a', 'home', 2);
             UPDATE chat_mentions SET unread = 0 WHERE id = 1;",
        )
        .unwrap();
        assert_eq!(count(&conn, "SELECT MAX(id) FROM chat_mentions"), 4);
        assert_eq!(count(&conn, unread_a), 2, "one new unread, one read");
        assert_eq!(
            count(&conn, unread_a),
            count(
                &conn,
                "SELECT COUNT(*) FROM chat_mentions WHERE agent = 'a' AND unread = 1 AND resolved = 1"
            )
        );
    }
}
