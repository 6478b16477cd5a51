//! What an agent is: the runtime adapter that runs it, what it may be asked to do, and how
//! much its runtime may do without asking.
//!
//! Owns the names and `can_write`; the guidance text and the checks that use them are the
//! library's.

use crate::job::Action;
use crate::named_enum;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_write_policies_can_write() {
        assert!(!AutonomyPolicy::ReadOnly.can_write());
        assert!(!AutonomyPolicy::Auto.can_write());
        assert!(AutonomyPolicy::WorkspaceWrite.can_write());
    }
}
