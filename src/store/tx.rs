//! The backend-neutral store transaction: `Tx` runs one statement at a time on SQLite or
//! PostgreSQL, with `?N` placeholders, neutral parameters (`Param`) and a neutral row
//! accessor (`Row::get` through `FromValue`).
//!
//! Store functions write their SQL once, in SQLite's spelling; `pg::translate` is the one
//! place it is rewritten for PostgreSQL. Values cross as `value::Value`. Two habits keep
//! one spelling valid on both: every bound parameter is named in the statement, and an
//! optional filter reads `(col = ?N OR ?N IS NULL)` (PostgreSQL types a parameter at its
//! first use, which `?N IS NULL` does not settle).

use super::pg::PgConn;
pub use super::value::{FromValue, Param, Value};
use super::{Result, StoreError};

/// Which database a transaction runs on, for the few callers whose answer differs (the
/// schema, maintenance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// One store transaction (or, from `Store::conn`, a connection outside one). Copyable: it
/// only borrows the store's connection.
#[derive(Clone, Copy)]
pub struct Tx<'a> {
    pub(super) inner: Inner<'a>,
}

#[derive(Clone, Copy)]
pub(super) enum Inner<'a> {
    Sqlite(&'a rusqlite::Connection),
    Pg(&'a PgConn),
}

impl<'a> From<&'a rusqlite::Connection> for Tx<'a> {
    fn from(conn: &'a rusqlite::Connection) -> Self {
        Self {
            inner: Inner::Sqlite(conn),
        }
    }
}

// Store functions take `impl Into<Tx>` while the engine, chat and the daemon still hold
// rusqlite handles, so each can move to `Tx` on its own.
impl<'a> From<&'a rusqlite::Transaction<'_>> for Tx<'a> {
    fn from(tx: &'a rusqlite::Transaction<'_>) -> Self {
        Self {
            inner: Inner::Sqlite(tx),
        }
    }
}

impl<'a> From<&Tx<'a>> for Tx<'a> {
    fn from(tx: &Tx<'a>) -> Self {
        *tx
    }
}

/// One result row.
pub struct Row<'r> {
    pub(super) inner: RowInner<'r>,
}

pub(super) enum RowInner<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Pg(&'r postgres::Row),
}

impl Row<'_> {
    /// Column `i` as a `T`; a mismatch names the column's position and the reason.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T> {
        T::from_value(self.value(i)?).map_err(|reason| StoreError::Column { index: i, reason })
    }

    /// Column `i` as it is stored.
    pub fn value(&self, i: usize) -> Result<Value<'_>> {
        Ok(match &self.inner {
            RowInner::Sqlite(r) => sqlite_value(r.get_ref(i)?),
            RowInner::Pg(r) => r.try_get::<_, super::pg::Cell<'_>>(i)?.0,
        })
    }

    /// Column `i` holding JSON text (a jsonb column on PostgreSQL), decoded; NULL or empty
    /// text is None.
    pub fn json<T: serde::de::DeserializeOwned>(&self, i: usize) -> Result<Option<T>> {
        let text: Option<String> = self.get(i)?;
        text.filter(|t| !t.is_empty())
            .map(|t| {
                serde_json::from_str(&t).map_err(|e| StoreError::Column {
                    index: i,
                    reason: e.to_string(),
                })
            })
            .transpose()
    }
}

fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> Value<'_> {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::Text(String::from_utf8_lossy(t)),
    }
}

/// Binds a neutral value as SQLite's.
struct SqliteParam<'p>(Value<'p>);

impl rusqlite::ToSql for SqliteParam<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match &self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
        })
    }
}

