//! `gitmoot tui`: the control room.

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
    /// default | light | high-contrast, or a theme in <home>/themes/.
    #[arg(long)]
    pub theme: Option<String>,
    #[arg(long)]
    pub no_mouse: bool,
}

pub fn run(ctx: &Ctx, a: TuiArgs) -> anyhow::Result<()> {
    tui::run(
        &ctx.home,
        TuiOptions {
            readonly: a.readonly,
            no_daemon: a.no_daemon,
            theme: a.theme,
            no_mouse: a.no_mouse,
        },
    )
}
