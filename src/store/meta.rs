//! The `meta` table: the home's identity (`home_id`, 32 hex) and other singletons.

use rusqlite::{Connection, OptionalExtension, params};

use super::Result;

pub(super) const SCHEMA: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
";

pub(super) fn ensure_home_id(conn: &Connection) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('home_id', ?1) ON CONFLICT(key) DO NOTHING",
        params![crate::ids::random_hex(16)],
    )?;
    Ok(())
}

pub fn get(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

/// This home's stable identity, stamped on chat origins.
pub fn home_id(conn: &Connection) -> Result<String> {
    get(conn, "home_id")?.ok_or_else(|| super::StoreError::not_found("meta home_id is missing"))
}
