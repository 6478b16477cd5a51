//! What happens when a job settles: dispatch, failure policies, synthesis, continuation,
//! bounds, escalation and kill.
//!
//! Pure logic over a store transaction and an injected clock; never spawns a process.
//! `settle` (daemon, once per finished job), `sweep` (daemon, every tick), the verbs
//! `kill_root`, `cancel_job`, `answer`, `resume`, and the reads `pending`,
//! `jobs_to_terminate`, `may_start` are the whole surface the daemon, chat, CLI and
//! control room call.

mod batch;
pub mod bounds;
pub mod bulk;
pub mod caps;
pub mod checks;
mod continuation;
pub mod control;
pub(crate) mod ctx;
mod dispatch;
pub mod escalation;
mod gates;
mod legs;
pub mod lost;
pub mod observe;
pub mod pricing;
pub mod prompts;
pub mod recipes;
mod resolve;
pub mod review;
pub mod session;
pub mod settle;
pub mod stall;
pub mod submit;

pub use control::{
    KillReport, SweepReport, cancel_job, jobs_to_terminate, kill_root, may_start, sweep,
};
pub use ctx::Resolution;
pub use escalation::{
    PendingItem, PendingQuestion, ResumeVerb, answer, choice_answer, parse_answers, pending, resume,
};
pub use pricing::price_usd;
pub use settle::{Outcome, Settlement, Usage, settle};
pub use submit::{SubmitRoot, submit_root};

use crate::store::Tx;

use crate::Invalid;
use crate::clock::Clock;
use crate::config::OrchestrateConfig;
use crate::store::StoreError;
use crate::store::escalations::Round;
use crate::store::jobs::Job;

/// Side effects other modules attach to engine transitions, run inside the same
/// transaction so nothing is lost between them. Chat implements them (job_result
/// back-links, ask-gate threads); the engine never depends on chat.
pub trait Hooks {
    /// An ask round opened on `job`; `escalation_id` is its row in `escalations`.
    fn ask_round_opened(
        &self,
        _tx: &Tx<'_>,
        _clock: &dyn Clock,
        _job: &Job,
        _escalation_id: i64,
    ) -> Result<(), EngineError> {
        Ok(())
    }
    /// A human round on `round.job_id` was closed: answered, resumed, expired by its TTL
    /// (`verb` `ttl`) or closed by a stop.
    fn round_closed(
        &self,
        _tx: &Tx<'_>,
        _clock: &dyn Clock,
        _round: &Round,
    ) -> Result<(), EngineError> {
        Ok(())
    }
    /// `job` reached a terminal state.
    fn job_finished(
        &self,
        _tx: &Tx<'_>,
        _clock: &dyn Clock,
        _job: &Job,
    ) -> Result<(), EngineError> {
        Ok(())
    }
    /// A write job's work was landed or discarded; `note` says what happened.
    fn work_settled(
        &self,
        _tx: &Tx<'_>,
        _clock: &dyn Clock,
        _job: &Job,
        _note: &str,
    ) -> Result<(), EngineError> {
        Ok(())
    }
}

/// For callers with nothing attached (tests, headless tools without chat).
pub struct NoHooks;

impl Hooks for NoHooks {}

/// What the engine reads from outside a transaction: the clock, the orchestrate knobs and
/// the hooks other rooms attach. Every verb takes the three together, so they travel as one.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    pub clock: &'a dyn Clock,
    pub cfg: &'a OrchestrateConfig,
    pub hooks: &'a dyn Hooks,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Invalid(#[from] Invalid),
}

impl EngineError {
    /// Bad input (exit 2), however it reached the engine.
    pub fn is_invalid(&self) -> bool {
        match self {
            Self::Store(e) => e.is_invalid(),
            Self::Invalid(_) => true,
        }
    }
}