fn sqlite_params<'p>(params: &'p [&'p dyn Param]) -> Vec<SqliteParam<'p>> {
    params.iter().map(|p| SqliteParam(p.value())).collect()
}

impl<'a> Tx<'a> {
    pub(super) fn pg(conn: &'a PgConn) -> Self {
        Self {
            inner: Inner::Pg(conn),
        }
    }

    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Sqlite(_) => Backend::Sqlite,
            Inner::Pg(_) => Backend::Postgres,
        }
    }

    /// The SQLite connection under this transaction, for the bench's own SQL on its
    /// scratch stores (`PRAGMA`s, bulk copies); any other store is refused.
    pub fn sqlite(&self) -> Result<&'a rusqlite::Connection> {
        match self.inner {
            Inner::Sqlite(c) => Ok(c),
            Inner::Pg(_) => Err(StoreError::Invalid(crate::Invalid(
                "this measurement needs a SQLite store".into(),
            ))),
        }
    }

    /// Runs one statement; returns the rows it changed.
    pub fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        match self.inner {
            Inner::Sqlite(c) => {
                let ps = sqlite_params(params);
                Ok(c.prepare_cached(sql)?
                    .execute(rusqlite::params_from_iter(ps.iter()))?)
            }
            Inner::Pg(c) => c.execute(sql, params),
        }
    }

    /// Every row `f` makes of the statement's rows, in order.
    pub fn query_map<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.query_each(sql, params, |r| {
            out.push(f(r)?);
            Ok::<_, StoreError>(())
        })?;
        Ok(out)
    }

    /// Hands each row to `f` in order, stopping at its first error. SQLite streams, one
    /// row held at a time; PostgreSQL fetches the rows first, so `f` may query this
    /// transaction on either.
    pub(crate) fn query_each<E: From<StoreError>>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        match self.inner {
            Inner::Sqlite(c) => {
                let ps = sqlite_params(params);
                let mut st = c.prepare_cached(sql).map_err(StoreError::from)?;
                let mut rows = st
                    .query(rusqlite::params_from_iter(ps.iter()))
                    .map_err(StoreError::from)?;
                while let Some(r) = rows.next().map_err(StoreError::from)? {
                    f(&Row {
                        inner: RowInner::Sqlite(r),
                    })?;
                }
                Ok(())
            }
            Inner::Pg(c) => {
                for r in &c.query(sql, params)? {
                    f(&Row {
                        inner: RowInner::Pg(r),
                    })?;
                }
                Ok(())
            }
        }
    }

    /// The first row, if any, made into a `T` by `f`.
    pub(crate) fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        match self.inner {
            Inner::Sqlite(c) => {
                let ps = sqlite_params(params);
                let mut st = c.prepare_cached(sql)?;
                let mut rows = st.query(rusqlite::params_from_iter(ps.iter()))?;
                match rows.next()? {
                    Some(r) => f(&Row {
                        inner: RowInner::Sqlite(r),
                    })
                    .map(Some),
                    None => Ok(None),
                }
            }
            Inner::Pg(c) => match c.query(sql, params)?.first() {
                Some(r) => f(&Row {
                    inner: RowInner::Pg(r),
                })
                .map(Some),
                None => Ok(None),
            },
        }
    }

    /// The first row made into a `T`; no row is a not-found error quoting the statement.
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, params, f)?
            .ok_or_else(|| StoreError::NoRow {
                sql: sql.to_string(),
            })
    }

    /// A single value: `SELECT COUNT(*) …` and its kin.
    pub fn one<T: FromValue>(&self, sql: &str, params: &[&dyn Param]) -> Result<T> {
        self.query_row(sql, params, |r| r.get(0))
    }

    /// Statements without parameters, separated by `;` (schema, savepoints).
    pub fn batch(&self, sql: &str) -> Result<()> {
        match self.inner {
            Inner::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Inner::Pg(c) => c.batch(sql),
        }
    }

    /// Runs `f` inside a savepoint: its writes stay when it succeeds and are undone when it
    /// fails, while the transaction itself goes on either way. The outer `Result` is the
    /// savepoint's own bookkeeping; the inner one is `f`'s.
    pub fn savepoint<T, E>(
        &self,
        f: impl FnOnce() -> std::result::Result<T, E>,
    ) -> Result<std::result::Result<T, E>> {
        self.control("SAVEPOINT gitmoot_step")?;
        let out = f();
        if out.is_err() {
            self.control("ROLLBACK TO gitmoot_step")?;
        }
        self.control("RELEASE gitmoot_step")?;
        Ok(out)
    }

    /// One transaction-control statement. On SQLite it is prepared once per connection:
    /// the daemon opens and closes a savepoint for every job it settles, and parsing the
    /// text each time is a share of that cost.
    pub(super) fn control(&self, sql: &str) -> Result<()> {
        match self.inner {
            Inner::Sqlite(c) => {
                c.prepare_cached(sql)?.raw_execute()?;
                Ok(())
            }
            Inner::Pg(c) => c.batch(sql),
        }
    }
}

pub use crate::params;
