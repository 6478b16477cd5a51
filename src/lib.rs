//! gitmoot: a local-first orchestrator and terminal control room for fleets of coding agents.
//!
//! The library holds every behaviour; the binary (`main.rs`) only parses arguments and maps
//! errors to exit codes. A CLI verb and the matching control-room action call the same
//! function in `engine`, `chat` or `store`.

pub mod bench;
pub mod chat;
pub mod cli;
pub mod clock;
pub mod config;
pub mod contract;
pub mod daemon;
pub mod demo;
pub mod domain;
pub(crate) mod duration;
pub mod engine;
pub mod home;
pub mod ids;
pub(crate) mod logging;
pub mod pid;
pub(crate) mod redact;
pub(crate) mod registry;
pub(crate) mod report;
pub mod runtime;
pub mod store;
pub mod tui;
pub mod worktree;

/// A validation failure: bad input that changes nothing and exits with code 2.
///
/// Library error enums wrap it in a transparent variant and answer `is_invalid()` for it,
/// so the binary can tell exit 2 from exit 1 however deep the wrapping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Invalid(pub String);

/// The message is the whole text: nothing to add around it.
impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Invalid {
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// The error as one line: each cause of its chain once, joined by `: `.
///
/// Every text appears once because the crate's errors keep one rule: a variant that only
/// wraps is transparent, and a variant whose message names its cause does not also hand
/// that cause on as its source.
pub fn error_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cause = Some(err);
    while let Some(e) = cause {
        parts.push(e.to_string().replace('\n', " "));
        cause = e.source();
    }
    parts.join(": ")
}

/// Builds an `Err(Invalid)` from a format string.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::Invalid(format!($($arg)*)) };
}
