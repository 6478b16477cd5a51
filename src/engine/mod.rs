//! What happens when a job settles: dispatch, failure policies, synthesis, continuation,
//! bounds, escalation and kill.
//!
//! Pure logic over a store transaction and an injected clock; never spawns a process.

pub mod settle;
pub mod submit;

pub use settle::{Outcome, Settlement, Usage, settle};
pub use submit::{SubmitRoot, submit_root};

use crate::Invalid;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Invalid(#[from] Invalid),
}

impl From<rusqlite::Error> for EngineError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Store(e.into())
    }
}
