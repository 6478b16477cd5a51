//! The control room's presentation, tested with ratatui's `TestBackend` alone: keys and
//! updates, live activity, polish, quitting, snapshots of every view, and a frame and update
//! benchmark run by hand (`#[ignore]`d). One binary; `common` holds the fixture.

mod bench;
mod common;
mod diff_tab;
mod fleet;
mod help_overlay;
mod live_activity;
mod markdown_pane;
mod marks;
mod polish;
mod quit;
mod search_views;
mod small_terminals;
mod snapshots;
mod sort_and_scroll;
mod store_search;
mod threads_focus;
mod tree_titles;
mod update_keys;
mod usage_view;
