//! `store copy`: every row of one store into an empty store of either backend (SQLite ⇄
//! PostgreSQL), in one target transaction, verified by counting each table on both sides.
//!
//! Owns the list of tables a copy moves and their order, reading each backend's schema
//! (tables, columns, identities), batched inserts, resetting PostgreSQL's identities past
//! the copied ids and the checks after. Must not write to the source (it is only read,
//! in one snapshot) nor to a target that already holds rows.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::tx::{Backend, Param, Tx, Value, params};
use super::{Location, Store, StoreError};
use crate::Invalid;
use crate::home::Home;

/// The tables a copy moves, each after every table its foreign keys point at (a job's
/// parent comes first too: rows are read in `rowid` order, which is creation order).
pub const TABLES: &[&str] = &[
    "meta",
    "agents",
    "daemons",
    "runs",
    "jobs",
    "job_payloads",
    "job_worktrees",
    "job_lands",
    "delegations",
    "escalations",
    "events",
    "chat_threads",
    "chat_messages",
    "chat_mentions",
    "chat_thread_meta",
    "chat_job_links",
    "chat_seen",
    "memory_observations",
    "activity",
    "job_activity",
];

/// Tables a copy leaves to the target: the schema's own version record, the unread
/// counters, which the target's triggers rebuild from the copied mentions (a source's
/// counters may hold rows fallen to zero that a rebuild would not make), and the search
/// index's documents and the usage rollup, which the target's triggers make from the
/// copied rows.
pub const DERIVED: &[&str] = &[
    "schema_version",
    "chat_unread",
    "search_docs",
    "usage_hours",
];

/// SQLite's FTS5 tables of the search index and the tables they keep themselves in: the
/// index's own storage (never empty, even in a fresh store), filled by the target's
/// triggers like `search_docs`. The activity steps' table reads its text from `activity`
/// and keeps no sizes, so it has no content or size table.
pub const FULL_TEXT: &[&str] = &[
    "search_text",
    "search_text_data",
    "search_text_idx",
    "search_text_content",
    "search_text_docsize",
    "search_text_config",
    "search_activity",
    "search_activity_data",
    "search_activity_idx",
    "search_activity_config",
];

/// Bound values per insert statement: well under SQLite's and PostgreSQL's limits, large
/// enough that a wide table still moves dozens of rows per round trip.
const VALUES_PER_BATCH: usize = 4000;

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("copying {table}: {cause}")]
    Table { table: String, cause: StoreError },
    #[error("{table}: the source holds {expected} rows but the target received {found}")]
    Count {
        table: String,
        expected: u64,
        found: u64,
    },
    #[error("chat_unread: the target's counters disagree with a count of its mentions")]
    Counters,
    /// The schema has a table or column this copy does not know: copying would drop it.
    #[error("store copy does not know {0} (add it to store::copy::TABLES)")]
    Unknown(String),
}

impl CopyError {
    /// Bad input (exit 2): a target that is not empty, not a store, or the source itself.
    pub(crate) fn is_invalid(&self) -> bool {
        match self {
            Self::Invalid(_) => true,
            Self::Store(e) | Self::Table { cause: e, .. } => e.is_invalid(),
            _ => false,
        }
    }
}

/// One table of a finished copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableCount {
    pub table: String,
    pub rows: u64,
    /// Not copied but rebuilt by the target from copied rows (`DERIVED`).
    pub rebuilt: bool,
}

/// What a copy wrote, every count checked against the source.
#[derive(Debug, Clone, Serialize)]
pub struct Copied {
    /// The target as messages name it (a PostgreSQL URL without its password).
    pub target: String,
    pub tables: Vec<TableCount>,
    /// Rows copied (rebuilt tables left out).
    pub rows: u64,
}

/// Where the home's store lives: its URL (`--store`, `$GITMOOT_STORE`, `[store] url`) or
/// the home's own SQLite file.
pub(crate) fn home_location(home: &Home) -> Result<Location, Invalid> {
    match home.store_url() {
        Some(url) => Location::parse(url),
        None => Ok(Location::Sqlite(home.db_path())),
    }
}

