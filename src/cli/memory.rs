//! `gitmoot memory list|confirm|promote`: inspect observations and move them into a
//! private or the shared pool. Sharing is always explicit.

use std::io::Write;

use clap::Subcommand;

use super::Ctx;
use super::output::{Out, print_json};
use crate::chat::{remember, write_retry};
use crate::clock::SystemClock;
use crate::store::memory::Observation;

#[derive(Debug, Subcommand)]
pub enum MemoryCmd {
    /// List observations, newest first.
    List {
        /// Only observations of this agent.
        #[arg(long)]
        agent: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Confirm a pending observation into its owner's pool (or the shared pool).
    Confirm {
        /// The observation's id.
        id: i64,
        /// Confirm into the shared pool instead of the owner's.
        #[arg(long)]
        to_shared: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Share a confirmed memory.
    Promote {
        /// The memory's id.
        id: i64,
        /// Share the memory with every agent.
        #[arg(long, required = true)]
        to_shared: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn pool(o: &Observation) -> String {
    if o.shared {
        "shared".into()
    } else {
        format!("{}'s private pool", o.agent)
    }
}

pub fn run(ctx: &Ctx, cmd: MemoryCmd) -> anyhow::Result<()> {
    let clock = SystemClock;
    let mut out = Out::lines();
    match cmd {
        MemoryCmd::List { agent, json } => {
            let store = ctx.store()?;
            let all = remember::list(&store.conn(), agent.as_deref())?;
            if json {
                return print_json(&all);
            }
            if all.is_empty() {
                writeln!(out, "no memory observations")?;
            }
            for o in &all {
                let repo = if o.repo.is_empty() { "-" } else { &o.repo };
                let shared = if o.shared { " shared" } else { "" };
                writeln!(
                    out,
                    "{:>5} {:<10} {:<9}{shared} {:<7} {:<20} {}  {}",
                    o.id,
                    o.agent,
                    o.state.as_str(),
                    o.tier.as_str(),
                    repo,
                    o.provenance,
                    o.body.lines().next().unwrap_or("")
                )?;
            }
            Ok(())
        }
        MemoryCmd::Confirm {
            id,
            to_shared,
            json,
        } => {
            let mut store = ctx.store()?;
            let o = write_retry(&mut store, |tx| {
                remember::confirm(tx, &clock, id, to_shared)
            })?;
            if json {
                return print_json(&o);
            }
            writeln!(out, "confirmed memory {} into {}", o.id, pool(&o))?;
            Ok(())
        }
        MemoryCmd::Promote { id, json, .. } => {
            let mut store = ctx.store()?;
            let o = write_retry(&mut store, |tx| remember::promote(tx, &clock, id))?;
            if json {
                return print_json(&o);
            }
            writeln!(out, "promoted memory {} to the shared pool", o.id)?;
            Ok(())
        }
    }
}
