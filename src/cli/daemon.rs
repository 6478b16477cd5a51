//! `gitmoot daemon run|status|stop` and the waiting half of `job run --wait`.
//!
//! Thin glue over `crate::daemon`: flags in, the daemon's report out.

use crate::store::Tx;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Subcommand;

use super::Ctx;
use super::output::{Out, age, table};
use crate::clock::now_ms;
use crate::daemon::{Daemon, DaemonError, DaemonExit, LockError, ShutdownHandle, StopMode};
use crate::domain::{EventKind, JobKind, JobState, RunState};
use crate::store::jobs::{self, Job};
use crate::store::runs;

#[derive(Debug, Subcommand)]
pub enum DaemonCmd {
    /// Run the worker pool in the foreground (one daemon per SQLite store and per home).
    Run {
        /// Jobs run at once (default [daemon].parallel, 2).
        #[arg(long)]
        parallel: Option<usize>,
        /// Exit 0 once nothing is queued or running.
        #[arg(long)]
        until_idle: bool,
        /// Host labels this daemon carries, comma-separated (default [daemon].labels): it
        /// also runs the jobs pinned to them with `job run --on`.
        #[arg(long, value_delimiter = ',', value_name = "LABEL,...")]
        labels: Option<Vec<String>>,
    },
    /// Show whether a daemon runs and what it is doing.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Stop the home's daemon and wait until it has exited: no new claims, running jobs
    /// get [daemon].shutdown_grace.
    Stop {
        /// Let every running and queued job finish first.
        #[arg(long, conflicts_with = "kill")]
        wait: bool,
        /// Terminate the running jobs now (recorded failed); queued jobs stay queued.
        #[arg(long)]
        kill: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: DaemonCmd) -> anyhow::Result<()> {
    match cmd {
        DaemonCmd::Run {
            parallel,
            until_idle,
            labels,
        } => run_foreground(ctx, parallel, until_idle, labels),
        DaemonCmd::Status { json } => status(ctx, json),
        DaemonCmd::Stop { wait, kill } => stop(ctx, wait, kill),
    }
}

/// `daemon stop`: signals the daemon the store's lock names (see `daemon::shutdown`) and
/// waits until it has let go of the lock or died.
fn stop(ctx: &Ctx, wait: bool, kill: bool) -> anyhow::Result<()> {
    let (mode, how) = match (wait, kill) {
        (true, _) => (StopMode::Finish, "every running and queued job finished"),
        (_, true) => (StopMode::Kill, "its running jobs were terminated"),
        _ => (
            StopMode::Graceful,
            "no new claims; running jobs had [daemon].shutdown_grace",
        ),
    };
    let lock = crate::daemon::lock::path_for(&ctx.home);
    let pid = crate::daemon::request_stop(&lock, mode)?;
    // "Stopped" means the process is gone, not only its lock: a daemon releases the lock
    // a moment before it exits.
    while crate::pid::is_alive(pid) {
        std::thread::sleep(Duration::from_millis(50));
    }
    writeln!(Out::lines(), "daemon pid {pid} stopped: {how}")?;
    Ok(())
}

/// `daemon run`: the pool in the foreground, one line per job state change on stdout.
fn run_foreground(
    ctx: &Ctx,
    parallel: Option<usize>,
    until_idle: bool,
    labels: Option<Vec<String>>,
) -> anyhow::Result<()> {
    if parallel == Some(0) {
        return Err(crate::Invalid("--parallel must be at least 1".into()).into());
    }
    for label in labels.iter().flatten() {
        crate::config::check_label(label)?;
    }
    let config = ctx.config()?;
    let store = ctx.store()?;
    let cursor = crate::store::events::since(store.conn(), 0, usize::MAX)
        .map(|e| e.last().map_or(0, |e| e.id))
        .unwrap_or(0);
    drop(store);
    let n = parallel.unwrap_or(config.daemon.parallel);
    let line = format!(
        "daemon started: pid {}, {n} job(s) at once, home {} (Ctrl-C stops)",
        std::process::id(),
        ctx.home.root().display()
    );
    let cursor = Arc::new(Mutex::new(cursor));
    let daemon = Daemon::new(ctx.home.clone())
        .config(config)
        .config_file(ctx.home.config_path())
        .hooks(std::sync::Arc::new(crate::chat::ChatHooks))
        .parallel(parallel)
        .labels(labels)
        .until_idle(until_idle)
        .handle_signals(true);
    let (home, follow, stop) = (ctx.home.clone(), cursor.clone(), daemon.shutdown_handle());
    // Said only once the lock is held and start-up succeeded: a refused daemon never
    // claims it started.
    let daemon = daemon.on_started(move || {
        if writeln!(Out::lines(), "{line}").is_err() {
            stop.request();
            return;
        }
        follow_job_states(home, follow, stop);
    });
    let rt = crate::daemon::runtime(n)?;
    let exit = rt.block_on(daemon.run());
    // The last changes land after the poller's final read: print them before exiting
    // (not from a home removed under the daemon, which opening the store would make again).
    if ctx.home.root().exists()
        && let Ok(store) = ctx.store()
    {
        print_job_states(&store, &cursor)?;
    }
    match exit? {
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

/// `daemon status`: whether a daemon runs, what it runs, and every daemon of the store.
fn status(ctx: &Ctx, json: bool) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let now = now_ms();
    let lease = ctx.config()?.daemon.lease.0;
    let s = crate::daemon::status_report(&ctx.home, &store.conn(), now, lease)?;
    let mut out = Out::lines();
    if json {
        return out.json(&s);
    }
    match (&s.pid, &s.waiter_pid) {
        (Some(pid), _) => writeln!(out, "daemon running pid {pid}")?,
        (None, Some(pid)) => writeln!(
            out,
            "daemon stopped; `job run --wait` pid {pid} runs its own tree and holds the home until it ends"
        )?,
        (None, None) => writeln!(out, "daemon stopped")?,
    }
    if let Some(up) = s.uptime_ms {
        writeln!(out, "uptime: {}", age(now, now - up))?;
    }
    if let Some(p) = s.parallel {
        writeln!(out, "parallel: {p}")?;
    }
    writeln!(
        out,
        "running: {}  queued: {}",
        s.running_jobs, s.queued_jobs
    )?;
    writeln!(
        out,
        "delegation preflight failures: {}",
        s.delegation_preflight_failures
    )?;
    if let Some(t) = s.last_tick_ms {
        writeln!(out, "last tick: {} ago", age(now, t))?;
    }
    for j in &s.jobs {
        writeln!(
            out,
            "  {:<36} {:<14} {}",
            j.id,
            j.agent,
            age(now, now - j.age_ms)
        )?;
    }
    if s.daemons.is_empty() {
        return Ok(());
    }
    let rows: Vec<Vec<String>> = s
        .daemons
        .iter()
        .map(|d| {
            vec![
                d.id.clone(),
                d.host.clone(),
                d.pid.to_string(),
                d.parallel.to_string(),
                d.running_jobs.to_string(),
                format!("{} ago", age(now, d.heartbeat_ms)),
                d.labels.join(","),
            ]
        })
        .collect();
    writeln!(out, "daemons attached to this store: {}", s.daemons.len())?;
    let headers = [
        "DAEMON",
        "HOST",
        "PID",
        "PARALLEL",
        "RUNNING",
        "HEARTBEAT",
        "LABELS",
    ];
    out.write_all(table(&headers, &rows).as_bytes())?;
    Ok(())
}

/// `job run --wait`: runs an in-process daemon for this tree when no daemon holds the
/// home (otherwise the running one does the work), waits until the run settles or pauses
/// for a human, then prints the final result.
pub(crate) fn wait_for_root(
    ctx: &Ctx,
    root: &str,
    as_json: bool,
    detach_on_interrupt: bool,
) -> anyhow::Result<()> {
    let config = ctx.config()?;
    super::interrupt::count_signals();
    let embedded = match Daemon::new(ctx.home.clone())
        .config(config.clone())
        .hooks(std::sync::Arc::new(crate::chat::ChatHooks))
        .only_root(Some(root.to_string()))
        .spawn()
    {
        Ok(handle) => Some(handle),
        Err(DaemonError::Lock(LockError::Held { .. })) => None,
        Err(e) => return Err(e.into()),
    };
    let mut store = ctx.store()?;
    let mut handled = 0;
    let state = loop {
        let signals = super::interrupt::received();
        if signals > handled {
            handled = signals;
            if detach_on_interrupt {
                // The tree stays queued/running for a daemon; an embedded one dies with
                // this process and the next daemon's recovery settles what it ran.
                say(format_args!(
                    "interrupted: run {root} is left to a daemon (`gitmoot daemon run` continues it)"
                ));
                std::process::exit(super::interrupt::exit_status());
            }
            match signals {
                1 => {
                    say(format_args!(
                        "interrupted: cancelling run {root} (interrupt again to kill its agents now)"
                    ));
                    let killed = store.write(|tx| {
                        crate::engine::kill_root(
                            tx,
                            crate::chat::live_env(&config.orchestrate),
                            root,
                            true,
                        )
                    });
                    if let Err(e) = killed {
                        tracing::warn!("cancelling {root} on interrupt: {e}");
                    }
                }
                2 => {
                    say(format_args!(
                        "interrupted again: killing the agents of run {root}"
                    ));
                    let running = jobs::by_root_in_state(store.conn(), root, JobState::Running)?;
                    let ids: Vec<&str> = running.iter().map(|j| j.id.as_str()).collect();
                    crate::runtime::process::kill_marked(&ids);
                }
                _ => std::process::exit(super::interrupt::exit_status()),
            }
        }
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
    if handled > 0 {
        say(format_args!("run {root} ended {state}"));
        std::process::exit(super::interrupt::exit_status());
    }
    let mut out = Out::lines();
    if as_json {
        out.json(&crate::report::tree_json(&store.conn(), root)?)?;
    } else {
        let last = final_job(&store.conn(), root)?;
        writeln!(out, "{root} {state}")?;
        if let Some(r) = &last.result {
            writeln!(out, "decision: {}", r["decision"].as_str().unwrap_or("?"))?;
            writeln!(out, "summary:  {}", r["summary"].as_str().unwrap_or(""))?;
        }
        if let Some(e) = &last.error {
            writeln!(out, "error:    {e}")?;
        }
    }
    match state {
        RunState::Done => Ok(()),
        RunState::AwaitingHuman => {
            if !as_json {
                writeln!(out, "awaiting a human: see `gitmoot job pending`")?;
            }
            Ok(())
        }
        other => Err(anyhow::anyhow!("run {root} ended {other}")),
    }
}

/// One line on stderr that never panics: after a hang-up the terminal may be gone, and
/// the waiter still has its run to settle.
fn say(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The job whose result is the tree's: the root, or the last of its continuation chain.
fn final_job(conn: &Tx<'_>, root: &str) -> anyhow::Result<Job> {
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

/// The event kinds `daemon run` prints: a job changing state, a run ending.
const STATE_EVENTS: [EventKind; 7] = [
    EventKind::Queued,
    EventKind::Running,
    EventKind::Succeeded,
    EventKind::Failed,
    EventKind::Blocked,
    EventKind::Cancelled,
    EventKind::RunFinished,
];

/// `daemon run`'s foreground log: one line per job state change after the cursor, read
/// from the events table on its own connection (the daemon decides nothing here). When
/// the reader of stdout goes away (`daemon run | head -1`) the daemon is asked to stop,
/// gracefully, as it would be on Ctrl-C.
fn follow_job_states(home: crate::home::Home, shared: Arc<Mutex<i64>>, stop: ShutdownHandle) {
    std::thread::spawn(move || {
        let Ok(store) = crate::store::Store::open_home(&home) else {
            return;
        };
        while print_job_states(&store, &shared).is_ok() {
            std::thread::sleep(Duration::from_millis(250));
        }
        stop.request();
    });
}

/// Prints the state changes after `cursor` and moves it on; a line that could not be
/// written is the error (a store that cannot be read now is retried on the next poll).
fn print_job_states(store: &crate::store::Store, cursor: &Mutex<i64>) -> std::io::Result<()> {
    let Ok(mut at) = cursor.lock() else {
        return Ok(());
    };
    let Ok(upto) = store.events_settled_id(*at) else {
        return Ok(());
    };
    let Ok(mut events) = crate::store::events::since(store.conn(), *at, 500) else {
        return Ok(());
    };
    events.retain(|e| e.id <= upto);
    let mut out = Out::lines();
    for e in &events {
        *at = e.id;
        if STATE_EVENTS.iter().any(|&k| e.is(k)) {
            writeln!(
                out,
                "{} UTC  {:<14} {:<12} {}",
                gitmoot_ui::view::utc_clock(e.ts_ms),
                e.job_id.as_deref().unwrap_or("-"),
                e.kind,
                e.message
            )?;
        }
    }
    Ok(())
}
