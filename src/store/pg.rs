//! The PostgreSQL side of `Tx`: one connection with its prepared statements, the
//! translation of the store's SQLite-spelled SQL, and values crossing the wire.
//!
//! `translate` is the only place a dialect difference is spelled out: `?N` placeholders,
//! SQLite's planner hints and index pins, its two-argument `MAX`/`MIN` and its JSON
//! functions (`json_valid`, `json_extract`, `json_each`). A statement
//! is translated and prepared once per connection, as `prepare_cached` does on SQLite.
//!
//! Every write transaction notifies the change feed's channel (`feed`) as it commits.

use std::cell::RefCell;
use std::collections::HashMap;
use std::error::Error;

use bytes::BytesMut;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};

use super::value::{Param, Value};
use super::{Result, StoreError};

/// Prepared statements kept per connection; past this the cache starts over (the store's
/// statements number about a hundred, `job list` filters and column sets add a few).
const STATEMENT_CACHE: usize = 512;

/// Every write transaction takes this transaction-level advisory lock first: exclusively,
/// so it runs alone, as SQLite's IMMEDIATE transactions do and every rule the engine and
/// chat check inside a transaction holds on both backends; or shared, beside the keys of
/// its narrow scope (`scope`).
pub(super) const WRITE_LOCK: i64 = 0x0067_6974_6d6f_6f74;

/// How long a writer may sit idle inside its transaction before the server ends its
/// session: a process paused (SIGSTOP) or hung while it holds the writers' lock would
/// otherwise stall every other writer on the store, and with them the fleet's takeover of
/// its own jobs. Its writes are all client-side work between statements, far below this.
const WRITER_IDLE_MS: u32 = 5_000;

/// The channel every committed write notifies (`feed` listens on it).
pub(super) const CHANNEL: &str = "gitmoot_changes";

/// An advisory lock key of a scope (`scope`): its space and the hash of a name.
pub(super) type Key = (i32, i32);

/// The keys a PostgreSQL transaction holds besides the writers' shared lock.
#[derive(Default)]
pub(super) struct Held {
    pub(super) keys: RefCell<std::collections::HashSet<Key>>,
    /// It touched something outside its keys, or lost a deadlock or a unique key to
    /// another scoped transaction: it must not commit, and runs again unscoped.
    pub(super) strayed: std::cell::Cell<bool>,
}

/// One connection to a PostgreSQL store.
pub(crate) struct PgConn {
    /// Always present; taken only by `drop`, which must close it off the tokio runtime.
    client: RefCell<Option<Client>>,
    statements: RefCell<HashMap<String, Statement>>,
    /// A call failed because the connection is gone. The client learns that the server
    /// closed it on a thread of its own, a moment later: until then it does not say
    /// closed, and the next call would fail on the dead connection too.
    lost: std::cell::Cell<bool>,
    /// The keys of the scoped write transaction open on it (`scope`), if one is.
    pub(super) scope: RefCell<Option<Held>>,
}

impl PgConn {
    pub(super) fn connect(url: &str) -> Result<Self> {
        Ok(Self {
            client: RefCell::new(Some(off_runtime(|| Client::connect(url, NoTls))?)),
            statements: RefCell::new(HashMap::new()),
            lost: std::cell::Cell::new(false),
            scope: RefCell::new(None),
        })
    }

    /// Opens a transaction that writes: serialised with every other writer. Its
    /// `NOTIFY` reaches every listener (`Listener`) when it commits and never when it
    /// rolls back, and a transaction's repeats fold into one.
    pub(super) fn begin_write(&self) -> Result<()> {
        self.begin_locked(&format!("SELECT pg_advisory_xact_lock({WRITE_LOCK})"), None)
    }

    /// `begin_write` taking the advisory `locks` given, for a transaction that holds
    /// `scope`'s keys (None: the writers' lock exclusively).
    pub(super) fn begin_locked(&self, locks: &str, scope: Option<Held>) -> Result<()> {
        *self.scope.borrow_mut() = None;
        self.batch(&format!(
            "BEGIN; SET LOCAL idle_in_transaction_session_timeout = {WRITER_IDLE_MS}; \
             {locks}; NOTIFY {CHANNEL}"
        ))?;
        *self.scope.borrow_mut() = scope;
        Ok(())
    }

