//! The `meta` table: the home's identity (`home_id`, 32 hex) and other singletons.

use super::Result;
use super::tx::{Tx, params};

pub(super) fn ensure_home_id(tx: &Tx<'_>) -> Result<()> {
    tx.execute(
        "INSERT INTO meta(key, value) VALUES ('home_id', ?1) ON CONFLICT(key) DO NOTHING",
        params![crate::ids::random_hex(16)],
    )?;
    Ok(())
}

pub fn get(tx: &Tx<'_>, key: &str) -> Result<Option<String>> {
    tx.query_opt("SELECT value FROM meta WHERE key = ?1", params![key], |r| {
        r.get(0)
    })
}

/// This home's stable identity, stamped on chat origins.
pub fn home_id(conn: &Tx<'_>) -> Result<String> {
    get(conn, "home_id")?.ok_or(super::StoreError::HomeIdMissing)
}
