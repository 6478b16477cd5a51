//! The schema's own checks: a store of every past version migrates to what a fresh one
//! holds, the migration list agrees with the table list, and the rebuilds keep their rows.

use std::path::Path;

use rusqlite::Connection;

use super::{SCHEMA_VERSION, migrate, render};
use crate::store::tx::Backend;

/// A SQLite file as a gitmoot of schema `version` left it.
fn at_version(conn: &Connection, version: usize) {
    for v in 1..=version {
        conn.execute_batch(&render::migration(v, Backend::Sqlite))
            .unwrap();
    }
    conn.pragma_update(None, "user_version", version as i64)
        .unwrap();
}

/// Every schema object of `conn` as `type name on table: sql`, by name.
fn objects(conn: &Connection) -> Vec<String> {
    conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap()
        .query_map([], |r| {
            let sql: Option<String> = r.get(3)?;
            Ok(format!(
                "{} {} on {}: {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                sql.unwrap_or_default()
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Every column of every table as `table.column type not-null default key`.
fn columns(conn: &Connection) -> Vec<String> {
    conn.prepare(
        "SELECT m.name, c.name, c.type, c.\"notnull\", c.dflt_value, c.pk
         FROM sqlite_master m, pragma_table_info(m.name) c
         WHERE m.type = 'table' ORDER BY m.name, c.cid",
    )
    .unwrap()
    .query_map([], |r| {
        Ok(format!(
            "{}.{} {} {} {:?} {}",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, i64>(5)?
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn migrated_from(version: usize) -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    at_version(&conn, version);
    migrate(&mut conn, Path::new(":memory:")).unwrap();
    conn
}

/// A store left at any past version migrates to exactly the schema a fresh store gets.
#[test]
fn every_past_version_migrates_to_the_fresh_schema() {
    let fresh = objects(&migrated_from(0));
    for version in 1..=SCHEMA_VERSION as usize {
        assert_eq!(
            objects(&migrated_from(version)),
            fresh,
            "from version {version}"
        );
    }
}

/// The migrations make what the table list says stands today: the same columns (types,
/// `NOT NULL`, defaults, keys), and the same indexes and triggers to the letter.
#[test]
fn the_migrations_make_the_table_list() {
    let migrated = migrated_from(0);
    let drawn = Connection::open_in_memory().unwrap();
    drawn
        .execute_batch(&render::schema_at(SCHEMA_VERSION as usize, Backend::Sqlite))
        .unwrap();
    assert_eq!(columns(&migrated), columns(&drawn));
    // Tables differ in text only where ALTER TABLE rewrote it (an added column, a rename).
    let not_tables = |conn: &Connection| -> Vec<String> {
        objects(conn)
            .into_iter()
            .filter(|o| !o.starts_with("table "))
            .collect()
    };
    assert_eq!(not_tables(&migrated), not_tables(&drawn));
}

fn table_sql(conn: &Connection, table: &str) -> String {
    conn.query_row(
        "SELECT sql FROM sqlite_master WHERE name = ?1",
        [table],
        |r| r.get(0),
    )
    .unwrap()
}

fn ids(conn: &Connection, table: &str) -> Vec<i64> {
    conn.prepare(&format!("SELECT id FROM {table} ORDER BY id"))
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A store file at `version`, with the folder that keeps it.
fn file_at_version(version: usize) -> (tempfile::TempDir, std::path::PathBuf, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gitmoot.db");
    let conn = Connection::open(&path).unwrap();
    at_version(&conn, version);
    (dir, path, conn)
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A home written at schema 10 (events with AUTOINCREMENT) keeps its event ids and
/// indexes through the rebuild, writes no sequence row any more, and numbers the next
/// event after the last.
#[test]
fn events_lose_autoincrement_and_keep_ids_and_indexes() {
    let (_dir, path, mut conn) = file_at_version(10);
    conn.execute_batch(
        "INSERT INTO events(ts_ms, root_id, job_id, kind) VALUES (1, 'r', 'j', 'queued'),
             (2, 'r', 'j', 'running'), (3, 'r', 'j', 'succeeded');
         DELETE FROM events WHERE id = 2;",
    )
    .unwrap();
    migrate(&mut conn, &path).unwrap();
    let sql = table_sql(&conn, "events");
    assert!(!sql.contains("AUTOINCREMENT"), "{sql}");
    assert_eq!(
        count(
            &conn,
            "SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'events'"
        ),
        0
    );
    let indexes: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(indexes, ["events_kind", "events_root", "events_stall"]);
    conn.execute(
        "INSERT INTO events(ts_ms, root_id, kind) VALUES (4, 'r', 'run_finished')",
        [],
    )
    .unwrap();
    assert_eq!(ids(&conn, "events"), [1, 3, 4]);
}

/// A home written by a gitmoot at schema 5 (mentions with AUTOINCREMENT), with read and
/// unread mentions, comes through the rebuild with its ids, its counters and working
/// triggers.
#[test]
fn mentions_lose_autoincrement_and_keep_ids_counters_and_triggers() {
    let (_dir, path, mut conn) = file_at_version(5);
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
    let sql = table_sql(&conn, "chat_mentions");
    assert!(!sql.contains("AUTOINCREMENT"), "{sql}");
    assert_eq!(ids(&conn, "chat_mentions"), [1, 2, 3]);
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

/// A home written at schema 13, before the search index, finds its old prompts, results,
/// activity and messages once migrated, and a row written after is found alike.
#[test]
fn the_search_index_is_filled_from_what_an_older_store_holds() {
    let (_dir, path, mut conn) = file_at_version(13);
    conn.execute_batch(
        "INSERT INTO runs(root_id, state, title, created_ms, updated_ms)
             VALUES ('r', 'done', 't', 1, 1);
         INSERT INTO jobs(id, root_id, kind, agent, action, prompt, state, result, created_ms, updated_ms)
             VALUES ('r', 'r', 'root', 'a', 'ask', 'mind the pelican', 'succeeded',
                     '{\"decision\":\"approved\",\"summary\":\"a walrus\",\"changes_made\":[\"moved the okapi\"]}', 1, 1);
         INSERT INTO activity(job_id, seq, at_ms, kind, summary) VALUES ('r', 0, 1, 'output', 'a flamingo');
         INSERT INTO chat_threads(id, slug, title, repo, origin, created_ms, updated_ms)
             VALUES ('t1', 'plan', 'Plan', 'o/r', 'home', 1, 1);
         INSERT INTO chat_messages(id, origin, thread_id, seq, ts_ms, author_kind, author_name,
             author_origin, body, envelope_json) VALUES
             ('m1', 'home', 't1', 1, 1, 'human', 'human', 'home', 'the axolotl', '{}');",
    )
    .unwrap();
    migrate(&mut conn, &path).unwrap();
    // Steps are indexed apart from the other docs since version 18 (`natives.rs`).
    let found = |word: &str| -> Vec<String> {
        conn.prepare(
            "SELECT d.source || ' ' || d.ref FROM search_text JOIN search_docs d ON d.id = search_text.rowid
             WHERE search_text MATCH ?1
             UNION ALL
             SELECT 'activity ' || a.job_id || '#' || a.seq FROM search_activity
             JOIN activity a ON a.id = search_activity.rowid WHERE search_activity MATCH ?1
             ORDER BY 1",
        )
        .unwrap()
        .query_map([word], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    assert_eq!(found("pelican"), ["prompts r"]);
    assert_eq!(found("walrus"), ["results r"]);
    assert_eq!(found("okapi"), ["results r"]);
    assert_eq!(found("flamingo"), ["activity r#0"]);
    assert_eq!(found("axolotl"), ["chat m1"]);
    conn.execute(
        "INSERT INTO activity(job_id, seq, at_ms, kind, summary) VALUES ('r', 1, 2, 'output', 'a second flamingo')",
        [],
    )
    .unwrap();
    assert_eq!(found("flamingo"), ["activity r#0", "activity r#1"]);
}
