//! The SQLite store: one file per home, WAL, every state change one transaction that also
//! appends to `events`.
//!
//! Owns connections, pragmas, migrations and one module per aggregate (jobs, runs, events,
//! delegations, escalations, agents, chat, memory). Holds no policy: the engine and chat
//! decide, the store records.

pub mod activity;
pub mod agents;
pub mod chat;
pub mod daemons;
pub mod delegations;
pub mod escalations;
#[macro_use]
pub mod events;
pub mod jobs;
pub mod memory;
pub mod meta;
pub mod payloads;
pub mod runs;
mod schema;
pub mod views;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, OptionalExtension, ToSql, Transaction, TransactionBehavior};

use crate::Invalid;
use crate::home::Home;

pub use schema::SCHEMA_VERSION;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Invalid(#[from] Invalid),
    #[error("{0}")]
    NotFound(String),
    #[error(
        "database {path} has schema version {found}, newer than this gitmoot supports ({supported}); upgrade gitmoot"
    )]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    /// Opening or migrating the file failed: corrupt, unreadable, not a database.
    #[error("store {path}: {source}")]
    File {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("stored JSON is corrupt: {0}")]
    Json(#[from] serde_json::Error),
}

impl StoreError {
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound(what.into())
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Prepared statements kept per connection (the code holds about a hundred distinct ones).
const STATEMENT_CACHE: usize = 128;

/// One connection to a home's database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating with private permissions) and migrates the home's database.
    pub fn open_home(home: &Home) -> Result<Self> {
        home.ensure()?;
        Self::open(&home.db_path())
    }

