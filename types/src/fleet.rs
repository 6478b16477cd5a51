//! The names of watching a fleet: how `gitmoot usage` groups spend, and which records
//! `gitmoot search` looks through.
//!
//! Owns the names and their parsing; the figures and the index are the store's.

use crate::named_enum;

named_enum!(
    /// What `gitmoot usage` adds its figures up by.
    UsageBy, "usage grouping", {
        Root => "root",
        Agent => "agent",
        Model => "model",
        Repo => "repo",
        // The UTC day a job was created on.
        Day => "day",
    }
);

named_enum!(
    /// The kinds of record the full-text index holds.
    SearchSource, "search source", {
        Prompts => "prompts",
        Results => "results",
        Activity => "activity",
        Chat => "chat",
    }
);