    /// Opens a read-only transaction whose statements all see one snapshot.
    pub(super) fn begin_read(&self) -> Result<()> {
        self.batch("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    }

    pub(super) fn commit(&self) -> Result<()> {
        self.scope.take();
        self.batch("COMMIT")
    }

    pub(super) fn rollback(&self) -> Result<()> {
        self.scope.take();
        self.batch("ROLLBACK")
    }

    pub(super) fn batch(&self, sql: &str) -> Result<()> {
        let client: &mut Client = &mut self.client();
        self.noted(off_runtime(|| client.batch_execute(sql)))
    }

    pub(super) fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        let client: &mut Client = &mut self.client();
        let st = self.statement(client, sql)?;
        let values = values(params);
        Ok(self.noted(off_runtime(|| client.execute(&st, &refs(&values))))? as usize)
    }

    pub(super) fn query(&self, sql: &str, params: &[&dyn Param]) -> Result<Vec<postgres::Row>> {
        let client: &mut Client = &mut self.client();
        let st = self.statement(client, sql)?;
        let values = values(params);
        self.noted(off_runtime(|| client.query(&st, &refs(&values))))
    }

    /// Whether the scoped transaction open on it reached outside its scope (`scope`).
    pub(super) fn strayed(&self) -> bool {
        self.scope
            .borrow()
            .as_ref()
            .is_some_and(|h| h.strayed.get())
    }

    pub(super) fn stray(&self) {
        if let Some(h) = self.scope.borrow().as_ref() {
            h.strayed.set(true);
        }
    }

    /// Whether the server closed this connection (it reopens on the store's next use).
    pub(super) fn is_closed(&self) -> bool {
        self.lost.get() || self.client().is_closed()
    }

    /// `result` as the store's, remembering a lost connection (see `lost`).
    fn noted<T>(&self, result: std::result::Result<T, postgres::Error>) -> Result<T> {
        result.map_err(|e| {
            // A scoped transaction that failed on another scoped transaction's rows: a
            // deadlock (40P01), a serialization failure (40001) or a unique key the other took
            // first (23505). Run alone, it would not have met them.
            if e.code()
                .is_some_and(|c| matches!(c.code(), "40P01" | "40001" | "23505"))
            {
                self.stray();
            }
            let e = StoreError::from(e);
            if e.is_connection_lost() {
                self.lost.set(true);
            }
            e
        })
    }

    fn client(&self) -> std::cell::RefMut<'_, Client> {
        std::cell::RefMut::map(self.client.borrow_mut(), |c| {
            c.as_mut().expect("the client is only taken by drop")
        })
    }

