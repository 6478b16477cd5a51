//! Every kind of row the product writes to the `events` table, spelled once: writers name a
//! variant and the store keeps its text, so the text stored (and asserted by the seeds)
//! is exactly the variant's spelling.
//!
//! Reading stays open: a store written by an older or newer gitmoot may hold kinds this
//! list does not know, so readers keep the stored text (`store::events::Event::kind` is a
//! `String`) and ask `EventKind::from_str` only when they need a known kind; an unknown
//! kind is shown as written and matches no variant. Owns the names only; must not decide
//! what an event means or when one is written (the engine, daemon and chat do).

use crate::JobState;

/// `EventKind::DelegationPreflightFailed`'s spelling as a literal, for SQL that must name
/// it inline (the store's partial index on that one kind, and the queries it serves); a
/// test holds it equal to the variant.
#[macro_export]
macro_rules! preflight_failed_kind {
    () => {
        "delegation_preflight_failed"
    };
}

/// The stall events' kinds (`JobStalled`, `JobStallLeft`, `JobStallCleared`) as one SQL
/// condition on `kind`, for the store's partial index of them and the queries it serves,
/// which must spell it inline for the index to be used; a test holds it equal to the
/// variants.
#[macro_export]
macro_rules! stall_kinds_sql {
    () => {
        "kind IN ('job_stalled', 'job_stall_left', 'job_stall_cleared')"
    };
}

crate::named_enum!(
    /// The kind of one event row.
    EventKind, "event kind", {
        // A job reached a state (the same spelling as `JobState`).
        Queued => "queued",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Blocked => "blocked",
        Cancelled => "cancelled",
        Interrupted => "interrupted",
        // A tree's life and its session jobs.
        RunFinished => "run_finished",
        SessionOpened => "session_opened",
        SessionNote => "session_note",
        ResultChecksFailed => "result_checks_failed",
        ReviewApprovedWithNotes => "review_approved_with_notes",
        VerifyReplanExhausted => "verify_replan_exhausted",
        VerifyReplanWarning => "verify_replan_warning",
        // A coordinator's delegation set: the bounds that stop it, in the seed's order.
        DelegationIgnoredEphemeral => "delegation_ignored_ephemeral",
        DelegationFinalized => "delegation_finalized",
        DelegationKilled => "delegation_killed",
        DelegationDepthExceeded => "delegation_depth_exceeded",
        DelegationBudgetExceeded => "delegation_budget_exceeded",
        DelegationWalltimeExceeded => "delegation_walltime_exceeded",
        DelegationCostExceeded => "delegation_cost_exceeded",
        DelegationCostUsdExceeded => "delegation_cost_usd_exceeded",
        DelegationWidthExceeded => "delegation_width_exceeded",
        DelegationLoopDetected => "delegation_loop_detected",
        DelegationLoopWarning => "delegation_loop_warning",
        DelegationPreflightFailed => "delegation_preflight_failed",
        // The batch and its legs.
        DelegationBatch => "delegation_batch",
        DelegationDeduped => "delegation_deduped",
        DelegationEnqueued => "delegation_enqueued",
        DelegationRetry => "delegation_retry",
        DelegationRetryRefused => "delegation_retry_refused",
        DelegationBlocked => "delegation_blocked",
        DelegationIgnoredAsk => "delegation_ignored_ask",
        DelegationDeferredAsk => "delegation_deferred_ask",
        DelegationContinuationEnqueued => "delegation_continuation_enqueued",
        DelegationFinalizeEnqueued => "delegation_finalize_enqueued",
        // Human gates.
        DelegationAskExtended => "delegation_ask_extended",
        DelegationAskAnswered => "delegation_ask_answered",
        DelegationEscalationRequested => "delegation_escalation_requested",
        DelegationEscalationResolved => "delegation_escalation_resolved",
        DelegationEscalationRetry => "delegation_escalation_retry",
        // The daemon.
        BudgetStop => "budget_stop",
        JobQuarantined => "job_quarantined",
        JobRecovered => "job_recovered",
        JobRecoveryFailed => "job_recovery_failed",
        // A running job whose daemon was lost runs again as its next attempt.
        JobRequeued => "job_requeued",
        // A daemon that lost its lease finished a job another daemon had claimed again.
        JobSettlementDiscarded => "job_settlement_discarded",
        HumanNotify => "human_notify",
        // A running job looks stuck (silent, looping, burning); the operator left it
        // running; it moved again. The daemon's watch writes them (`engine::stall`).
        JobStalled => "job_stalled",
        JobStallLeft => "job_stall_left",
        JobStallCleared => "job_stall_cleared",
        HumanNotifyFailed => "human_notify_failed",
        MalformedOutput => "malformed_output",
        RepairRetry => "repair_retry",
        // A write job's worktree: opened on its branch, landed into its base, discarded;
        // its branch pushed to the repo's `push` remote when the job ended (or why not).
        WorktreeOpened => "worktree_opened",
        Landed => "landed",
        // A land whose process died midway, found with its base moved elsewhere: the job
        // is still open (`worktree::resume_lands`).
        LandInterrupted => "land_interrupted",
        Discarded => "discarded",
        BranchPushed => "branch_pushed",
        BranchPushFailed => "branch_push_failed",
        // The job's branch took in a newer tip of its base branch (its agent merged or
        // rebased, or `job rebase` did): its diff is measured from the new merge base.
        BaseFollowed => "base_followed",
        // A settled job sent back to its agent with review comments, as its next attempt.
        ReviewRound => "review_round",
        // Chat and memory.
        ChatThreadCreated => "chat_thread_created",
        ChatThreadRenamed => "chat_thread_renamed",
        ChatThreadReopened => "chat_thread_reopened",
        ChatThreadClosed => "chat_thread_closed",
        ChatThreadLinked => "chat_thread_linked",
        ChatResultPosted => "chat_result_posted",
        ChatLinkFailed => "chat_link_failed",
        ChatResultPostFailed => "chat_result_post_failed",
        MemoryObserved => "memory_observed",
        MemoryConfirmed => "memory_confirmed",
        MemoryShared => "memory_shared",
    }
);

