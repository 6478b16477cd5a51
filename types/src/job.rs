//! A job's and a run's lifecycle names, where a job sits in its tree, what it is asked to
//! do, and the verbs a human resumes a failure round with.
//!
//! Owns the names and small predicates over them; what a state means for the next step is
//! the engine's.

use crate::named_enum;

named_enum!(
    /// Lifecycle of one job.
    JobState, "job state", {
        Queued => "queued",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Blocked => "blocked",
        Cancelled => "cancelled",
        // Its daemon was lost while it ran work whose writes may be half done (an
        // `implement`): it waits for a human to retry or cancel it, never re-run blindly.
        Interrupted => "interrupted",
    }
);

impl JobState {
    /// Nothing more happens to the job unless a human acts.
    pub fn is_terminal(self) -> bool {
        !matches!(
            self,
            JobState::Queued | JobState::Running | JobState::Interrupted
        )
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
        // A human aborted a failure escalation; the finalize ran, the outcome is the abort.
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
    /// What a job is asked to do (also what a promoted chat message runs as).
    Action, "action", {
        Ask => "ask",
        Review => "review",
        Implement => "implement",
    }
);

named_enum!(
    /// A verb applied to many jobs at once (`job cancel|kill|retry|answer|land|discard
    /// --where`, the control room's marked rows): each job goes through the same library
    /// verb as it would alone.
    BulkVerb, "bulk verb", {
        Cancel => "cancel",
        Kill => "kill",
        Retry => "retry",
        Answer => "answer",
        Land => "land",
        Discard => "discard",
    }
);

named_enum!(@names
    /// The failure-round verbs of `job resume`.
    ResumeVerb, {
        Retry => "retry",
        Continue => "continue",
        Abort => "abort",
    }
);

/// Case-insensitive, as `job resume` has always accepted `Retry`; the message is the verb's own.
impl std::str::FromStr for ResumeVerb {
    type Err = crate::UnknownName;
    fn from_str(s: &str) -> Result<Self, crate::UnknownName> {
        let folded = s.to_ascii_lowercase();
        ResumeVerb::ALL
            .iter()
            .copied()
            .find(|v| v.as_str() == folded)
            .ok_or_else(|| {
                crate::UnknownName(format!(
                    "invalid resume decision {s:?}; want retry|continue|abort"
                ))
            })
    }
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
    fn verbs_parse_case_insensitively() {
        assert_eq!("Retry".parse::<ResumeVerb>().unwrap(), ResumeVerb::Retry);
        assert_eq!(
            "answer".parse::<ResumeVerb>().unwrap_err().0,
            "invalid resume decision \"answer\"; want retry|continue|abort"
        );
    }
}

named_enum!(
    /// Lifecycle of a write job's worktree and branch: its work product until the operator
    /// lands or discards it.
    WorktreeState, "worktree state", {
        // A base was asked for at submission; nothing exists on disk yet.
        Requested => "requested",
        // The worktree and its branch exist and hold the job's work.
        Open => "open",
        Landed => "landed",
        Discarded => "discarded",
    }
);