    /// Opens and migrates the database at `path`; a failure names the file.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_inner(path).map_err(|e| match e {
            StoreError::Sqlite(source) => StoreError::File {
                path: path.to_path_buf(),
                source,
            },
            other => other,
        })
    }

    fn open_inner(path: &Path) -> Result<Self> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // Writers from the daemon, the TUI and CLI calls meet here: wait rather than fail.
        conn.busy_timeout(Duration::from_secs(30))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Every statement goes through `prepare_cached`; one settlement alone uses more
        // than rusqlite's default 16, which then evicts and re-parses them on every job.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let mut store = Self {
            conn,
            path: path.to_path_buf(),
        };
        schema::migrate(&mut store.conn, path)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read access; each statement sees a consistent snapshot.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` in one IMMEDIATE transaction: it holds the write lock from the start, so
    /// concurrent writers queue on `busy_timeout` instead of failing mid-way.
    pub fn write<T, E>(&mut self, f: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let out = f(&tx)?;
        tx.commit().map_err(StoreError::from)?;
        Ok(out)
    }

    /// Read-only transaction for multi-statement reads that must agree with each other.
    pub fn read<T, E>(&mut self, f: impl FnOnce(&Transaction<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(StoreError::from)?;
        let out = f(&tx)?;
        tx.commit().map_err(StoreError::from)?;
        Ok(out)
    }

    /// For a connection that settles and claims many jobs a transaction (the daemon's).
    pub fn tune_for_batches(&self) -> Result<()> {
        // Each settlement of a batch runs under its own savepoint, whose statement journal
        // would otherwise be a temp file written page by page on every pass.
        self.conn.pragma_update(None, "temp_store", "MEMORY")?;
        // Plans that do not depend on bound values: otherwise a statement with a `col = ?`
        // filter its index does not cover is marked to be re-planned on rebinding, and
        // rusqlite clears the bindings of every statement it returns to its cache, so such
        // a statement (a tree's queued jobs, a job's open escalation, the claim's queue
        // page) was parsed and planned again on every use, several times per job.
        self.conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        Ok(())
    }

    /// Changes whenever another connection commits; cheap, exact cross-process change check.
    pub fn data_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }
}

/// Runs `f` inside a savepoint of the caller's transaction: its writes stay when it
/// succeeds and are undone when it fails, while the transaction itself goes on either way.
/// The outer `Result` is the savepoint's own bookkeeping; the inner one is `f`'s.
pub fn savepoint<T, E>(
    conn: &Connection,
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> Result<std::result::Result<T, E>> {
    conn.execute_batch("SAVEPOINT gitmoot_step")?;
    let out = f();
    conn.execute_batch(if out.is_ok() {
        "RELEASE gitmoot_step"
    } else {
        "ROLLBACK TO gitmoot_step; RELEASE gitmoot_step"
    })?;
    Ok(out)
}

/// Writes one row of `table`, new or existing, keyed by the first of `cols` (whose values
/// `values` gives in the same order). An existing row is updated in place and only in the
/// columns whose values changed: SQLite rewrites an index entry only when the UPDATE names
/// one of the index's columns (every index, when it names a column a foreign key refers
/// through), so a claim or a settlement writes the pages of the few indexes over the
/// columns that moved. `INSERT OR REPLACE` would delete the row and insert it again under
/// a new rowid, rewriting every index entry twice. An unchanged row writes nothing.
pub(crate) fn write_changed(
    conn: &Connection,
    table: &str,
    cols: &str,
    values: &[&dyn ToSql],
) -> Result<()> {
    let names: Vec<&str> = cols.split(", ").map(str::trim).collect();
    let key = names[0];
    let changed = conn
        .prepare_cached(&format!("SELECT {cols} FROM {table} WHERE {key} = ?1"))?
        .query_row([values[0]], |r| {
            let mut changed = Vec::new();
            for (i, v) in values.iter().enumerate() {
                if !same(r.get_ref(i)?, &v.to_sql()?) {
                    changed.push(i);
                }
            }
            Ok(changed)
        })
        .optional()?;
    let Some(changed) = changed else {
        let marks: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
        conn.prepare_cached(&format!(
            "INSERT INTO {table}({cols}) VALUES ({})",
            marks.join(", ")
        ))?
        .execute(values)?;
        return Ok(());
    };
    let Some(&last) = changed.last() else {
        return Ok(());
    };
    let set: Vec<String> = changed
        .iter()
        .map(|&i| format!("{} = ?{}", names[i], i + 1))
        .collect();
    conn.prepare_cached(&format!(
        "UPDATE {table} SET {} WHERE {key} = ?1",
        set.join(", ")
    ))?
    .execute(&values[..=last])?;
    Ok(())
}

/// Whether a stored value is the one about to be written.
fn same(stored: ValueRef<'_>, new: &ToSqlOutput<'_>) -> bool {
    match new {
        ToSqlOutput::Borrowed(v) => *v == stored,
        ToSqlOutput::Owned(v) => ValueRef::from(v) == stored,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, ToSql};

    use super::write_changed;

    const COLS: &str = "id, state, note";

    fn put(conn: &Connection, id: &str, state: &str, note: Option<&str>) {
        let values: [&dyn ToSql; 3] = [&id, &state, &note];
        write_changed(conn, "t", COLS, &values).unwrap();
    }

    fn rowid_state(conn: &Connection) -> (i64, String) {
        conn.query_row("SELECT rowid, state FROM t WHERE id = 'a'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
    }

    #[test]
    fn a_row_is_inserted_once_then_updated_in_place_and_only_when_it_changed() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (id TEXT PRIMARY KEY, state TEXT NOT NULL, note TEXT)")
            .unwrap();
        put(&conn, "a", "queued", None);
        put(&conn, "b", "queued", None);
        let (rowid, _) = rowid_state(&conn);
        let before = conn.total_changes();
        put(&conn, "a", "queued", None);
        assert_eq!(
            conn.total_changes(),
            before,
            "an unchanged row writes nothing"
        );
        put(&conn, "a", "running", Some("claimed"));
        assert_eq!(rowid_state(&conn), (rowid, "running".to_string()));
        let note: Option<String> = conn
            .query_row("SELECT note FROM t WHERE id = 'a'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(note.as_deref(), Some("claimed"));
        put(&conn, "a", "running", None);
        let count: i64 = conn
            .query_row("SELECT COUNT(*) FROM t WHERE note IS NULL", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(count, 2, "a value set back to NULL is written too");
    }
}
