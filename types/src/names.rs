//! `named_enum!`, the declaration of a closed set of names stored and printed as text, and
//! [`UnknownName`], the error a bad spelling parses to.
//!
//! Owns the shape every named enum shares (`ALL`, `as_str`, `choices`, `Display`, `FromStr`,
//! serde); never a storage binding, which the store adds over `as_str` and `FromStr`.

/// A spelling that names no variant. The text is the whole message: either the default
/// `unknown <what> "<v>" (expected one of: …)` or a declaration's own wording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName(pub String);

impl std::fmt::Display for UnknownName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnknownName {}

/// Declares a closed set of names stored as text (serde, `FromStr`, `Display`), with
/// parsing that names the bad value. The default error lists the accepted names; a caller
/// whose message text is fixed by a reference passes `unknown(v) => <String>`.
#[macro_export]
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $crate::named_enum!(
            $(#[$meta])* $name, $what,
            unknown(other) => format!(
                concat!("unknown ", $what, " {:?} (expected one of: {})"),
                other,
                $name::choices()
            ),
            { $($variant => $text),+ }
        );
    };
    ($(#[$meta:meta])* $name:ident, $what:literal, unknown($bad:ident) => $err:expr,
     { $($variant:ident => $text:literal),+ $(,)? }) => {
        $crate::named_enum!(@names $(#[$meta])* $name, { $($variant => $text),+ });

        impl std::str::FromStr for $name {
            type Err = $crate::UnknownName;
            fn from_str(s: &str) -> Result<Self, $crate::UnknownName> {
                match s {
                    $($text => Ok($name::$variant),)+
                    $bad => Err($crate::UnknownName($err)),
                }
            }
        }
    };
    // Everything but `FromStr`, for a set whose parsing is its own (serde goes through it).
    (@names $(#[$meta:meta])* $name:ident, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
            /// The accepted spellings, joined for error messages.
            pub fn choices() -> String {
                [$($text),+].join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl $crate::__serde::Serialize for $name {
            fn serialize<S: $crate::__serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> $crate::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as $crate::__serde::Deserialize>::deserialize(d)?;
                s.parse().map_err(<D::Error as $crate::__serde::de::Error>::custom)
            }
        }
    };
}
