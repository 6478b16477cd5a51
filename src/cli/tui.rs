//! `gitmoot tui`: the control room.

use std::io::IsTerminal;

use clap::Args;

use super::Ctx;
use crate::tui::{self, TuiOptions};

#[derive(Debug, Args)]
pub struct TuiArgs {
    /// Disable every write.
    #[arg(long)]
    pub readonly: bool,
    /// Do not embed the daemon; watch as a viewer.
    #[arg(long)]
    pub no_daemon: bool,
    /// default | light | high-contrast | auto (light or dark from the terminal's
    /// background), or a theme in <home>/themes/. Colours follow COLORTERM/TERM;
    /// GITMOOT_COLORS=truecolor|256|16 overrides.
    #[arg(long)]
    pub theme: Option<String>,
    /// Leave the mouse to the terminal (select and copy text natively).
    #[arg(long)]
    pub no_mouse: bool,
}

pub fn run(ctx: &Ctx, a: TuiArgs) -> anyhow::Result<()> {
    // A bad --theme is bad input whatever the terminal (reading themes creates nothing).
    if let Some(name) = a.theme.as_deref().filter(|n| *n != "auto") {
        tui::load_theme(&ctx.home, name)?;
    }
    // Checked before the home is opened, so a mistaken run in a pipe creates nothing.
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(crate::Invalid::new(
            "the control room needs a terminal (stdin and stdout are not a TTY); \
             use `gitmoot job list` or `job tree` to read state from a script",
        )
        .into());
    }
    tui::run(
        &ctx.home,
        TuiOptions {
            readonly: a.readonly,
            no_daemon: a.no_daemon,
            theme: a.theme,
            no_mouse: a.no_mouse,
            completions: super::complete::completion_tree(),
        },
    )
}
