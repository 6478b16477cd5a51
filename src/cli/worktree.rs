//! `gitmoot worktree list|prune`: every write job's worktree and where it stands, and the
//! removal of what landed or discarded jobs left behind, through the `crate::worktree`
//! functions the control room calls too.

use std::io::Write;

use clap::Subcommand;

use super::Ctx;
use super::output::Out;

#[derive(Debug, Subcommand)]
pub enum WorktreeCmd {
    /// Every write job's worktree: job, branch, base, files changed, state (running, ready,
    /// base moved, conflicts, missing, landed, discarded), disk use.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove what landed and discarded jobs left behind (never a worktree whose work was
    /// neither landed nor discarded).
    Prune {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

pub fn run(ctx: &Ctx, cmd: WorktreeCmd) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    match cmd {
        WorktreeCmd::List { json } => {
            crate::worktree::follow(&mut store, crate::clock::now_ms(), None)?;
            let rows = crate::worktree::list(&store)?;
            let mut out = Out::block();
            if json {
                out.json(&rows)?;
                return Ok(out.finish()?);
            }
            if rows.is_empty() {
                writeln!(out, "no write job has a worktree")?;
            }
            for r in &rows {
                let partial = match r.job_state {
                    Some(s)
                        if !matches!(r.state, "running" | "landed" | "discarded")
                            && s != crate::domain::JobState::Succeeded =>
                    {
                        format!(" (job {s}: partial work)")
                    }
                    _ => String::new(),
                };
                writeln!(
                    out,
                    "{}  {}{partial}  {}  from {}  {} files  {}  {}",
                    r.job,
                    r.state,
                    r.branch.as_deref().unwrap_or("-"),
                    r.base.as_deref().unwrap_or("-"),
                    r.files.map_or("-".into(), |n| n.to_string()),
                    r.disk_bytes.map_or("-".into(), size),
                    r.path.as_deref().unwrap_or("-"),
                )?;
                for o in &r.overlaps {
                    let at = crate::domain::places(&o.files, &o.hunks);
                    writeln!(out, "    {} with {}: {at}", o.kind, o.job)?;
                }
                if let Some(c) = &r.against_base {
                    let at = crate::domain::places(&c.files, &c.hunks);
                    writeln!(
                        out,
                        "    conflicts with {} at {}: {at}",
                        c.base,
                        c.tip.get(..12).unwrap_or(&c.tip)
                    )?;
                }
            }
            Ok(out.finish()?)
        }
        WorktreeCmd::Prune { json } => {
            let p = crate::worktree::prune(&store, &ctx.config()?)?;
            let mut out = Out::lines();
            if json {
                return out.json(&p);
            }
            for w in &p.worktrees {
                writeln!(out, "removed worktree {w}")?;
            }
            for b in &p.branches {
                writeln!(out, "deleted branch {b}")?;
            }
            writeln!(
                out,
                "pruned {} worktree(s), {} branch(es); open work untouched",
                p.worktrees.len(),
                p.branches.len()
            )?;
            Ok(())
        }
    }
}
