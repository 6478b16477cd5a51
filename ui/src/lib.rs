//! gitmoot-ui: the control room's pure presentation layer.
//!
//! Owns view models, UI state, the `update` function, keymap, theme parsing and widgets.
//! Must not touch SQLite, tokio or processes: everything here is testable with
//! `ratatui::backend::TestBackend` alone.
