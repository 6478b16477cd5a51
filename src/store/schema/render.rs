//! Spells the table list and the migration list as each backend's SQL: SQLite's text as
//! its stores hold it (a fresh store's `sqlite_master` is what every past migration
//! wrote), PostgreSQL's with real types, identities and the `rowid` column.
//!
//! Pure text: running it is `mod.rs`'s. Must not decide what the tables are.

use std::fmt::Write;

use super::migrations::MIGRATIONS;
use super::model::{Column, Index, Native, Numbering, Step, Table, Trigger, Ty, Version};
use super::natives::NATIVES;
use super::tables::TABLES;
use crate::store::tx::Backend;

/// The SQL migration `version` (1-based: the version it produces) runs on `backend`.
pub(super) fn migration(version: Version, backend: Backend) -> String {
    let mut sql = String::new();
    for step in MIGRATIONS[version - 1] {
        step_sql(&mut sql, *step, version, backend);
    }
    sql
}

/// Every table, index and trigger as they stand at `version`, made from nothing.
pub(super) fn schema_at(version: Version, backend: Backend) -> String {
    let mut sql = String::new();
    let tables = TABLES.iter().filter(|t| t.since <= version);
    for t in tables.clone() {
        create_table(&mut sql, t, t.name, version, backend);
        indexes(&mut sql, t, version, backend);
    }
    // After every table: a trigger may write a table made after the one it watches.
    for t in tables {
        triggers(&mut sql, t, version, backend);
    }
    // After the triggers: a native object's own triggers watch the tables above.
    for n in NATIVES.iter().filter(|n| n.since <= version) {
        sql.push_str(native_sql(n, backend));
    }
    sql
}

fn step_sql(sql: &mut String, step: Step, version: Version, backend: Backend) {
    match step {
        Step::Create(name) => {
            let t = table(name);
            create_table(sql, t, name, version, backend);
            indexes(sql, t, version, backend);
            triggers(sql, t, version, backend);
        }
        Step::AddColumn(name, column) => {
            let c = table(name)
                .columns
                .iter()
                .find(|c| c.name == column)
                .expect("a column the migration list adds is in the table list");
            let _ = writeln!(
                sql,
                "ALTER TABLE {name} ADD COLUMN {};",
                column_sql(c, 0, version, backend)
            );
        }
        Step::CreateIndex(name) => {
            let (t, i) = TABLES
                .iter()
                .flat_map(|t| t.indexes.iter().map(move |i| (t, i)))
                .find(|(_, i)| i.name == name && i.live_at(version))
                .expect("an index the migration list makes is in the table list");
            index_sql(sql, t, i, backend);
        }
        Step::DropIndex(name) => {
            let _ = writeln!(sql, "DROP INDEX IF EXISTS {name};");
        }
        Step::CreateTrigger(name) => {
            let trigger = TABLES
                .iter()
                .flat_map(|t| t.triggers)
                .find(|g| g.name == name)
                .expect("a trigger the migration list makes is in the table list");
            sql.push_str(trigger_sql(trigger, backend));
        }
        Step::Rebuild(name) => match backend {
            Backend::Sqlite => rebuild(sql, table(name), version),
            Backend::Postgres => {}
        },
        Step::Sql(text) => {
            sql.push_str(text);
            sql.push('\n');
        }
        Step::CreateNative(name) => {
            let native = NATIVES
                .iter()
                .find(|n| n.name == name)
                .expect("a native object the migration list makes is in the natives list");
            sql.push_str(native_sql(native, backend));
        }
    }
}

fn native_sql(n: &Native, backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => n.sqlite,
        Backend::Postgres => n.pg,
    }
}

fn table(name: &str) -> &'static Table {
    TABLES
        .iter()
        .find(|t| t.name == name)
        .expect("a table the migration list names is in the table list")
}

/// SQLite's table made again under a new name in its shape of `version`, filled with
/// its rows (ids kept) and put in its place, then its indexes and triggers, which
/// dropping the old table dropped.
fn rebuild(sql: &mut String, t: &Table, version: Version) {
    let name = t.name;
    let rebuilt = format!("{name}_rebuilt");
    create_table(sql, t, &rebuilt, version, Backend::Sqlite);
    let cols = columns(t, version, Backend::Sqlite)
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        sql,
        "INSERT INTO {rebuilt}({cols})\n    SELECT {cols} FROM {name};\n\
         DROP TABLE {name};\n\
         ALTER TABLE {rebuilt} RENAME TO {name};\n\
         DELETE FROM sqlite_sequence WHERE name = '{name}';"
    );
    indexes(sql, t, version, Backend::Sqlite);
    triggers(sql, t, version, Backend::Sqlite);
}

