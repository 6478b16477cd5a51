//! The store's schema, written once: the table list (`tables.rs`) and the migration list
//! (`migrations.rs`), in the words of `model.rs`, drawn as each backend's SQL by
//! `render.rs`; here, running the migrations a store lacks.
//!
//! SQLite versions itself with `PRAGMA user_version`, PostgreSQL with a `schema_version`
//! row, its version 1 being SQLite's `PG_BASELINE`. Each migration runs in one transaction
//! with the version bump, so a crash never leaves a half-migrated store; a store newer than
//! this binary is refused.

use std::path::Path;

use rusqlite::Connection;

use super::tx::{Backend, Tx};
use super::{Result, StoreError};

mod migrations;
mod model;
mod natives;
mod render;
mod rollups;
mod tables;

use migrations::{MIGRATIONS, PG_BASELINE};

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// PostgreSQL's version: 1 for the schema of `PG_BASELINE`, one more per later migration.
pub const PG_SCHEMA_VERSION: i64 = SCHEMA_VERSION - PG_BASELINE as i64 + 1;

/// The SQL that takes a PostgreSQL store to `version`.
fn pg_migration(version: i64) -> String {
    match version {
        1 => render::schema_at(PG_BASELINE, Backend::Postgres),
        later => render::migration(PG_BASELINE + later as usize - 1, Backend::Postgres),
    }
}

/// Migrates the SQLite file at `path` (named in errors) up to `SCHEMA_VERSION`.
pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    refuse_newer(current, SCHEMA_VERSION, path)?;
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    // Re-read under the write lock: a concurrent opener may have migrated meanwhile.
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for version in current.max(0) + 1..=SCHEMA_VERSION {
        tx.execute_batch(&render::migration(version as usize, Backend::Sqlite))?;
        tx.pragma_update(None, "user_version", version)?;
    }
    super::meta::ensure_home_id(&(&*tx).into())?;
    tx.commit()?;
    Ok(())
}

/// Migrates the PostgreSQL store at `url` (named in errors) up to `PG_SCHEMA_VERSION`,
/// under the writers' lock so concurrent openers migrate once.
pub(super) fn migrate_pg(tx: &Tx<'_>, url: &str) -> Result<()> {
    tx.batch("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")?;
    let current: i64 = tx
        .query_opt("SELECT version FROM schema_version", &[], |r| r.get(0))?
        .unwrap_or(0);
    refuse_newer(current, PG_SCHEMA_VERSION, Path::new(url))?;
    for version in current.max(0) + 1..=PG_SCHEMA_VERSION {
        tx.batch(&pg_migration(version))?;
    }
    if current < PG_SCHEMA_VERSION {
        tx.execute("DELETE FROM schema_version", &[])?;
        tx.execute(
            "INSERT INTO schema_version(version) VALUES (?1)",
            super::tx::params![PG_SCHEMA_VERSION],
        )?;
    }
    super::meta::ensure_home_id(tx)
}

fn refuse_newer(found: i64, supported: i64, path: &Path) -> Result<()> {
    if found > supported {
        return Err(StoreError::SchemaTooNew {
            path: path.to_path_buf(),
            found,
            supported,
        });
    }
    Ok(())
}

/// A migrated in-memory SQLite store, for unit tests of the functions over it.
#[cfg(test)]
pub(crate) fn test_conn() -> rusqlite::Connection {
    let mut c = rusqlite::Connection::open_in_memory().expect("an in-memory database");
    migrate(&mut c, std::path::Path::new(":memory:")).expect("the schema");
    c
}

#[cfg(test)]
mod tests;
