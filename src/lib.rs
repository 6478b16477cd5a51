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
pub mod duration;
pub mod engine;
pub mod home;
pub mod ids;
pub mod logging;
pub mod pid;
pub mod redact;
pub mod registry;
pub mod report;
pub mod runtime;
pub mod store;
pub mod tui;

/// A validation failure: bad input that changes nothing and exits with code 2.
///
/// Library error enums wrap it as a source so the binary can find it in the error chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl Invalid {
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

/// The error as one line: its causes joined, skipping causes that repeat their wrapper.
pub fn error_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cause = Some(err);
    while let Some(e) = cause {
        let text = e.to_string().replace('\n', " ");
        if !parts.last().is_some_and(|prev| prev.contains(&text)) {
            parts.push(text);
        }
        cause = e.source();
    }
    parts.join(": ")
}

/// Builds an `Err(Invalid)` from a format string.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::Invalid(format!($($arg)*)) };
}
