//! The fencing token of a claim: the daemon that claimed a job and the attempt it claimed.
//! A daemon settles what its agent finished only while the job is still that claim, read
//! in the settling transaction; a takeover that released the job (queued it again or left
//! it `interrupted`) while nothing claimed it since lets the daemon that ran it settle its
//! finished work late, and a job claimed again (another daemon, a later attempt) never
//! takes a stale run's result.
//!
//! Owns that comparison only; what the settlement does is `exec::Finished`'s, and how a
//! lost job is released is the engine's (`engine::lost`).

use crate::domain::JobState;
use crate::store::jobs::Job;

/// What the store says of the claim a finished run was made under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Still this daemon's claim (running, or ended by hand while it ran).
    Ours,
    /// Released by a takeover and not claimed since.
    Released,
    /// Claimed again, or moved on: the run's result is stale.
    Stale,
}

/// Compares the job as the store holds it now with the job as it was claimed.
pub(crate) fn claim_of(now: &Job, claimed: &Job) -> Claim {
    if now.daemon_id != claimed.daemon_id {
        return Claim::Stale;
    }
    let same = now.attempt == claimed.attempt;
    match now.state {
        JobState::Running if same => Claim::Ours,
        JobState::Interrupted if same => Claim::Released,
        JobState::Queued if now.attempt == claimed.attempt + 1 => Claim::Released,
        s if same && s.is_terminal() => Claim::Ours,
        _ => Claim::Stale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Action, JobKind};

    fn job(state: JobState, attempt: u32, daemon: &str) -> Job {
        let mut j = Job::queued(
            "j".into(),
            "j".into(),
            JobKind::Root,
            "a".into(),
            Action::Ask,
            "p".into(),
            1,
        );
        j.state = state;
        j.attempt = attempt;
        j.daemon_id = Some(daemon.into());
        j
    }

    #[test]
    fn a_claim_is_ours_released_or_stale() {
        let claimed = job(JobState::Running, 1, "d-a");
        let cases = [
            (job(JobState::Running, 1, "d-a"), Claim::Ours),
            (job(JobState::Cancelled, 1, "d-a"), Claim::Ours),
            (job(JobState::Queued, 2, "d-a"), Claim::Released),
            (job(JobState::Interrupted, 1, "d-a"), Claim::Released),
            (job(JobState::Running, 2, "d-b"), Claim::Stale),
            (job(JobState::Succeeded, 2, "d-b"), Claim::Stale),
            (job(JobState::Running, 2, "d-a"), Claim::Stale),
            (job(JobState::Queued, 3, "d-a"), Claim::Stale),
        ];
        for (now, want) in cases {
            assert_eq!(claim_of(&now, &claimed), want, "{now:?}");
        }
    }
}
