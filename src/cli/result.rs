//! `gitmoot result check [FILE]`: validate an agent's output against the result contract.

use std::path::PathBuf;

use clap::Subcommand;

use super::Ctx;

#[derive(Debug, Subcommand)]
pub enum ResultCmd {
    /// Parse FILE (stdin without FILE); print the normalised result or every error.
    Check { file: Option<PathBuf> },
}

pub fn run(_ctx: &Ctx, cmd: ResultCmd) -> anyhow::Result<()> {
    match cmd {
        ResultCmd::Check { .. } => anyhow::bail!("result check is not built yet"),
    }
}
