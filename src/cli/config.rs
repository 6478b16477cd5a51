//! `gitmoot config show`: the effective configuration as TOML or JSON.

use std::io::Write;

use clap::Subcommand;

use super::Ctx;
use super::output::Out;

#[derive(Debug, Subcommand)]
pub enum ConfigCmd {
    /// Print the effective config (file values over defaults).
    Show {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the config file's path.
    Path,
}

pub fn run(ctx: &Ctx, cmd: ConfigCmd) -> anyhow::Result<()> {
    let mut out = Out::lines();
    match cmd {
        ConfigCmd::Show { json } => {
            let config = ctx.config()?;
            if json {
                super::output::print_json(&config)
            } else {
                write!(out, "{}", config.to_toml())?;
                Ok(())
            }
        }
        ConfigCmd::Path => {
            writeln!(out, "{}", ctx.home.config_path().display())?;
            Ok(())
        }
    }
}
