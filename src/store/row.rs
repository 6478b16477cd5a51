//! A store row type's columns declared once: `row_columns!` turns one list of a struct's
//! fields into its SQL column list, the reader that fills the struct from a row selected
//! in that order and, for a table written whole, its values in the same order, so none of
//! them can disagree.

use super::Result;
use super::tx::Row;

/// Declares a row type's columns once, in `SELECT` order:
///
/// ```ignore
/// row_columns! {
///     const COLS;
///     fn from_row -> Run in "runs" { root_id, state, tokens: counter, updated_ms }
/// }
/// ```
///
/// gives `const COLS: &str = "root_id, state, tokens, updated_ms"` and
/// `fn from_row(r: &Row<'_>) -> Result<Run>`, which reads each field from its column by
/// `Row::get`, or through `reader(r, index)` where a field names one (`tokens: counter`,
/// `result: Row::json`). With `in "table"` it also implements `Columns` (the whole-row
/// writes): each field binds as itself, or as `writer(&field)` where it names one after
/// `=>` (`result: Row::json => json_text`). Without the `const` line it gives the reader
/// alone, for a `SELECT` whose columns are expressions or come from a join, written in the
/// field order. Each item takes the attributes and visibility written before it.
macro_rules! row_columns {
    (
        $(#[$cols_attr:meta])* $cols_vis:vis const $cols:ident;
        $(#[$read_attr:meta])* $read_vis:vis fn $read:ident -> $row:ident in $table:literal {
            $($field:ident $(: $reader:expr)? $(=> $writer:expr)?),+ $(,)?
        }
    ) => {
        $crate::store::row::row_columns! {
            $(#[$cols_attr])* $cols_vis const $cols;
            $(#[$read_attr])* $read_vis fn $read -> $row {
                $($field $(: $reader)?),+
            }
        }

        impl $crate::store::Columns for $row {
            const TABLE: &'static str = $table;
            const COLS: &'static str = $cols;
            fn with_values<R>(
                &self,
                f: impl FnOnce(&[&dyn $crate::store::value::Param]) -> R,
            ) -> R {
                f(&[$(&$crate::store::row::row_columns!(@write self.$field $(, $writer)?)),+])
            }
        }
    };
    (
        $(#[$cols_attr:meta])* $cols_vis:vis const $cols:ident;
        $(#[$read_attr:meta])* $read_vis:vis fn $read:ident -> $row:ident {
            $first:ident $(: $first_reader:expr)? $(, $field:ident $(: $reader:expr)?)* $(,)?
        }
    ) => {
        $(#[$cols_attr])*
        $cols_vis const $cols: &str = concat!(stringify!($first) $(, ", ", stringify!($field))*);

        $crate::store::row::row_columns! {
            $(#[$read_attr])* $read_vis fn $read -> $row {
                $first $(: $first_reader)? $(, $field $(: $reader)?)*
            }
        }
    };
    (
        $(#[$read_attr:meta])* $read_vis:vis fn $read:ident -> $row:ident {
            $($field:ident $(: $reader:expr)?),+ $(,)?
        }
    ) => {
        $(#[$read_attr])*
        $read_vis fn $read(r: &$crate::store::tx::Row<'_>) -> $crate::store::Result<$row> {
            /// The column positions, in the order of the list.
            #[allow(non_camel_case_types)]
            enum Column {
                $($field,)+
            }
            Ok($row {
                $($field: $crate::store::row::row_columns!(@read r, Column::$field as usize $(, $reader)?),)+
            })
        }
    };
    (@read $r:ident, $index:expr) => {
        $r.get($index)?
    };
    (@read $r:ident, $index:expr, $reader:expr) => {
        $reader($r, $index)?
    };
    (@write $value:expr) => {
        $value
    };
    (@write $value:expr, $writer:expr) => {
        $writer(&$value)
    };
}
pub(crate) use row_columns;

/// A counter column (tokens) as the `u64` whose bits were stored as an `i64`.
pub(crate) fn counter(r: &Row<'_>, index: usize) -> Result<u64> {
    Ok(r.get::<i64>(index)? as u64)
}

/// A JSON value written as its text (a jsonb column on PostgreSQL); None is NULL.
pub(crate) fn json_text(v: &Option<serde_json::Value>) -> Option<String> {
    v.as_ref().map(serde_json::Value::to_string)
}
