//! `gitmoot daemon run|status` and the waiting half of `job run --wait`.
//!
//! Thin glue over `crate::daemon`: flags in, the daemon's report out.

use std::time::Duration;

use clap::Subcommand;

use super::Ctx;
use super::output::{age, print_json};
use crate::clock::now_ms;
use crate::daemon::{Daemon, DaemonError, DaemonExit, LockError};
use crate::domain::{JobKind, RunState};
use crate::store::jobs::{self, Job};
use crate::store::runs;

#[derive(Debug, Subcommand)]
pub enum DaemonCmd {
    /// Run the worker pool in the foreground (one daemon per home).
    Run {
        /// Jobs run at once (default [daemon].parallel, 2).
        #[arg(long)]
        parallel: Option<usize>,
        /// Exit 0 once nothing is queued or running.
        #[arg(long)]
        until_idle: bool,
    },
    /// Show whether a daemon runs and what it is doing.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: DaemonCmd) -> anyhow::Result<()> {
    match cmd {
        DaemonCmd::Run {
            parallel,
            until_idle,
        } => {
            if parallel == Some(0) {
                return Err(crate::Invalid("--parallel must be at least 1".into()).into());
            }
            let config = ctx.config()?;
            drop(ctx.store()?);
            let daemon = Daemon::new(ctx.home.clone())
                .config(config)
                .hooks(std::sync::Arc::new(crate::chat::ChatHooks))
                .parallel(parallel)
                .until_idle(until_idle)
                .handle_signals(true);
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            match rt.block_on(daemon.run())? {
                DaemonExit::Idle => {}
                DaemonExit::Shutdown { terminated } if terminated > 0 => {
                    eprintln!(
                        "daemon stopped; {terminated} running job(s) were terminated after the shutdown grace"
                    );
                }
                DaemonExit::Shutdown { .. } => {}
            }
            Ok(())
        }
        DaemonCmd::Status { json } => {
            let store = ctx.store()?;
            let now = now_ms();
            let s = crate::daemon::status_report(&ctx.home, store.conn(), now)?;
            if json {
                return print_json(&s);
            }
            match &s.pid {
                Some(pid) => println!("daemon running pid {pid}"),
                None => println!("daemon stopped"),
            }
            if let Some(up) = s.uptime_ms {
                println!("uptime: {}", age(now, now - up));
            }
            if let Some(p) = s.parallel {
                println!("parallel: {p}");
            }
            println!("running: {}  queued: {}", s.running_jobs, s.queued_jobs);
            if let Some(t) = s.last_tick_ms {
                println!("last tick: {} ago", age(now, t));
            }
            for j in &s.jobs {
                println!(
                    "  {:<36} {:<14} {}",
                    j.id,
                    j.agent,
                    age(now, now - j.age_ms)
                );
            }
            Ok(())
        }
    }
}

/// `job run --wait`: runs an in-process daemon for this tree when no daemon holds the
/// home (otherwise the running one does the work), waits until the run settles or pauses
/// for a human, then prints the final result.
pub fn wait_for_root(ctx: &Ctx, root: &str, as_json: bool) -> anyhow::Result<()> {
    let config = ctx.config()?;
    let embedded = match Daemon::new(ctx.home.clone())
        .config(config)
        .hooks(std::sync::Arc::new(crate::chat::ChatHooks))
        .only_root(Some(root.to_string()))
        .spawn()
    {
        Ok(handle) => Some(handle),
        Err(DaemonError::Lock(LockError::Held { .. })) => None,
        Err(e) => return Err(e.into()),
    };
    let store = ctx.store()?;
    let state = loop {
        let run = runs::require(store.conn(), root)?;
        if run.state.is_terminal() || run.state == RunState::AwaitingHuman {
            break run.state;
        }
        if let Some(h) = &embedded
            && h.is_finished()
        {
            break run.state;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if let Some(h) = embedded {
        h.shutdown();
        h.join()?;
    }
    if as_json {
        print_json(&super::job::tree_json(store.conn(), root)?)?;
    } else {
        let last = final_job(store.conn(), root)?;
        println!("{root} {state}");
        if let Some(r) = &last.result {
            println!("decision: {}", r["decision"].as_str().unwrap_or("?"));
            println!("summary:  {}", r["summary"].as_str().unwrap_or(""));
        }
        if let Some(e) = &last.error {
            println!("error:    {e}");
        }
    }
    match state {
        RunState::Done => Ok(()),
        RunState::AwaitingHuman => {
            if !as_json {
                println!("awaiting a human: see `gitmoot job pending`");
            }
            Ok(())
        }
        other => Err(anyhow::anyhow!("run {root} ended {other}")),
    }
}

/// The job whose result is the tree's: the root, or the last of its continuation chain.
fn final_job(conn: &rusqlite::Connection, root: &str) -> anyhow::Result<Job> {
    let mut current = jobs::require(conn, root)?;
    loop {
        let next = jobs::children(conn, &current.id)?
            .into_iter()
            .filter(|c| matches!(c.kind, JobKind::Continuation | JobKind::Finalize))
            .max_by_key(|c| (c.created_ms, c.attempt));
        match next {
            Some(c) => current = c,
            None => return Ok(current),
        }
    }
}
