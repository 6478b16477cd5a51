//! The control room glue: terminal setup and restore, the event loop, loading view models
//! from the store and executing the ui crate's actions through the same functions as the CLI.

pub mod terminal;
pub mod watch;

use crate::home::Home;

/// How the control room was asked to start.
#[derive(Debug, Clone, Default)]
pub struct TuiOptions {
    pub readonly: bool,
    pub no_daemon: bool,
    pub theme: Option<String>,
    pub no_mouse: bool,
}

pub fn run(_home: &Home, _opts: TuiOptions) -> anyhow::Result<()> {
    anyhow::bail!("the control room is being wired in; use `gitmoot demo --headless`")
}
