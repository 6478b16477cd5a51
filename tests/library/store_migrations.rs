//! Store migrations on a real SQLite file: fresh, repeated, and refused when too new.

use gitmoot::store::{SCHEMA_VERSION, Store, StoreError, meta};

fn user_version(path: &std::path::Path) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_fresh_database_gets_every_table_and_a_home_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gitmoot.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), SCHEMA_VERSION);
    let tables: Vec<String> = store
        .conn()
        .query_map(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
            &[],
            |r| r.get(0),
        )
        .unwrap();
    for t in [
        "agents",
        "chat_mentions",
        "chat_messages",
        "chat_threads",
        "delegations",
        "escalations",
        "events",
        "jobs",
        "memory_observations",
        "meta",
        "runs",
    ] {
        assert!(
            tables.iter().any(|x| x == t),
            "missing table {t} in {tables:?}"
        );
    }
    let id = meta::home_id(&store.conn()).unwrap();
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    let mode: String = store.conn().one("PRAGMA journal_mode", &[]).unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn migrating_twice_is_a_no_op_that_keeps_the_home_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gitmoot.db");
    let first = meta::home_id(&Store::open(&path).unwrap().conn()).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), SCHEMA_VERSION);
    assert_eq!(meta::home_id(&store.conn()).unwrap(), first);
}

#[test]
fn a_database_from_a_newer_gitmoot_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gitmoot.db");
    drop(Store::open(&path).unwrap());
    let future = SCHEMA_VERSION + 5;
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", future)
        .unwrap();
    match Store::open(&path) {
        Err(e @ StoreError::SchemaTooNew { .. }) => {
            let text = e.to_string();
            assert!(text.contains(&format!("schema version {future}")), "{text}");
            assert!(text.contains("upgrade gitmoot"), "{text}");
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a future schema was accepted"),
    }
    assert_eq!(user_version(&path), future);
}

#[test]
fn events_since_a_cursor_return_only_newer_changes() {
    use gitmoot::domain::EventKind;
    use gitmoot::store::events::{self, NewEvent};
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("gitmoot.db")).unwrap();
    let append = |store: &mut Store, kind: EventKind| {
        store
            .write(|tx| events::append(tx, NewEvent::unrooted(1, kind).message(kind.to_string())))
            .unwrap()
    };
    append(&mut store, EventKind::Queued);
    let cursor = events::last_id(store.conn()).unwrap();
    append(&mut store, EventKind::Running);
    append(&mut store, EventKind::Succeeded);
    let newer: Vec<String> = events::since(store.conn(), cursor, 100)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(newer, ["running", "succeeded"]);
}
