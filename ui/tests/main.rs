//! The control room's presentation, tested with ratatui's `TestBackend` alone: keys and
//! updates, live activity, polish, quitting, snapshots of every view, and a frame and update
//! benchmark run by hand (`#[ignore]`d). One binary; `common` holds the fixture.

mod bench;
mod common;
mod diff_tab;
mod fleet;
mod live_activity;
mod marks;
mod polish;
mod quit;
mod snapshots;
mod update_keys;
