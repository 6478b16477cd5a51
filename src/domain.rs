//! The vocabulary shared by store, engine, daemon, chat and cli: states, kinds, actions,
//! runtimes, capabilities and autonomy policies.
//!
//! Owns only the names and their parsing; no behaviour beyond small predicates.

/// Declares a closed set of names stored as text (serde, SQLite, `FromStr`, `Display`), with
/// parsing that names the bad value. The default error lists the accepted names; a caller
/// whose message text is fixed by a reference passes `unknown(v) => Invalid(…)`.
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $crate::domain::named_enum!(
            $(#[$meta])* $name, $what,
            unknown(other) => $crate::Invalid(format!(
                concat!("unknown ", $what, " {:?} (expected one of: {})"),
                other,
                $name::choices()
            )),
            { $($variant => $text),+ }
        );
    };
    ($(#[$meta:meta])* $name:ident, $what:literal, unknown($bad:ident) => $err:expr,
     { $($variant:ident => $text:literal),+ $(,)? }) => {
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

        impl std::str::FromStr for $name {
            type Err = $crate::Invalid;
            fn from_str(s: &str) -> Result<Self, $crate::Invalid> {
                match s {
                    $($text => Ok($name::$variant),)+
                    $bad => Err($err),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let s = v.as_str()?;
                s.parse().map_err(|e: $crate::Invalid| rusqlite::types::FromSqlError::Other(Box::new(e)))
            }
        }
    };
}

pub(crate) use named_enum;

mod delegation;
pub use delegation::{Delegation, EphemeralSpec, FailurePolicy, SynthesisRule};
mod event_kind;
pub use event_kind::EventKind;

/// `dispatched_by` of every session job: the daemon neither runs nor recovers them.
pub const SESSION: &str = "session";

named_enum!(
    /// Lifecycle of one job.
    JobState, "job state", {
        Queued => "queued",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Blocked => "blocked",
        Cancelled => "cancelled",
    }
);

impl JobState {
    pub fn is_terminal(self) -> bool {
        !matches!(self, JobState::Queued | JobState::Running)
    }
}

named_enum!(
    /// Lifecycle of one root's tree.
    RunState, "run state", {
        Running => "running",
        AwaitingHuman => "awaiting_human",
        Done => "done",
        Blocked => "blocked",
        Failed => "failed",
        Killed => "killed",
        Aborted => "aborted",
    }
);

impl RunState {
    pub fn is_terminal(self) -> bool {
        !matches!(self, RunState::Running | RunState::AwaitingHuman)
    }
}

named_enum!(
    /// Where a job sits in its tree.
    JobKind, "job kind", {
        Root => "root",
        Leg => "leg",
        Continuation => "continuation",
        Finalize => "finalize",
    }
);

named_enum!(
    /// What a job is asked to do.
    Action, "action", {
        Ask => "ask",
        Review => "review",
        Implement => "implement",
    }
);

named_enum!(
    /// The adapter that turns a job into a child process.
    RuntimeKind, "runtime", {
        Claude => "claude",
        Codex => "codex",
        Kimi => "kimi",
        Shell => "shell",
    }
);

named_enum!(
    /// What an agent may be asked to do; the same names as `Action`.
    Capability, "capability", {
        Ask => "ask",
        Review => "review",
        Implement => "implement",
    }
);

impl From<Action> for Capability {
    fn from(a: Action) -> Self {
        match a {
            Action::Ask => Capability::Ask,
            Action::Review => Capability::Review,
            Action::Implement => Capability::Implement,
        }
    }
}

named_enum!(
    /// How much an agent's runtime may do without asking.
    AutonomyPolicy, "autonomy policy", {
        Auto => "auto",
        ReadOnly => "read-only",
        WorkspaceWrite => "workspace-write",
        DangerFullAccess => "danger-full-access",
    }
);

impl AutonomyPolicy {
    /// Only these grant a deterministic headless write, which `implement` needs.
    pub fn can_write(self) -> bool {
        matches!(
            self,
            AutonomyPolicy::WorkspaceWrite | AutonomyPolicy::DangerFullAccess
        )
    }
}

/// The guidance given whenever `implement` meets a policy that cannot write.
pub fn implement_policy_guidance(policy: AutonomyPolicy) -> String {
    format!(
        "the implement capability needs a write policy, but the policy is {policy}; \
         set --policy workspace-write (edits files) or --policy danger-full-access (edits and runs anything)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_are_named() {
        for s in JobState::ALL {
            assert_eq!(s.as_str().parse::<JobState>().unwrap(), *s);
        }
        let err = "sleeping".parse::<RunState>().unwrap_err();
        assert!(err.0.contains("\"sleeping\""), "{err}");
        assert!(err.0.contains("awaiting_human"), "{err}");
    }

    #[test]
    fn only_write_policies_can_write() {
        assert!(!AutonomyPolicy::ReadOnly.can_write());
        assert!(!AutonomyPolicy::Auto.can_write());
        assert!(AutonomyPolicy::WorkspaceWrite.can_write());
    }
}
