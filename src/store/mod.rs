//! The store: one SQLite file per home (WAL) or a PostgreSQL database, every state change
//! one transaction that also appends to `events`.
//!
//! Owns connections, pragmas, migrations, the backend-neutral transaction (`tx`, with the
//! PostgreSQL side in `pg`) and one module per aggregate (jobs, runs, events, delegations,
//! escalations, agents, chat, memory). Holds no policy: the engine and chat decide, the
//! store records.

pub mod activity;
pub mod agents;
pub mod chat;
pub mod copy;
pub mod daemons;
pub mod delegations;
pub mod escalations;
#[macro_use]
pub mod events;
mod feed;
pub mod fleet;
pub mod full;
pub mod jobs;
pub mod lands;
pub mod location;
pub mod memory;
pub mod meta;
pub mod payloads;
mod pg;
mod put;
pub(crate) mod row;
pub mod runs;
mod schema;
pub mod scope;
pub mod search;
pub mod stalls;
pub mod tx;
pub mod usage;
pub mod value;
pub mod views;
pub mod worktrees;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::Invalid;
use crate::home::Home;

pub use feed::{Listener, watch as watch_changes};
pub use location::Location;
pub(crate) use put::{Columns, put_row, put_row_over};
pub use schema::{PG_SCHEMA_VERSION, SCHEMA_VERSION};
pub use scope::Scope;
pub use tx::{Backend, Tx};

/// Everything the store can fail with. A variant's message names its cause and is the
/// end of the chain (the cause is not handed on as a source, so `error_line` shows it
/// once); `Invalid` is transparent and answers `is_invalid`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(rusqlite::Error),
    #[error("database: {}", postgres_text(.0))]
    Postgres(postgres::Error),
    /// A column that does not hold what the row is read as.
    #[error("column {index}: {reason}")]
    Column { index: usize, reason: String },
    #[error(transparent)]
    Unreadable(jobs::Unreadable),
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The home's identity row is gone: the file was not made by this gitmoot.
    #[error("meta home_id is missing")]
    HomeIdMissing,
    /// A query that always returns one row returned none.
    #[error("no row from: {sql}")]
    NoRow { sql: String },
    #[error(
        "database {path} has schema version {found}, newer than this gitmoot supports ({supported}); upgrade gitmoot"
    )]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    /// Opening or migrating the file failed: corrupt, unreadable, not a database.
    #[error("store {path}: {cause}")]
    File {
        path: PathBuf,
        cause: rusqlite::Error,
    },
    /// The SQLite file is gone while the daemon lock beside it stays: it was deleted or
    /// moved under a daemon (or since one ran), and a new empty store must not replace it
    /// unasked.
    #[error(
        "store {} is missing but its daemon lock {} is still there: the file was deleted or moved while a daemon used it; restore it, or remove {} to start an empty store",
        path.display(), lock.display(), lock.display()
    )]
    Vanished { path: PathBuf, lock: PathBuf },
    /// Connecting to or migrating a PostgreSQL store failed.
    #[error("store {url}: {}", postgres_text(.cause))]
    Server { url: String, cause: postgres::Error },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("stored JSON is corrupt: {0}")]
    Json(serde_json::Error),
    /// A scoped write reached what its scope does not hold; `Store::write_scoped` runs it again.
    #[error("{0} is outside this transaction's scope")]
    OutOfScope(String),
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sqlite(e)
    }
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> Self {
        Self::Postgres(e)
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        Self::Json(e)
    }
}

impl StoreError {
    /// Bad input (exit 2) rather than a failure of the store.
    pub(crate) fn is_invalid(&self) -> bool {
        matches!(self, Self::Invalid(_))
    }

    /// A transaction lost to a concurrent one and may simply be run again: SQLite busy or
    /// locked past the busy timeout, a PostgreSQL serialization failure or deadlock.
    pub(crate) fn is_busy(&self) -> bool {
        match self {
            Self::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            Self::Postgres(e) => e.code().is_some_and(|c| {
                *c == postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
                    || *c == postgres::error::SqlState::T_R_DEADLOCK_DETECTED
            }),
            _ => false,
        }
    }

