//! `gitmoot store copy`: moving a home's data into an empty store of either backend,
//! and printing what the copy counted. The copy itself, and every check of it, is
//! `store::copy`'s; this file only parses and prints.

use std::io::Write;

use clap::Subcommand;

use super::Ctx;
use super::output::{Out, print_json};
use crate::store::Location;
use crate::store::copy::{self, Copied};

#[derive(Debug, Subcommand)]
pub enum StoreCmd {
    /// Copy every row of this store into an empty store (SQLite ⇄ PostgreSQL), verified
    /// by counting each table on both sides.
    Copy {
        /// The target: postgres://… or sqlite:PATH; it must hold no data.
        #[arg(long, value_name = "URL")]
        to: String,
        /// Print the counts as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: StoreCmd) -> anyhow::Result<()> {
    match cmd {
        StoreCmd::Copy { to, json } => {
            // Both checked before either store is opened: bad input creates nothing.
            let target = Location::parse(&to)?;
            let source = copy::home_location(&ctx.home)?;
            let copied = copy::copy(&source, &target)?;
            if json {
                print_json(&copied)
            } else {
                write!(Out::lines(), "{}", text(&copied))?;
                Ok(())
            }
        }
    }
}

/// One line per table, then the total.
fn text(c: &Copied) -> String {
    let width = c.tables.iter().map(|t| t.table.len()).max().unwrap_or(0);
    let mut out = String::new();
    for t in &c.tables {
        let note = if t.rebuilt { " (rebuilt)" } else { "" };
        out.push_str(&format!("{:<width$}  {} rows{note}\n", t.table, t.rows));
    }
    out.push_str(&format!(
        "copied {} rows into {} (verified)\n",
        c.rows, c.target
    ));
    out
}
