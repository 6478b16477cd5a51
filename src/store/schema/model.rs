//! The words the table list and the migration list are written in: tables, columns with
//! their logical types, indexes, triggers and the steps a migration takes, each with the
//! versions it lived through so any past schema can be drawn again.
//!
//! Data and `const` builders only: spelling any of it as SQL is `render.rs`'s, and what
//! the tables are is `tables.rs`'s. Must not name a table.

/// A schema version: `PRAGMA user_version` on SQLite (one per migration).
pub(super) type Version = usize;

/// What a column holds; each backend spells it its own way (see `render.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    Text,
    /// A JSON document: text on SQLite, `jsonb` on PostgreSQL.
    Json,
    /// A flag or a small count: `integer` on PostgreSQL, so `killed = 1` reads alike.
    Int,
    /// Times in milliseconds, ids, tokens, sizes and other counts that outgrow 32 bits.
    Big,
    Real,
    /// The key the database numbers itself: SQLite's `INTEGER PRIMARY KEY` (the rowid
    /// under another name), PostgreSQL's identity.
    Serial(Numbering),
    /// The insertion order that breaks ties: SQLite's implicit rowid, which only
    /// PostgreSQL spells out as a column (`unique` where a read takes its maximum).
    Rowid {
        unique: bool,
    },
}

/// Whether SQLite's serial key is `AUTOINCREMENT` (a `sqlite_sequence` row rewritten on
/// every insert), and until which version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Numbering {
    Plain,
    Autoincrement,
    /// Made with `AUTOINCREMENT`, rebuilt without it by this version's migration.
    AutoincrementUntil(Version),
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Column {
    pub name: &'static str,
    pub ty: Ty,
    pub not_null: bool,
    pub key: bool,
    /// The SQL of its default, spelled alike on both backends.
    pub default: Option<&'static str>,
    /// `table(column)` it points at.
    pub refs: Option<&'static str>,
    /// The version whose migration added it to a table made earlier.
    pub since: Version,
}

pub(super) const fn column(name: &'static str, ty: Ty) -> Column {
    Column {
        name,
        ty,
        not_null: false,
        key: false,
        default: None,
        refs: None,
        since: 1,
    }
}

pub(super) const fn text(name: &'static str) -> Column {
    column(name, Ty::Text)
}

pub(super) const fn json(name: &'static str) -> Column {
    column(name, Ty::Json)
}

pub(super) const fn int(name: &'static str) -> Column {
    column(name, Ty::Int)
}

pub(super) const fn big(name: &'static str) -> Column {
    column(name, Ty::Big)
}

pub(super) const fn real(name: &'static str) -> Column {
    column(name, Ty::Real)
}

pub(super) const fn serial(name: &'static str, numbering: Numbering) -> Column {
    column(name, Ty::Serial(numbering))
}

pub(super) const fn rowid(unique: bool) -> Column {
    column("rowid", Ty::Rowid { unique })
}

impl Column {
    pub(super) const fn not_null(self) -> Self {
        Self {
            not_null: true,
            ..self
        }
    }

    pub(super) const fn key(self) -> Self {
        Self { key: true, ..self }
    }

    /// `NOT NULL DEFAULT sql`.
    pub(super) const fn default(self, sql: &'static str) -> Self {
        Self {
            default: Some(sql),
            not_null: true,
            ..self
        }
    }

    pub(super) const fn refs(self, target: &'static str) -> Self {
        Self {
            refs: Some(target),
            ..self
        }
    }

