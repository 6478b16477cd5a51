//! gitmoot-ui: the control room's pure presentation layer.
//!
//! Owns view models, UI state, the `update` function, keymap, theme parsing and widgets.
//! Must not touch SQLite, tokio or processes: everything here is testable with
//! `ratatui::backend::TestBackend` alone.
//!
//! The glue's loop: build a [`State`] once; on every crossterm event call
//! [`update`] with [`Event::Key`]/`Mouse`/`Paste`/`Resize`; on a timer send
//! [`Event::Tick`]; after loading a new [`Snapshot`] send [`Event::SnapshotArrived`];
//! execute the returned [`Action`]s; then draw with [`render`].

pub mod action;
pub mod complete;
pub mod groups;
pub mod keymap;
pub mod layout;
pub mod live;
pub mod markdown;
pub mod pane;
pub mod render;
pub mod rows;
pub mod sanitize;
pub mod search;
pub mod sort;
pub mod state;
pub mod svg;
pub mod theme;
pub mod update;
pub mod view;
pub mod widgets;
pub mod work;

pub use action::{Action, BulkVerb, Load, PromoteAction, ResumeVerb, Term, Write};
pub use complete::CompletionTree;
pub use keymap::{Keymap, KeymapError, keys_markdown, tour_markdown};
pub use pane::Pane;
pub use render::render;
pub use state::{CommandOutput, State, ToastLevel};
pub use theme::{ColorDepth, Theme, ThemeError};
pub use update::{Event, update};
pub use view::Snapshot;