    fn statement(&self, client: &mut Client, sql: &str) -> Result<Statement> {
        if let Some(st) = self.statements.borrow().get(sql) {
            return Ok(st.clone());
        }
        let st = self.noted(off_runtime(|| client.prepare(&translate(sql))))?;
        let mut cache = self.statements.borrow_mut();
        if cache.len() >= STATEMENT_CACHE {
            cache.clear();
        }
        cache.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

/// Runs one call of the `postgres` client, which blocks on a runtime of its own: on a
/// thread already driving tokio (the daemon's) that would panic, so there it runs on a
/// scoped thread of its own.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| {
        s.spawn(f)
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

impl Drop for PgConn {
    fn drop(&mut self) {
        // Closing blocks on the client's own runtime too.
        if let Some(client) = self.client.get_mut().take() {
            off_runtime(move || drop(client));
        }
    }
}

fn values<'p>(params: &'p [&'p dyn Param]) -> Vec<Value<'p>> {
    params.iter().map(|p| p.value()).collect()
}

fn refs<'v>(values: &'v [Value<'v>]) -> Vec<&'v (dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

/// The store's SQL (SQLite's spelling) as PostgreSQL reads it.
pub(crate) fn translate(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut i = 0;
    // Every byte the rules below look at is ASCII, so each cut is a char boundary.
    while i < b.len() {
        let c = b[i];
        if c == b'\'' {
            let end = literal_end(b, i);
            out.push_str(&sql[i..end]);
            i = end;
        } else if c == b'?' {
            out.push('$');
            i += 1;
        } else if c == b'+'
            && i > 0
            && matches!(b[i - 1], b' ' | b'(')
            && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic)
        {
            // `+col`: SQLite's "do not use an index on col" hint; PostgreSQL plans alone.
            i += 1;
        } else if is_ident_start(c) && (i == 0 || !is_ident(b[i - 1])) {
            let mut end = i;
            while end < b.len() && is_ident(b[end]) {
                end += 1;
            }
            let word = &sql[i..end];
            if word.eq_ignore_ascii_case("INDEXED")
                && let Some(after) = indexed_by(sql, end)
            {
                // SQLite's index pin; PostgreSQL's planner picks its own.
                i = after;
                continue;
            }
            if word.eq_ignore_ascii_case("json_each")
                && let Some((text, after)) = json_each(sql, end)
            {
                out.push_str(&text);
                i = after;
                continue;
            }
            match function_call(sql, end) {
                Some((args, after)) => match rewrite(word, &args) {
                    Some(text) => {
                        out.push_str(&text);
                        i = after;
                    }
                    None => {
                        out.push_str(word);
                        i = end;
                    }
                },
                None => {
                    out.push_str(word);
                    i = end;
                }
            }
        } else {
            let start = i;
            i += 1;
            while i < b.len() && !is_special(b[i]) {
                i += 1;
            }
            out.push_str(&sql[start..i]);
        }
    }
    out
}

/// The rewrite of one SQLite function call, if it has one.
fn rewrite(name: &str, args: &[String]) -> Option<String> {
    let args: Vec<String> = args.iter().map(|a| translate(a.trim())).collect();
    match (name.to_ascii_lowercase().as_str(), args.as_slice()) {
        ("max", [a, b]) => Some(format!("GREATEST({a}, {b})")),
        ("min", [a, b]) => Some(format!("LEAST({a}, {b})")),
        // A jsonb column holds only valid JSON.
        ("json_valid", [a]) => Some(format!("({a} IS NOT NULL)")),
        ("json_extract", [doc, path]) => {
            let key = path.strip_prefix("'$.")?.strip_suffix('\'')?;
            Some(format!("({doc} ->> '{key}')"))
        }
        _ => None,
    }
}

/// `json_each(doc[, '$.key']) [AS] alias` (a table in FROM whose `value` column is read)
/// as the set of the array's elements, named `alias(value)` so `alias.value` still reads.
fn json_each(sql: &str, from: usize) -> Option<(String, usize)> {
    let (args, after) = function_call(sql, from)?;
    let args: Vec<String> = args.iter().map(|a| translate(a.trim())).collect();
    let array = match args.as_slice() {
        [doc] => format!("CAST({doc} AS jsonb)"),
        [doc, path] => {
            let key = path.strip_prefix("'$.")?.strip_suffix('\'')?;
            format!("({doc} -> '{key}')")
        }
        _ => return None,
    };
    let (alias, after) = alias_after(sql, after)?;
    Some((
        format!("jsonb_array_elements_text({array}) AS {alias}(value)"),
        after,
    ))
}

/// The alias after a FROM item (`AS x` or `x`) and the index past it.
fn alias_after(sql: &str, from: usize) -> Option<(&str, usize)> {
    let word = |at: usize| -> Option<(usize, usize)> {
        let b = sql.as_bytes();
        let mut start = at;
        while start < b.len() && b[start].is_ascii_whitespace() {
            start += 1;
        }
        let mut end = start;
        while end < b.len() && is_ident(b[end]) {
            end += 1;
        }
        (end > start).then_some((start, end))
    };
    let (start, end) = word(from)?;
    if sql[start..end].eq_ignore_ascii_case("AS") {
        let (start, end) = word(end)?;
        return Some((&sql[start..end], end));
    }
    Some((&sql[start..end], end))
}

/// The index past `BY name` after an `INDEXED` that ends at `from`.
fn indexed_by(sql: &str, from: usize) -> Option<usize> {
    let rest = sql[from..].trim_start();
    let rest = rest
        .strip_prefix("BY ")
        .or_else(|| rest.strip_prefix("by "))?
        .trim_start();
    let name = rest.bytes().take_while(|c| is_ident(*c)).count();
    (name > 0).then(|| sql.len() - rest.len() + name)
}

/// When `sql[from..]` opens a call (`(`, spaces allowed), its top-level arguments and the
/// index just past its closing parenthesis.
fn function_call(sql: &str, from: usize) -> Option<(Vec<String>, usize)> {
    let b = sql.as_bytes();
    let mut i = from;
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let (mut depth, mut start, mut args) = (0usize, i + 1, Vec::new());
    while i < b.len() {
        match b[i] {
            b'\'' => {
                i = literal_end(b, i);
                continue;
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    args.push(sql[start..i].to_string());
                    return Some((args, i + 1));
                }
            }
            b',' if depth == 1 => {
                args.push(sql[start..i].to_string());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index just past the string literal opening at `start` (`''` is an escaped quote).
fn literal_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'\'' {
            if b.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_special(c: u8) -> bool {
    c == b'\'' || c == b'?' || c == b'+' || is_ident_start(c)
}

type BoxError = Box<dyn Error + Sync + Send>;

/// A neutral parameter encoded as the column type the server expects, so one `Value::Int`
/// binds to `bigint`, `integer` or `boolean` and one `Value::Text` to `text` or `jsonb`.
impl ToSql for Value<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> std::result::Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                _ => Err(format!("cannot bind an integer as {ty}").into()),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                _ => Err(format!("cannot bind a real as {ty}").into()),
            },
            Value::Text(t) => match *ty {
                // jsonb's binary format: a version byte, then the JSON text.
                Type::JSONB => {
                    out.extend_from_slice(&[1]);
                    out.extend_from_slice(t.as_bytes());
                    Ok(IsNull::No)
                }
                _ => t.as_ref().to_sql(ty, out),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// One column read into a neutral value: integers of every width and booleans as
/// integers, `numeric` (what `SUM` of a bigint gives) as an integer or a real, jsonb and
/// the text types as text.
pub(super) struct Cell<'r>(pub Value<'r>);

impl<'r> FromSql<'r> for Cell<'r> {
    fn from_sql(ty: &Type, raw: &'r [u8]) -> std::result::Result<Self, BoxError> {
        let v = match *ty {
            Type::BOOL => Value::Int(i64::from(bool::from_sql(ty, raw)?)),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::NUMERIC => numeric(raw)?,
            Type::JSONB => match raw.split_first() {
                Some((1, text)) => Value::Text(std::str::from_utf8(text)?.into()),
                _ => return Err("unsupported jsonb format version".into()),
            },
            _ => Value::Text(std::str::from_utf8(raw)?.into()),
        };
        Ok(Cell(v))
    }

    fn from_sql_null(_: &Type) -> std::result::Result<Self, BoxError> {
        Ok(Cell(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// `numeric`'s binary format: digit count, weight, sign and scale, then base-10000 digits
/// (the first one weighted 10000^weight).
fn numeric(raw: &[u8]) -> std::result::Result<Value<'static>, BoxError> {
    let word = |i: usize| -> std::result::Result<i16, BoxError> {
        let b = raw.get(2 * i..2 * i + 2).ok_or("truncated numeric")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    };
    let (ndigits, weight, sign, scale) = (word(0)?, word(1)?, word(2)? as u16, word(3)?);
    if sign == 0xC000 {
        return Err("numeric NaN".into());
    }
    let mut value = 0f64;
    for k in 0..ndigits.max(0) as usize {
        value += f64::from(word(4 + k)?) * 10000f64.powi(i32::from(weight) - k as i32);
    }
    if sign == 0x4000 {
        value = -value;
    }
    Ok(if scale == 0 && value.abs() < 9.0e15 {
        Value::Int(value as i64)
    } else {
        Value::Real(value)
    })
}

/// Ends a PostgreSQL transaction by `f`'s outcome.
pub(super) fn finish<T, E: From<StoreError>>(
    c: &PgConn,
    out: std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    match out {
        Ok(v) => {
            c.commit()?;
            Ok(v)
        }
        Err(e) => {
            // The error `f` met is the one to report; a failed rollback (the connection
            // gone) only repeats it.
            let _ = c.rollback();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::translate;

    #[test]
    fn placeholders_hints_two_argument_max_and_json_paths_are_rewritten() {
        assert_eq!(
            translate("SELECT MAX(id), MAX(a, ?1) FROM t WHERE x = '?1 +y' AND +state = ?2"),
            "SELECT MAX(id), GREATEST(a, $1) FROM t WHERE x = '?1 +y' AND state = $2"
        );
        assert_eq!(
            translate("SELECT json_extract(j.result, '$.decision'), min(coalesce(a, 0), b + 1)"),
            "SELECT (j.result ->> 'decision'), LEAST(coalesce(a, 0), b + 1)"
        );
        assert_eq!(
            translate("CASE WHEN json_valid(result) THEN result END, 'it''s ?'"),
            "CASE WHEN (result IS NOT NULL) THEN result END, 'it''s ?'"
        );
        assert_eq!(
            translate("FROM chat_mentions m INDEXED BY chat_mentions_inbox JOIN t"),
            "FROM chat_mentions m  JOIN t"
        );
        assert_eq!(
            translate("x IN (SELECT e.value FROM json_each(?2) AS e)"),
            "x IN (SELECT e.value FROM jsonb_array_elements_text(CAST($2 AS jsonb)) AS e(value))"
        );
        assert_eq!(
            translate("FROM c, json_each(c.doc, '$.mentions') j JOIN a ON a.n = j.value"),
            "FROM c, jsonb_array_elements_text((c.doc -> 'mentions')) AS j(value) JOIN a ON a.n = j.value"
        );
    }
}