/// The columns `t` had at `version` on `backend` (SQLite's rowid is no column it lists).
fn columns(t: &Table, version: Version, backend: Backend) -> impl Iterator<Item = &Column> {
    t.columns.iter().filter(move |c| {
        c.since <= version && !(backend == Backend::Sqlite && matches!(c.ty, Ty::Rowid { .. }))
    })
}

fn create_table(sql: &mut String, t: &Table, name: &str, version: Version, backend: Backend) {
    let width = columns(t, version, backend)
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    let mut lines: Vec<String> = columns(t, version, backend)
        .map(|c| format!("    {}", column_sql(c, width, version, backend)))
        .collect();
    lines.extend(t.constraints.iter().map(|c| format!("    {c}")));
    let tail = if t.without_rowid && backend == Backend::Sqlite {
        " WITHOUT ROWID"
    } else {
        ""
    };
    let _ = writeln!(
        sql,
        "CREATE TABLE {name} (\n{}\n){tail};",
        lines.join(",\n")
    );
}

/// A column's definition, its name padded to `width` as the table's others are.
fn column_sql(c: &Column, width: usize, version: Version, backend: Backend) -> String {
    let sqlite = backend == Backend::Sqlite;
    let ty = match (c.ty, sqlite) {
        (Ty::Text | Ty::Json, true) => "TEXT",
        (Ty::Int | Ty::Big | Ty::Serial(_) | Ty::Rowid { .. }, true) => "INTEGER",
        (Ty::Real, true) => "REAL",
        (Ty::Text, false) => "text",
        (Ty::Json, false) => "jsonb",
        (Ty::Int, false) => "integer",
        (Ty::Big | Ty::Serial(_) | Ty::Rowid { .. }, false) => "bigint",
        (Ty::Real, false) => "double precision",
    };
    let mut def = format!("{:width$} {ty}", c.name);
    match c.ty {
        Ty::Serial(numbering) if sqlite => {
            def.push_str(" PRIMARY KEY");
            let autoincrement = match numbering {
                Numbering::Plain => false,
                Numbering::Autoincrement => true,
                Numbering::AutoincrementUntil(until) => version < until,
            };
            if autoincrement {
                def.push_str(" AUTOINCREMENT");
            }
        }
        Ty::Serial(_) => def.push_str(" GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
        Ty::Rowid { unique } => {
            def.push_str(" GENERATED BY DEFAULT AS IDENTITY");
            if unique {
                def.push_str(" UNIQUE");
            }
        }
        _ => {}
    }
    if c.key {
        def.push_str(" PRIMARY KEY");
    }
    if c.not_null {
        def.push_str(" NOT NULL");
    }
    if let Some(default) = c.default {
        let _ = write!(def, " DEFAULT {default}");
    }
    if let Some(target) = c.refs {
        let _ = write!(def, " REFERENCES {target}");
    }
    def
}

fn indexes(sql: &mut String, t: &Table, version: Version, backend: Backend) {
    for i in t.indexes.iter().filter(|i| i.live_at(version)) {
        index_sql(sql, t, i, backend);
    }
}

fn index_sql(sql: &mut String, t: &Table, i: &Index, backend: Backend) {
    let unique = if i.unique { "UNIQUE " } else { "" };
    let mut cols = i.columns.to_vec();
    if backend == Backend::Postgres {
        cols.extend(i.pg_order);
    }
    let _ = write!(
        sql,
        "CREATE {unique}INDEX {} ON {}({})",
        i.name,
        t.name,
        cols.join(", ")
    );
    if let Some(filter) = i.filter {
        let _ = write!(sql, " WHERE {filter}");
    }
    sql.push_str(";\n");
}

fn triggers(sql: &mut String, t: &Table, version: Version, backend: Backend) {
    for g in t.triggers.iter().filter(|g| g.since <= version) {
        sql.push_str(trigger_sql(g, backend));
    }
}

fn trigger_sql(g: &Trigger, backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => g.sqlite,
        Backend::Postgres => g.pg,
    }
}
