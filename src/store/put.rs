//! Writing a whole row: inserted once, then updated in place in only the columns that
//! moved, so a claim or a settlement rewrites the pages of the few indexes over what changed.
//! The `Columns` rows (jobs, runs…) and the store's upserts go through here.
//!
//! Holds SQL building only; which rows to write is each table's module's.

use super::tx::Tx;
use super::{Result, value};

/// Writes one row of `table`, new or existing, keyed by the first of `cols` (whose values
/// `values` gives in the same order). An existing row is updated in place and only in the
/// columns whose values changed: SQLite rewrites an index entry only when the UPDATE names
/// one of the index's columns (every index, when it names a column a foreign key refers
/// through), so a claim or a settlement writes the pages of the few indexes over the
/// columns that moved. `INSERT OR REPLACE` would delete the row and insert it again under
/// a new rowid, rewriting every index entry twice. An unchanged row writes nothing.
pub(crate) fn write_changed<'a>(
    tx: impl Into<Tx<'a>>,
    table: &str,
    cols: &str,
    values: &[&dyn value::Param],
) -> Result<()> {
    let tx = tx.into();
    let names: Vec<&str> = cols.split(", ").map(str::trim).collect();
    let key = names[0];
    let changed = tx.query_opt(
        &format!("SELECT {cols} FROM {table} WHERE {key} = ?1"),
        &values[..1],
        |r| {
            let mut changed = Vec::new();
            for (i, v) in values.iter().enumerate() {
                if r.value(i)? != v.value() {
                    changed.push(i);
                }
            }
            Ok(changed)
        },
    )?;
    let Some(changed) = changed else {
        let marks: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
        tx.execute(
            &format!("INSERT INTO {table}({cols}) VALUES ({})", marks.join(", ")),
            values,
        )?;
        return Ok(());
    };
    update_columns(tx, table, &names, values, &changed)
}

/// `write_changed` for an existing row the caller read in this transaction, as `before`,
/// and has not written since: the columns are compared with what it read instead of
/// being read again (two of a claim's or a settlement's statements).
pub(crate) fn write_changes_from<'a>(
    tx: impl Into<Tx<'a>>,
    table: &str,
    cols: &str,
    before: &[&dyn value::Param],
    after: &[&dyn value::Param],
) -> Result<()> {
    let names: Vec<&str> = cols.split(", ").map(str::trim).collect();
    let changed: Vec<usize> = (0..after.len())
        .filter(|&i| before[i].value() != after[i].value())
        .collect();
    update_columns(tx.into(), table, &names, after, &changed)
}

/// A row type with one whole-row write path: its table, its columns (the key first) and
/// its values in their order, so `put_row` and `put_row_over` serve every such table.
/// `row_columns!` implements it from the row's one column list.
pub(crate) trait Columns {
    const TABLE: &'static str;
    const COLS: &'static str;
    /// The row's values in the order of `COLS`, handed to `f`.
    fn with_values<R>(&self, f: impl FnOnce(&[&dyn value::Param]) -> R) -> R;
}

/// `write_changed` of a whole row.
pub(crate) fn put_row<'a, T: Columns>(tx: impl Into<Tx<'a>>, row: &T) -> Result<()> {
    row.with_values(|values| write_changed(tx, T::TABLE, T::COLS, values))
}

/// `write_changes_from` of `after` over the row read as `before`.
pub(crate) fn put_row_over<'a, T: Columns>(
    tx: impl Into<Tx<'a>>,
    before: &T,
    after: &T,
) -> Result<()> {
    before.with_values(|b| after.with_values(|a| write_changes_from(tx, T::TABLE, T::COLS, b, a)))
}

/// Updates the `changed` columns (by index into `names` and `values`) of the row keyed by
/// the first one.
fn update_columns(
    tx: Tx<'_>,
    table: &str,
    names: &[&str],
    values: &[&dyn value::Param],
    changed: &[usize],
) -> Result<()> {
    if changed.is_empty() {
        return Ok(());
    }
    let key = names[0];
    // Only the key and the changed values are bound, numbered in a row: PostgreSQL cannot
    // type a parameter the statement never names.
    let set: Vec<String> = changed
        .iter()
        .enumerate()
        .map(|(n, &i)| format!("{} = ?{}", names[i], n + 2))
        .collect();
    let bound: Vec<&dyn value::Param> = std::iter::once(values[0])
        .chain(changed.iter().map(|&i| values[i]))
        .collect();
    tx.execute(
        &format!("UPDATE {table} SET {} WHERE {key} = ?1", set.join(", ")),
        &bound,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::value::Param;
    use super::{write_changed, write_changes_from};

    const COLS: &str = "id, state, note";

    fn put(conn: &Connection, id: &str, state: &str, note: Option<&str>) {
        let values: [&dyn Param; 3] = [&id, &state, &note];
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

    #[test]
    fn a_row_written_over_what_was_read_sets_only_the_columns_that_moved_since() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (id TEXT PRIMARY KEY, state TEXT NOT NULL, note TEXT)")
            .unwrap();
        put(&conn, "a", "queued", Some("read"));
        let read: [&dyn Param; 3] = [&"a", &"queued", &Some("read")];
        let same = conn.total_changes();
        write_changes_from(&conn, "t", COLS, &read, &read).unwrap();
        assert_eq!(conn.total_changes(), same, "nothing moved, nothing written");
        // What the caller did not change is not written, even where the stored row differs.
        conn.execute("UPDATE t SET note = 'elsewhere' WHERE id = 'a'", [])
            .unwrap();
        let after: [&dyn Param; 3] = [&"a", &"running", &Some("read")];
        write_changes_from(&conn, "t", COLS, &read, &after).unwrap();
        let row: (String, String) = conn
            .query_row("SELECT state, note FROM t WHERE id = 'a'", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(row, ("running".to_string(), "elsewhere".to_string()));
    }
}
