//! Native chat: threads, messages, mentions, inboxes, promotion (`chat task`), the ask-gate
//! channel (`chat answer`), memory capture, turn-taking (`chat wait`), the auto-respond
//! sweep, moots and the seat relay.
//!
//! The one rule: a message is a row (free), a job is compute (explicit). Only
//! `promote::task`, `answer::answer`, `autorespond::autorespond_sweep` and `moot::convene`
//! ever submit work, always through `engine::submit_root` and its registry gate. Owns
//! `src/chat/**`; writes job-adjacent rows only through the engine, except the
//! `escalations.thread_id` stamp of an ask-gate link.

pub mod answer;
pub(crate) mod askgate;
pub mod autorespond;
pub mod cap;
pub mod envelope;
pub mod hooks;
pub mod inbox;
pub mod mentions;
pub mod messages;
pub mod moot;
pub mod promote;
pub mod relay;
pub mod remember;
pub mod slug;
pub mod threads;
pub mod wait;

use std::time::Duration;

use crate::store::Tx;

use crate::Invalid;
use crate::domain::Action;
use crate::engine::{EngineError, SubmitRoot};
use crate::store::chat::Thread;
use crate::store::{Store, StoreError};

pub use autorespond::autorespond_sweep;
pub use hooks::{ChatHooks, live_env};

/// Everything chat can fail with. `Invalid` (bad input) exits 2; `Refused` (a state that
/// forbids the action: archived thread, duplicate promotion, moot cap) exits 1.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    #[error("{reason}")]
    Refused { reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The seat relay failed or refused; `reason` is its whole one-line text.
    #[error("{reason}")]
    Relay { reason: String },
}

impl ChatError {
    /// A state that forbids the action (exit 1), its reason in one line.
    pub fn refused(reason: impl Into<String>) -> Self {
        Self::Refused {
            reason: reason.into(),
        }
    }

    /// A relay failure, its reason in one line.
    pub fn relay(reason: impl Into<String>) -> Self {
        Self::Relay {
            reason: reason.into(),
        }
    }

    /// Bad input (exit 2), however it reached chat.
    pub(crate) fn is_invalid(&self) -> bool {
        match self {
            Self::Invalid(_) => true,
            Self::Store(e) => e.is_invalid(),
            Self::Engine(e) => e.is_invalid(),
            Self::Refused { .. } | Self::Relay { .. } => false,
        }
    }
}

impl From<serde_json::Error> for ChatError {
    fn from(e: serde_json::Error) -> Self {
        Self::Store(e.into())
    }
}

pub type Result<T, E = ChatError> = std::result::Result<T, E>;

/// A root job asked for from `thread` (a promotion, an auto-respond, a moot seat): on the
/// thread's repo, recorded as dispatched by it so its result finds its way back.
fn thread_job(thread: &Thread, agent: &str, action: Action, prompt: String) -> SubmitRoot {
    SubmitRoot {
        repo: Some(thread.repo.clone()),
        ..SubmitRoot::new(
            agent.to_string(),
            action,
            prompt,
            format!("chat:{}", thread.id),
        )
    }
}

fn is_busy(e: &ChatError) -> bool {
    match e {
        ChatError::Store(s) | ChatError::Engine(EngineError::Store(s)) => s.is_busy(),
        _ => false,
    }
}

/// Runs `f` in one IMMEDIATE transaction, retrying the whole transaction when SQLite
/// reports busy/locked past the busy timeout (a WAL snapshot race can surface that way).
pub fn write_retry<T>(store: &mut Store, f: impl FnMut(&Tx<'_>) -> Result<T>) -> Result<T> {
    write_retry_in(store, None, f)
}

/// `write_retry` in `scope` (`Store::write_scoped`), when it has one.
pub(crate) fn write_retry_in<T>(
    store: &mut Store,
    scope: Option<crate::store::Scope<'_>>,
    mut f: impl FnMut(&Tx<'_>) -> Result<T>,
) -> Result<T> {
    const ATTEMPTS: u32 = 16;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let done = match scope {
            Some(scope) => store.write_scoped(scope, &mut f),
            None => store.write(&mut f),
        };
        match done {
            Err(e) if attempt < ATTEMPTS && is_busy(&e) => {
                let cap = (1u64 << attempt.min(6)).min(40);
                let jitter =
                    u64::from_str_radix(&crate::ids::random_hex(2), 16).unwrap_or(0) % (cap + 1);
                std::thread::sleep(Duration::from_millis(jitter));
            }
            other => return other,
        }
    }
}
