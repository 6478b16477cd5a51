//! `gitmoot orchestrate review-panel|verifier "goal"`: the built-in coordinator recipes
//! (`engine::recipes`), started for a registered coordinator agent.

use std::io::Write;

use clap::{Args, Subcommand};

use super::Ctx;
use super::agent::parse;
use super::output::{Out, print_json};
use crate::domain::RuntimeKind;
use crate::engine::recipes::{self, Recipe, RecipeRun};

#[derive(Debug, Subcommand)]
pub enum OrchestrateCmd {
    /// Three read-only reviewers (correctness+security, performance+maintainability,
    /// tests+edge cases) on mixed runtimes; the coordinator dedupes their findings.
    ReviewPanel(RecipeArgs),
    /// One producer leg, then an independent verify leg on a different runtime that
    /// re-runs the build and tests; a failed verdict replans.
    Verifier {
        #[command(flatten)]
        args: RecipeArgs,
        /// Pause for a human when the verify leg fails, instead of a corrective round.
        #[arg(long)]
        escalate_human: bool,
    },
}

#[derive(Debug, Args)]
pub struct RecipeArgs {
    /// What to review or produce.
    pub goal: String,
    /// The registered coordinator that synthesizes the legs.
    #[arg(long, default_value = "lead")]
    pub agent: String,
    /// The repo the tree works on (recorded on every job of it).
    #[arg(long)]
    pub repo: Option<String>,
    /// Leg runtimes in order, reused round-robin (repeatable; default claude, codex, kimi).
    #[arg(long = "runtime", value_parser = parse::<RuntimeKind>)]
    pub runtimes: Vec<RuntimeKind>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ctx: &Ctx, cmd: OrchestrateCmd) -> anyhow::Result<()> {
    let (recipe, a, escalate_human) = match cmd {
        OrchestrateCmd::ReviewPanel(a) => (Recipe::ReviewPanel, a, false),
        OrchestrateCmd::Verifier {
            args,
            escalate_human,
        } => (Recipe::Verifier, args, escalate_human),
    };
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let json = a.json;
    let started = store.write(|tx| {
        recipes::start(
            tx,
            crate::chat::live_env(&cfg.orchestrate),
            RecipeRun {
                recipe,
                goal: a.goal,
                agent: a.agent,
                repo: a.repo,
                runtimes: a.runtimes,
                escalate_human,
            },
        )
    })?;
    if json {
        return print_json(&started);
    }
    let mut out = Out::lines();
    writeln!(out, "job: {}", started.root_id)?;
    writeln!(out, "recipe: {}", started.recipe)?;
    writeln!(out, "legs: {}", started.legs.join(", "))?;
    writeln!(out, "next: gitmoot job tree {}", started.root_id)?;
    Ok(())
}
