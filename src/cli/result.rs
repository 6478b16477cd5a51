//! `gitmoot result check [FILE]`: validate an agent's output against the result contract.
//!
//! Reads FILE (stdin without one), prints the normalised result as JSON on success, or
//! every contract error on its own `error: ` line with exit code 2. Owns no rules: it
//! only calls `contract::parse`.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;

use super::Ctx;
use super::output::Out;

#[derive(Debug, Subcommand)]
pub enum ResultCmd {
    /// Parse FILE (stdin without FILE); print the normalised result or every error.
    Check {
        /// The file holding the agent's output (stdin without it).
        file: Option<PathBuf>,
    },
}

pub fn run(_ctx: &Ctx, cmd: ResultCmd) -> anyhow::Result<()> {
    match cmd {
        ResultCmd::Check { file } => check(file),
    }
}

fn check(file: Option<PathBuf>) -> anyhow::Result<()> {
    let bytes = match &file {
        Some(path) => std::fs::read(path)
            .map_err(|e| crate::Invalid(format!("cannot read {}: {e}", path.display())))?,
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("reading stdin")?;
            buf
        }
    };
    // Agent output is not guaranteed UTF-8; invalid bytes must not hide a valid result.
    let text = String::from_utf8_lossy(&bytes);
    match crate::contract::parse(&text) {
        Ok(result) => {
            writeln!(
                Out::lines().exact(),
                "{}",
                crate::contract::to_json(&result)
            )?;
            Ok(())
        }
        Err(errors) => {
            // Every error gets its own line; the last goes through the normal error path
            // so the binary prints it and exits 2 like any other validation failure.
            let (last, rest) = errors
                .lines()
                .split_last()
                .map_or((crate::contract::MISSING, &[][..]), |(l, r)| {
                    (l.as_str(), r)
                });
            for line in rest {
                eprintln!("error: {line}");
            }
            Err(crate::Invalid(last.to_owned()).into())
        }
    }
}