    /// The connection to a PostgreSQL server is gone (closed, reset, the server shutting
    /// down or not accepting connections yet): reconnecting may help, nothing was half done.
    pub fn is_connection_lost(&self) -> bool {
        let lost = |e: &postgres::Error| {
            e.is_closed()
                || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
                || e.code().is_some_and(|c| {
                    // 25P03: the server ended a session left idle inside its transaction
                    // (a paused writer, see `pg::WRITER_IDLE_MS`).
                    c.code().starts_with("08")
                        || matches!(c.code(), "57P01" | "57P02" | "57P03" | "25P03")
                })
        };
        match self {
            Self::Postgres(e) | Self::Server { cause: e, .. } => lost(e),
            _ => false,
        }
    }
}

/// A PostgreSQL error with the server's own message and detail, which `Display` leaves out.
fn postgres_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}: {detail}", db.message()),
            None => db.message().to_string(),
        },
        None => e.to_string(),
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Prepared statements kept per connection (the code holds about a hundred distinct ones).
const STATEMENT_CACHE: usize = 128;

/// Tunes SQLite for this whole process; the binary calls it first, before any thread
/// starts or any store opens (SQLite refuses it once initialized, and it is not safe while
/// another thread uses SQLite).
///
/// SQLite stops counting the memory it holds: with the count on, each of its allocations
/// takes a process-wide mutex, about 6 % of what a daemon spends on each activity record
/// it stores (44.8k against 47.5k instructions, counted with cachegrind), and nothing here
/// reads the count.
pub fn tune_sqlite_for_process() {
    // SAFETY: called before any other SQLite call in the process, on its only thread.
    unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int)
    };
}

/// One connection to a home's database.
pub struct Store {
    conn: Conn,
    /// The SQLite file, or the PostgreSQL URL without its password, for messages.
    path: PathBuf,
}

enum Conn {
    Sqlite(Connection),
    /// The connection and the URL it came from, to reopen it when the server drops it.
    Pg(Box<pg::PgConn>, String),
}

impl Store {
    /// Opens (creating with private permissions) and migrates the home's database.
    pub fn open_home(home: &Home) -> Result<Self> {
        let location = Location::of_home(home)?;
        // Before `ensure` would make the home's own file again.
        location.refuse_vanished()?;
        // The home holds this host's config, logs and artifacts whatever the store.
        home.ensure()?;
        Self::open_location(&location)
    }

    /// Opens and migrates the store at `location`.
    pub fn open_location(location: &Location) -> Result<Self> {
        match location {
            Location::Sqlite(path) => Self::open(path),
            Location::Postgres(url) => {
                let shown = location.display();
                let named = |cause| StoreError::Server {
                    url: shown.clone(),
                    cause,
                };
                let conn = pg::PgConn::connect(url).map_err(|e| match e {
                    StoreError::Postgres(cause) => named(cause),
                    other => other,
                })?;
                let mut store = Self {
                    conn: Conn::Pg(Box::new(conn), url.clone()),
                    path: PathBuf::from(&shown),
                };
                store
                    .write(|tx| schema::migrate_pg(tx, &shown))
                    .map_err(|e| match e {
                        StoreError::Postgres(cause) => named(cause),
                        other => other,
                    })?;
                Ok(store)
            }
        }
    }