/// Copies every row of the store at `from` into the empty store at `to` (created and
/// migrated if need be). Bad input (the same store twice, a source file that does not
/// exist, a target that holds data) is `CopyError::Invalid` and writes no row.
pub fn copy(from: &Location, to: &Location) -> Result<Copied, CopyError> {
    if same_place(from, to) {
        return Err(Invalid(format!(
            "the source and the target are the same store: {}",
            to.display()
        ))
        .into());
    }
    if let Location::Sqlite(path) = from
        && !path.exists()
    {
        return Err(Invalid(format!("store {} does not exist", path.display())).into());
    }
    let mut source = Store::open_location(from)?;
    let mut target = Store::open_location(to)?;
    let shown = to.display();
    source.read(|src| {
        target.write(|dst| {
            known_tables(src)?;
            known_tables(dst)?;
            refuse_data(dst, &shown)?;
            // The same (empty) database under two URLs: a fresh target has its own id.
            if super::meta::home_id(src)? == super::meta::home_id(dst)? {
                return Err(Invalid(format!(
                    "the source and the target are the same store: {shown}"
                ))
                .into());
            }
            let mut tables = Vec::new();
            for &table in TABLES {
                let rows = copy_table(src, dst, table).map_err(|e| match e {
                    CopyError::Store(cause) => CopyError::Table {
                        table: table.into(),
                        cause,
                    },
                    other => other,
                })?;
                tables.push(TableCount {
                    table: table.into(),
                    rows,
                    rebuilt: false,
                });
            }
            tables.push(TableCount {
                table: "chat_unread".into(),
                rows: check_unread(dst)?,
                rebuilt: true,
            });
            let rows = tables.iter().filter(|t| !t.rebuilt).map(|t| t.rows).sum();
            Ok(Copied {
                target: shown.clone(),
                tables,
                rows,
            })
        })
    })
}

/// Whether two locations name one store before either is opened.
fn same_place(a: &Location, b: &Location) -> bool {
    match (a, b) {
        (Location::Sqlite(a), Location::Sqlite(b)) => canonical(a) == canonical(b),
        _ => a == b,
    }
}

/// A file's canonical path, or (a file not made yet) its folder's joined with its name.
fn canonical(path: &Path) -> Option<std::path::PathBuf> {
    path.canonicalize().ok().or_else(|| {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir
            .map_or_else(std::env::current_dir, Path::canonicalize)
            .ok()?;
        Some(dir.join(path.file_name()?))
    })
}

/// Every table the schema made, on either backend.
pub fn schema_tables(tx: &Tx<'_>) -> Result<BTreeSet<String>, StoreError> {
    let sql = match tx.backend() {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        }
        Backend::Postgres => {
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
        }
    };
    Ok(tx
        .query_map(sql, params![], |r| r.get(0))?
        .into_iter()
        .collect())
}

/// Fails on a table the schema has and this copy would leave behind, or one it expects
/// and the schema lacks.
fn known_tables(tx: &Tx<'_>) -> Result<(), CopyError> {
    let have = schema_tables(tx)?;
    let listed: BTreeSet<String> = TABLES.iter().map(|t| t.to_string()).collect();
    if let Some(t) = have.iter().find(|t| {
        !listed.contains(*t) && !DERIVED.contains(&t.as_str()) && !FULL_TEXT.contains(&t.as_str())
    }) {
        return Err(CopyError::Unknown(format!("table {t}")));
    }
    if let Some(t) = listed.iter().find(|t| !have.contains(*t)) {
        return Err(CopyError::Unknown(format!("a schema without table {t}")));
    }
    Ok(())
}

/// Refuses a target with any row beyond its own fresh home id.
fn refuse_data(dst: &Tx<'_>, shown: &str) -> Result<(), CopyError> {
    let bookkeeping = ["meta", "schema_version"];
    for table in TABLES.iter().chain(DERIVED) {
        if bookkeeping.contains(table) {
            continue;
        }
        let any = dst.query_opt(&format!("SELECT 1 FROM {table} LIMIT 1"), params![], |_| {
            Ok(())
        })?;
        if any.is_some() {
            return Err(Invalid(format!(
                "store {shown} already holds data (table {table} has rows); store copy writes only into an empty store"
            ))
            .into());
        }
    }
    Ok(())
}

/// One column of a table as a side of the copy sees it.
struct Column {
    name: String,
    /// PostgreSQL's `jsonb`, which takes no empty text.
    json: bool,
}

