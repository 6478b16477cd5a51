//! The neutral values a `Tx` binds and reads: four shapes (integer, real, text, null), so a
//! column reads the same whichever backend and column type holds it, and the conversions
//! from and to Rust values (`Param`, `FromValue`).

use crate::domain::{
    Action, AutonomyPolicy, Capability, JobKind, JobState, LandStrategy, RunState, RuntimeKind,
    SearchSource, WorktreeState,
};

/// One value on its way into or out of a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(std::borrow::Cow<'a, str>),
}

impl Value<'_> {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real",
            Value::Text(_) => "text",
        }
    }
}

/// A statement parameter.
pub trait Param {
    fn value(&self) -> Value<'_>;
}

/// A Rust value read from one column.
pub trait FromValue: Sized {
    /// The value, or why this column cannot be one.
    fn from_value(v: Value<'_>) -> std::result::Result<Self, String>;
}

/// Builds a parameter slice: `params![a, b]` is `&[&a as &dyn Param, &b]`.
#[macro_export]
macro_rules! params {
    () => { &[] as &[&dyn $crate::store::value::Param] };
    ($($p:expr),+ $(,)?) => { &[$(&$p as &dyn $crate::store::value::Param),+] as &[&dyn $crate::store::value::Param] };
}

// Parameters.

impl<T: Param + ?Sized> Param for &T {
    fn value(&self) -> Value<'_> {
        (**self).value()
    }
}

impl<T: Param> Param for Option<T> {
    fn value(&self) -> Value<'_> {
        self.as_ref().map_or(Value::Null, Param::value)
    }
}

impl Param for str {
    fn value(&self) -> Value<'_> {
        Value::Text(self.into())
    }
}

impl Param for String {
    fn value(&self) -> Value<'_> {
        Value::Text(self.as_str().into())
    }
}

impl Param for bool {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl Param for f64 {
    fn value(&self) -> Value<'_> {
        Value::Real(*self)
    }
}

macro_rules! int_param {
    ($($t:ty),+) => {$(
        impl Param for $t {
            fn value(&self) -> Value<'_> {
                // Stored integers are i64 on both backends; the wider types never reach it.
                Value::Int(*self as i64)
            }
        }
    )+};
}
int_param!(i64, i32, u32, u64, usize);

/// Names stored as text (`gitmoot_types::named_enum`) bind and read as their spelling; the
/// vocabulary crate knows no database, so the binding is written here.
macro_rules! named_values {
    ($($t:ty),+) => {$(
        impl $crate::store::value::Param for $t {
            fn value(&self) -> $crate::store::value::Value<'_> {
                $crate::store::value::Value::Text(self.as_str().into())
            }
        }
        impl $crate::store::value::FromValue for $t {
            fn from_value(v: $crate::store::value::Value<'_>) -> std::result::Result<Self, String> {
                <String as $crate::store::value::FromValue>::from_value(v)?
                    .parse()
                    .map_err(|e: gitmoot_types::UnknownName| e.to_string())
            }
        }
    )+};
}
pub(crate) use named_values;
named_values!(
    Action,
    AutonomyPolicy,
    Capability,
    JobKind,
    JobState,
    LandStrategy,
    RunState,
    RuntimeKind,
    SearchSource,
    WorktreeState
);

// Columns.

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: Value<'_>) -> std::result::Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl FromValue for String {
    fn from_value(v: Value<'_>) -> std::result::Result<Self, String> {
        match v {
            Value::Text(t) => Ok(t.into_owned()),
            other => Err(format!("expected text, found {}", other.kind())),
        }
    }
}

impl FromValue for i64 {
    fn from_value(v: Value<'_>) -> std::result::Result<Self, String> {
        match v {
            Value::Int(i) => Ok(i),
            other => Err(format!("expected an integer, found {}", other.kind())),
        }
    }
}

impl FromValue for bool {
    fn from_value(v: Value<'_>) -> std::result::Result<Self, String> {
        i64::from_value(v).map(|i| i != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: Value<'_>) -> std::result::Result<Self, String> {
        match v {
            Value::Real(f) => Ok(f),
            // An aggregate of a REAL column can come back integral.
            Value::Int(i) => Ok(i as f64),
            other => Err(format!("expected a real, found {}", other.kind())),
        }
    }
}

macro_rules! int_column {
    ($($t:ty),+) => {$(
        impl FromValue for $t {
            fn from_value(v: Value<'_>) -> std::result::Result<Self, String> {
                let i = i64::from_value(v)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range"))
            }
        }
    )+};
}
int_column!(i32, u32, u64, usize);
