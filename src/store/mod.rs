//! The SQLite store: one file per home, WAL, every state change one transaction that also
//! appends to `events`.
//!
//! Owns connections, pragmas, migrations and one module per aggregate (jobs, runs, events,
//! delegations, escalations, agents, chat, memory). Holds no policy: the engine and chat
//! decide, the store records.

pub mod activity;
pub mod agents;
pub mod chat;
pub mod delegations;
pub mod escalations;
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

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

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