/// The columns of `table`, `rowid` among them where the table keeps one apart from its
/// key (SQLite's implicit rowid, PostgreSQL's explicit column): it orders ties, so it
/// travels too.
fn columns(tx: &Tx<'_>, table: &str) -> Result<Vec<Column>, StoreError> {
    match tx.backend() {
        Backend::Sqlite => {
            let mut cols: Vec<Column> = tx.query_map(
                "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
                params![table],
                |r| {
                    Ok(Column {
                        name: r.get(0)?,
                        json: false,
                    })
                },
            )?;
            let sql: String = tx.one(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                params![table],
            )?;
            // An INTEGER PRIMARY KEY is the rowid itself; WITHOUT ROWID tables have none.
            let alias: i64 = tx.one(
                "SELECT COUNT(*) = 1 AND MAX(pk = 1 AND upper(type) = 'INTEGER')
                 FROM pragma_table_info(?1) WHERE pk > 0",
                params![table],
            )?;
            if alias == 0 && !sql.to_ascii_uppercase().contains("WITHOUT ROWID") {
                cols.push(Column {
                    name: "rowid".into(),
                    json: false,
                });
            }
            Ok(cols)
        }
        Backend::Postgres => tx.query_map(
            "SELECT column_name::text, data_type::text FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = ?1 ORDER BY ordinal_position",
            params![table],
            |r| {
                Ok(Column {
                    name: r.get(0)?,
                    json: r.get::<String>(1)? == "jsonb",
                })
            },
        ),
    }
}

/// The columns both sides hold, with whether the target's is jsonb. A `rowid` on one side
/// only is left to that side; any other column on one side only is a schema this copy
/// cannot carry over whole.
fn shared_columns(
    src: &Tx<'_>,
    dst: &Tx<'_>,
    table: &str,
) -> Result<Vec<(String, bool)>, CopyError> {
    let from = columns(src, table)?;
    let to: BTreeMap<String, bool> = columns(dst, table)?
        .into_iter()
        .map(|c| (c.name, c.json))
        .collect();
    let names: BTreeSet<&str> = from.iter().map(|c| c.name.as_str()).collect();
    if let Some(lone) = from
        .iter()
        .map(|c| c.name.as_str())
        .chain(to.keys().map(String::as_str))
        .find(|n| *n != "rowid" && (!names.contains(n) || !to.contains_key(*n)))
    {
        return Err(CopyError::Unknown(format!(
            "column {table}.{lone}, held by one store only"
        )));
    }
    Ok(from
        .into_iter()
        .filter_map(|c| to.get(&c.name).map(|json| (c.name, *json)))
        .collect())
}

/// A value read from the source, kept until its batch is written.
struct Owned(Value<'static>);

impl Param for Owned {
    fn value(&self) -> Value<'_> {
        match &self.0 {
            Value::Text(t) => Value::Text(Cow::Borrowed(t)),
            other => other.clone(),
        }
    }
}

fn owned(v: Value<'_>, json: bool) -> Owned {
    Owned(match v {
        // Readers take empty JSON text for none (`Row::json`); jsonb holds only JSON.
        Value::Text(t) if json && t.is_empty() => Value::Null,
        Value::Text(t) => Value::Text(Cow::Owned(t.into_owned())),
        Value::Null => Value::Null,
        Value::Int(i) => Value::Int(i),
        Value::Real(f) => Value::Real(f),
    })
}