    /// Opens and migrates the database at `path`; a failure names the file.
    pub fn open(path: &Path) -> Result<Self> {
        Location::Sqlite(path.to_path_buf()).refuse_vanished()?;
        Self::open_inner(path).map_err(|e| match e {
            StoreError::Sqlite(cause) => StoreError::File {
                path: path.to_path_buf(),
                cause,
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
        // Plans that do not depend on bound values: otherwise a statement with a `col = ?`
        // filter its index does not cover is marked to be re-planned on rebinding, and
        // rusqlite clears the bindings of every statement it returns to its cache, so such
        // a statement was parsed and planned again on every use: several times per job in
        // the daemon (a tree's queued jobs, a job's open escalation, the claim's queue
        // page), once per tree in the control room's first load.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        let mut conn = conn;
        schema::migrate(&mut conn, path)?;
        Ok(Self {
            conn: Conn::Sqlite(conn),
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn backend(&self) -> Backend {
        match self.conn {
            Conn::Sqlite(_) => Backend::Sqlite,
            Conn::Pg(..) => Backend::Postgres,
        }
    }

    /// Access outside a transaction: each statement commits (or reads) alone.
    pub fn conn(&self) -> Tx<'_> {
        match &self.conn {
            Conn::Sqlite(c) => Tx::from(c),
            Conn::Pg(c, _) => Tx::pg(c),
        }
    }

    /// Runs `f` in one transaction that holds the writers' lock from its start (SQLite's
    /// IMMEDIATE, so concurrent writers queue on `busy_timeout` instead of failing mid-way;
    /// PostgreSQL's advisory lock), committed when `f` succeeds and rolled back when it
    /// fails.
    pub fn write<T, E>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.in_tx("BEGIN IMMEDIATE", pg::PgConn::begin_write, f)
    }

    /// A read-only transaction for multi-statement reads that must agree with each other:
    /// every statement of `f` sees one snapshot.
    pub fn read<T, E>(&mut self, f: impl FnOnce(&Tx<'_>) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.in_tx("BEGIN DEFERRED", pg::PgConn::begin_read, f)
    }

    fn in_tx<T, E>(
        &mut self,
        begin_sqlite: &str,
        begin_pg: fn(&pg::PgConn) -> Result<()>,
        f: impl FnOnce(&Tx<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.heal()?;
        match &mut self.conn {
            Conn::Sqlite(c) => {
                let tx = Tx::from(&*c);
                tx.control(begin_sqlite)?;
                // Rolled back on every way out but the commit, a panic in `f` included.
                struct Open<'c>(Option<&'c rusqlite::Connection>);
                impl Drop for Open<'_> {
                    fn drop(&mut self) {
                        if let Some(c) = self.0 {
                            let _ = c.execute_batch("ROLLBACK");
                        }
                    }
                }
                let mut open = Open(Some(&*c));
                let out = f(&tx)?;
                tx.control("COMMIT")?;
                open.0 = None;
                Ok(out)
            }
            Conn::Pg(c, _) => {
                begin_pg(c)?;
                pg::finish(c, f(&Tx::pg(c)))
            }
        }
    }

    /// Reopens a PostgreSQL connection the server closed (a restart, a failover, an
    /// administrator's terminate), so the failure that noticed it is the only one: the
    /// next transaction (or `Loader::load`, or an executor action) runs on a fresh
    /// connection. A server still unreachable is this call's error, and the caller's next
    /// attempt tries again. SQLite files never need it.
    pub(crate) fn heal(&mut self) -> Result<()> {
        let Conn::Pg(c, url) = &self.conn else {
            return Ok(());
        };
        if !c.is_closed() {
            return Ok(());
        }
        let url = url.clone();
        tracing::warn!(store = %self.path.display(), "store connection lost; reconnecting");
        *self = Self::open_location(&Location::Postgres(url))?;
        Ok(())
    }

    /// For a connection that settles and claims many jobs a transaction (the daemon's).
    pub(crate) fn tune_for_batches(&self) -> Result<()> {
        // PostgreSQL keeps a savepoint in memory and plans on its own.
        let Conn::Sqlite(conn) = &self.conn else {
            return Ok(());
        };
        // Each settlement of a batch runs under its own savepoint, whose statement journal
        // would otherwise be a temp file written page by page on every pass.
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        // A page cache of 8 MiB rather than 2: a flush of a thousand streaming agents' lines
        // dirties more pages than 2 MiB hold, and SQLite then writes pages to the WAL
        // before the commit and reads them back (a tenth of such a daemon's CPU).
        conn.pragma_update(None, "cache_size", -8192)?;
        // Checkpoint every ~40 MB of WAL rather than every 4 MB: a checkpoint copies pages
        // back and syncs the file, a few percent of a busy daemon's time, and ten times
        // fewer of them rewrite the hot index pages ten times less often. Readers scan a
        // WAL at most that large; other connections keep the default. (A checkpoint on a
        // thread of its own was tried: the daemon's commits during each pass keep the log
        // from starting over, so passes repeat over an ever longer log.)
        conn.pragma_update(None, "wal_autocheckpoint", 10_000)?;
        Ok(())
    }

    /// Changes whenever another connection commits; cheap, exact cross-process change check.
    /// On PostgreSQL, the server's write-ahead log position: it moves with every commit
    /// (this connection's and other databases' too, which only costs a needless reload).
    pub(crate) fn data_version(&self) -> Result<i64> {
        match &self.conn {
            Conn::Sqlite(c) => Ok(c.query_row("PRAGMA data_version", [], |r| r.get(0))?),
            Conn::Pg(..) => self.conn().one(
                "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint",
                &[],
            ),
        }
    }
}

/// Runs `f` inside a savepoint of the caller's transaction (`Tx::savepoint`).
pub fn savepoint<'a, T, E>(
    tx: impl Into<Tx<'a>>,
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> Result<std::result::Result<T, E>> {
    tx.into().savepoint(f)
}

#[cfg(test)]
pub(crate) use schema::test_conn;
