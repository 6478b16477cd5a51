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
    &[super::jobs::LIST_INDEX, super::chat::UNREAD_COUNTERS],
    // Cheaper sends: the badge index the counters made unused.
    &[super::chat::DROP_BADGE_INDEX],
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
    super::meta::ensure_home_id(&tx)?;
    tx.commit()?;
    Ok(())
}