/// Copies one table in batches and checks the target's count against the source's.
fn copy_table(src: &Tx<'_>, dst: &Tx<'_>, table: &str) -> Result<u64, CopyError> {
    let cols = shared_columns(src, dst, table)?;
    let list = cols
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let order = if cols.iter().any(|(n, _)| n == "rowid") {
        " ORDER BY rowid"
    } else {
        ""
    };
    let select = format!("SELECT {list} FROM {table}{order}");
    let per_batch = (VALUES_PER_BATCH / cols.len()).max(1);
    if table == "meta" {
        // The target's migration stamped a home id of its own; the home keeps its own.
        dst.execute("DELETE FROM meta", params![])?;
    }
    let mut batch: Vec<Owned> = Vec::with_capacity(per_batch * cols.len());
    let mut copied = 0u64;
    let mut take = |r: &super::tx::Row<'_>| -> Result<(), CopyError> {
        for (i, (_, json)) in cols.iter().enumerate() {
            batch.push(owned(r.value(i)?, *json));
        }
        if batch.len() == per_batch * cols.len() {
            copied += insert(dst, table, &list, cols.len(), &batch)?;
            batch.clear();
        }
        Ok(())
    };
    match src.backend() {
        Backend::Sqlite => src.query_each(&select, params![], &mut take)?,
        Backend::Postgres => {
            // A cursor keeps one batch of a large table in memory at a time; each table
            // has its own, since a prepared FETCH keeps the row shape of its first use.
            let cursor = format!("gitmoot_copy_{table}");
            src.batch(&format!("DECLARE {cursor} NO SCROLL CURSOR FOR {select}"))?;
            let fetch = format!("FETCH {per_batch} FROM {cursor}");
            loop {
                let mut n = 0;
                src.query_each(&fetch, params![], |r| {
                    n += 1;
                    take(r)
                })?;
                if n < per_batch {
                    break;
                }
            }
            src.batch(&format!("CLOSE {cursor}"))?;
        }
    }
    if !batch.is_empty() {
        copied += insert(dst, table, &list, cols.len(), &batch)?;
    }
    if dst.backend() == Backend::Postgres {
        reset_identities(dst, table)?;
    }
    let count = format!("SELECT COUNT(*) FROM {table}");
    let expected: u64 = src.one(&count, params![])?;
    let found: u64 = dst.one(&count, params![])?;
    for found in [copied, found] {
        if found != expected {
            return Err(CopyError::Count {
                table: table.into(),
                expected,
                found,
            });
        }
    }
    Ok(found)
}

/// Writes the rows in `values` (`width` values each) with one statement.
fn insert(
    dst: &Tx<'_>,
    table: &str,
    list: &str,
    width: usize,
    values: &[Owned],
) -> Result<u64, StoreError> {
    let rows: Vec<String> = values
        .chunks(width)
        .enumerate()
        .map(|(r, _)| {
            let marks: Vec<String> = (1..=width).map(|c| format!("?{}", r * width + c)).collect();
            format!("({})", marks.join(", "))
        })
        .collect();
    let params: Vec<&dyn Param> = values.iter().map(|v| v as &dyn Param).collect();
    dst.execute(
        &format!("INSERT INTO {table}({list}) VALUES {}", rows.join(", ")),
        &params,
    )?;
    Ok((values.len() / width) as u64)
}

/// Moves each identity sequence of `table` past the largest copied value, so the next
/// row the target makes does not collide with a copied one (SQLite's AUTOINCREMENT and
/// rowid follow inserted ids by themselves).
fn reset_identities(dst: &Tx<'_>, table: &str) -> Result<(), StoreError> {
    let identities: Vec<String> = dst.query_map(
        "SELECT column_name::text FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ?1 AND is_identity = 'YES'",
        params![table],
        |r| r.get(0),
    )?;
    for col in identities {
        dst.query_map(
            &format!(
                "SELECT setval(pg_get_serial_sequence(?1, ?2), top)
                 FROM (SELECT MAX({col}) AS top FROM {table}) copied WHERE top IS NOT NULL"
            ),
            params![table, col],
            |_| Ok(()),
        )?;
    }
    Ok(())
}

/// The target's unread counters, rebuilt by its triggers as the mentions arrived, must
/// equal a full count of its mentions; returns how many counters count something.
fn check_unread(dst: &Tx<'_>) -> Result<u64, CopyError> {
    let read = |sql: &str| -> Result<BTreeMap<(String, String, String), i64>, StoreError> {
        Ok(dst
            .query_map(sql, params![], |r| {
                Ok(((r.get(0)?, r.get(1)?, r.get(2)?), r.get(3)?))
            })?
            .into_iter()
            .collect())
    };
    let counters = read("SELECT agent, agent_origin, thread_id, n FROM chat_unread WHERE n <> 0")?;
    let counted = read(
        "SELECT agent, agent_origin, thread_id, COUNT(*) FROM chat_mentions
         WHERE unread = 1 AND resolved = 1 GROUP BY agent, agent_origin, thread_id",
    )?;
    if counters != counted {
        return Err(CopyError::Counters);
    }
    Ok(counters.len() as u64)
}