    pub(super) const fn since(self, version: Version) -> Self {
        Self {
            since: version,
            ..self
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Index {
    pub name: &'static str,
    pub columns: &'static [&'static str],
    /// What PostgreSQL's copy orders by after `columns`: SQLite's indexes end in the rowid
    /// by themselves, PostgreSQL's must name it (and whatever else the read sorts by).
    pub pg_order: &'static [&'static str],
    /// The `WHERE` of a partial index.
    pub filter: Option<&'static str>,
    pub unique: bool,
    pub since: Version,
    /// The version whose migration dropped it.
    pub until: Option<Version>,
}

pub(super) const fn index(name: &'static str, columns: &'static [&'static str]) -> Index {
    Index {
        name,
        columns,
        pg_order: &[],
        filter: None,
        unique: false,
        since: 1,
        until: None,
    }
}

impl Index {
    pub(super) const fn pg_order(self, pg_order: &'static [&'static str]) -> Self {
        Self { pg_order, ..self }
    }

    pub(super) const fn filter(self, filter: &'static str) -> Self {
        Self {
            filter: Some(filter),
            ..self
        }
    }

    pub(super) const fn unique(self) -> Self {
        Self {
            unique: true,
            ..self
        }
    }

    pub(super) const fn since(self, version: Version) -> Self {
        Self {
            since: version,
            ..self
        }
    }

    pub(super) const fn until(self, version: Version) -> Self {
        Self {
            until: Some(version),
            ..self
        }
    }

    pub(super) fn live_at(&self, version: Version) -> bool {
        self.since <= version && self.until.is_none_or(|u| version < u)
    }
}

/// Triggers on a table, one entry in each backend's spelling: they differ in kind, not
/// only in words (SQLite's four triggers are one PostgreSQL function and its trigger).
#[derive(Debug, Clone, Copy)]
pub(super) struct Trigger {
    pub name: &'static str,
    pub sqlite: &'static str,
    pub pg: &'static str,
    pub since: Version,
}

/// Objects each backend builds in a kind of its own, with the triggers that keep them and
/// the statements that fill them from the rows a store already holds: SQLite's FTS5 table
/// and PostgreSQL's `tsvector` column with its GIN index are one entry, spelled twice.
#[derive(Debug, Clone, Copy)]
pub(super) struct Native {
    pub name: &'static str,
    pub sqlite: &'static str,
    pub pg: &'static str,
    pub since: Version,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    /// Table constraints, spelled alike on both backends (`PRIMARY KEY (a, b)`, `UNIQUE (a, b)`).
    pub constraints: &'static [&'static str],
    /// SQLite's `WITHOUT ROWID`: the key is the row's only order.
    pub without_rowid: bool,
    pub indexes: &'static [Index],
    pub triggers: &'static [Trigger],
    pub since: Version,
}

pub(super) const fn table(name: &'static str, columns: &'static [Column]) -> Table {
    Table {
        name,
        columns,
        constraints: &[],
        without_rowid: false,
        indexes: &[],
        triggers: &[],
        since: 1,
    }
}

impl Table {
    pub(super) const fn constraints(self, constraints: &'static [&'static str]) -> Self {
        Self {
            constraints,
            ..self
        }
    }

    pub(super) const fn without_rowid(self) -> Self {
        Self {
            without_rowid: true,
            ..self
        }
    }

    pub(super) const fn indexes(self, indexes: &'static [Index]) -> Self {
        Self { indexes, ..self }
    }

    pub(super) const fn triggers(self, triggers: &'static [Trigger]) -> Self {
        Self { triggers, ..self }
    }

    pub(super) const fn since(self, version: Version) -> Self {
        Self {
            since: version,
            ..self
        }
    }
}

/// One step of a migration, named by what it changes in the table list.
#[derive(Debug, Clone, Copy)]
pub(super) enum Step {
    /// The table as it stood at this version, with its indexes of then.
    Create(&'static str),
    /// `table`'s column `column`, made after the table.
    AddColumn(&'static str, &'static str),
    /// The index of this name as it stands from this version.
    CreateIndex(&'static str),
    DropIndex(&'static str),
    /// The table's triggers of this name.
    CreateTrigger(&'static str),
    /// SQLite's table made again in its shape of this version, rows, ids, indexes and
    /// triggers kept: the way SQLite drops an `AUTOINCREMENT`. PostgreSQL's identities
    /// never had that form, so it has nothing to do.
    Rebuild(&'static str),
    /// Statements both backends run as written: the rows a new table starts from.
    Sql(&'static str),
    /// The native objects of this name (`Native`), filled from the rows already there.
    CreateNative(&'static str),
}

/// One migration: its steps in order.
pub(super) type Migration = &'static [Step];