impl EventKind {
    /// The event a job's move to `state` leaves; a state change is logged under the
    /// state's own name.
    pub fn entered(state: JobState) -> Self {
        match state {
            JobState::Queued => EventKind::Queued,
            JobState::Running => EventKind::Running,
            JobState::Succeeded => EventKind::Succeeded,
            JobState::Failed => EventKind::Failed,
            JobState::Blocked => EventKind::Blocked,
            JobState::Cancelled => EventKind::Cancelled,
            JobState::Interrupted => EventKind::Interrupted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preflight_literal_is_the_variant_s_spelling() {
        assert_eq!(
            crate::preflight_failed_kind!(),
            EventKind::DelegationPreflightFailed.as_str()
        );
    }

    #[test]
    fn the_stall_literal_names_the_three_stall_variants() {
        let spelled = [
            EventKind::JobStalled,
            EventKind::JobStallLeft,
            EventKind::JobStallCleared,
        ]
        .map(|k| format!("'{}'", k.as_str()))
        .join(", ");
        assert_eq!(crate::stall_kinds_sql!(), format!("kind IN ({spelled})"));
    }

    #[test]
    fn a_state_change_is_logged_under_the_state_s_own_spelling() {
        for &s in JobState::ALL {
            assert_eq!(EventKind::entered(s).as_str(), s.as_str());
        }
    }

    #[test]
    fn every_spelling_reads_back_and_an_unknown_one_is_refused() {
        for k in EventKind::ALL {
            assert_eq!(k.as_str().parse::<EventKind>().unwrap(), *k);
        }
        assert!("delegation_from_the_future".parse::<EventKind>().is_err());
    }
}
