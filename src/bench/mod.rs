//! The bench room: every measurement behind `gitmoot bench`, kept out of the product
//! modules it measures. `parse` (result contract), `settle` (engine store work), `chat`,
//! `daemon`, `activity` (live activity ingestion), `output` (memory and records under chatty agents), `tui` (control room first frame and refresh, and the idle CPU), `forecast` (write jobs'
//! merge forecasts), `worktree` (agents' worktrees read on a generated repository against
//! bare git); `targets` what each figure is judged against; this file
//! selects groups, attaches targets and prints the figures as a Markdown table
//! (`| figure | value | target |`) or JSON.
//!
//! Measures only through the product's public functions; must never reimplement what it
//! measures, and no product module may import from here.

use clap::{Args, ValueEnum};
use serde::Serialize;

pub mod activity;
pub mod chat;
pub mod daemon;
pub mod fleet;
pub mod forecast;
pub mod live;
pub mod output;
pub mod parse;
pub mod scale;
mod scratch_git;
pub mod settle;
mod targets;
pub mod tui;
pub mod worktree;

pub use activity::bench_activity;

use targets::{RATIOS, target};

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::clock::{Clock, SystemClock};
use crate::domain::Capability;
use crate::home::Home;
use crate::runtime::sandbox::Confinement;
use crate::runtime::{Invocation, Stdin, process};
use crate::store::Store;
use crate::store::agents::Agent;

/// A measurement's figures: (figure, value) rows.
pub type Rows = Vec<(String, String)>;

/// What a bench that can fail returns: its rows, or why it measured nothing.
pub type Measured = Result<Rows, Failure>;

/// A bench that could not measure. The table shows it in the row its group has always
/// used (`error`, `daemon.error`, `tui.idle.error`…), so the printed output is unchanged;
/// a caller tells it from a figure by its type, not by the row's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{figure}: {value}")]
pub struct Failure {
    /// The row the table shows it in.
    pub figure: String,
    /// The text shown in the value column (the cause).
    pub value: String,
}

impl Failure {
    pub fn new(figure: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            figure: figure.into(),
            value: value.into(),
        }
    }

    /// The row the table prints for it.
    pub fn row(self) -> (String, String) {
        (self.figure, self.value)
    }
}

/// Runs `f` on a fresh folder in the temp folder (`gitmoot-bench-<tag>-…`), removed after.
fn in_scratch<T>(tag: &str, f: impl FnOnce(&Path) -> T) -> T {
    let dir =
        std::env::temp_dir().join(format!("gitmoot-bench-{tag}-{}", crate::ids::random_hex(6)));
    let _ = std::fs::create_dir_all(&dir);
    let out = f(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The benches' agent: a read-only shell agent that can be asked, running `command`.
fn shell_agent(name: &str, command: &str) -> Agent {
    Agent {
        created_ms: SystemClock.now_ms(),
        ..Agent::shell(name, command)
    }
}

/// A home in `dir` whose store has the benches' agent `name`, running `command`.
fn home_with_agent(dir: &Path, name: &str, command: &str) -> Result<(Home, Store), String> {
    let home = Home::resolve(Some(dir)).map_err(|e| e.to_string())?;
    let store = Store::open_home(&home).map_err(|e| e.to_string())?;
    crate::store::agents::insert(store.conn(), &shell_agent(name, command))
        .map_err(|e| e.to_string())?;
    Ok((home, store))
}

/// A daemon on `rt` at `parallel` running the home's queue until it is idle, as
/// `daemon run --parallel N --until-idle` does.
fn run_until_idle(
    rt: &tokio::runtime::Runtime,
    home: &Home,
    parallel: usize,
) -> Result<(), String> {
    rt.block_on(
        crate::daemon::Daemon::new(home.clone())
            .parallel(Some(parallel))
            .until_idle(true)
            .run(),
    )
    .map(drop)
    .map_err(|e| e.to_string())
}

/// The seeded stores' agent: a shell agent running `true` that can ask and review,
/// registered at time 0 so every seed writes the same rows.
fn seeded_agent(name: &str) -> Agent {
    Agent {
        capabilities: vec![Capability::Ask, Capability::Review],
        created_ms: 0,
        ..Agent::shell(name, "true")
    }
}

/// `sh -c command` through the product's process runner `n` times, one after another
/// (confined by `sandbox` when given): the anchor a daemon-run figure is held against.
async fn sh_runs(
    command: &str,
    stdin: &[u8],
    n: usize,
    sandbox: Option<Confinement>,
) -> Result<Duration, String> {
    let inv = Invocation {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), command.into()],
        env: vec![],
        cwd: None,
        stdin: Stdin::Bytes(stdin.to_vec()),
        sandbox,
    };
    let started = Instant::now();
    for _ in 0..n {
        let kill = tokio::sync::watch::channel(None).1;
        process::run(&inv, None, kill, |_| {})
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(started.elapsed())
}
pub use chat::bench_chat;
pub use daemon::bench_daemon;
pub use parse::bench_parse;
pub use settle::bench_settle;
pub use tui::{bench_tui, idle::bench_idle};

/// One benchmark group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Result contract parser on 1 MiB outputs.
    Parse,
    /// Engine store work to settle one leg.
    Settle,
    /// Chat send throughput and inbox reads.
    Chat,
    /// Daemon overhead per job over a bare process spawn.
    Daemon,
    /// Live activity of a shell agent printing 10,000 lines in a second: none lost, wall
    /// time over the bare run.
    Activity,
    /// Four agents printing 200 MB each: the daemon's peak memory above idle and the
    /// largest stdout record on disk, sampled every 100 ms.
    Output,
    /// Control room first frame and refresh at 100k jobs / 200k messages.
    Tui,
    /// CPU of an idle `gitmoot tui` over 30 s, in a private tmux pane.
    Idle,
    /// The Diff tab on a 20,000-line diff: read from git, opened, scrolled.
    Diff,
    /// The merge forecasts of 8 open write jobs (28 pairs) against bare `git merge-tree`.
    Forecast,
    /// The backend column: jobs/s with 1 daemon on SQLite and 1, 2, 4 on PostgreSQL
    /// (`--pg URL`), claim latency p50/p99, chat sends/s.
    Fleet,
    /// N agents (`--agents`, default 200) streaming 300 lines each over 30 s under one
    /// daemon with a control room open: wall over ideal, records lost, daemon CPU per
    /// record, control room CPU, peak RSS, key-to-screen latency.
    FleetLive,
    /// Agents' worktrees on a generated 3,200-file repository: `job diff`, `worktree list` of
    /// 8 open jobs and the control room's re-read after one job's state change, against bare
    /// git on the same worktrees.
    Worktree,
}

impl Group {
    const ALL: [Group; 13] = [
        Group::Parse,
        Group::Settle,
        Group::Chat,
        Group::Daemon,
        Group::Activity,
        Group::Output,
        Group::Tui,
        Group::Idle,
        Group::Diff,
        Group::Forecast,
        Group::Fleet,
        Group::FleetLive,
        Group::Worktree,
    ];

    /// The group's rows; a failed measurement becomes the row the table shows it in.
    fn run(self) -> anyhow::Result<Rows> {
        let measured = match self {
            Group::Fleet => Ok(fleet::bench_fleet(pg_server())),
            Group::Parse => Ok(bench_parse()),
            Group::Settle => bench_settle(),
            Group::Chat => bench_chat(),
            Group::Daemon => bench_daemon(),
            Group::Activity => bench_activity(),
            Group::Output => output::bench_output(),
            Group::Tui => bench_tui(),
            Group::Idle => bench_idle(&std::env::current_exe()?),
            Group::Diff => tui::diff::bench_diff(),
            Group::Forecast => forecast::bench_forecast(),
            Group::FleetLive => live::bench_fleet_live(),
            Group::Worktree => worktree::bench_worktree(),
        };
        Ok(measured.unwrap_or_else(|f| vec![f.row()]))
    }
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Run one group only.
    #[arg(long, value_enum)]
    pub only: Option<Group>,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
    /// The scaling table instead: the same measures at 10k, 100k and 1M jobs (slow: the
    /// 1M-job history takes minutes to build).
    #[arg(long, conflicts_with = "only")]
    pub scale: bool,
    /// The history sizes of `--scale`, in jobs (comma-separated).
    #[arg(long, value_delimiter = ',', requires = "scale", value_name = "JOBS")]
    pub scale_jobs: Vec<usize>,
    /// A PostgreSQL server (`postgres://…`) the fleet group may create and drop scratch
    /// databases on; sets `$GITMOOT_BENCH_PG`, which a full run passes to each group.
    #[arg(long, value_name = "URL")]
    pub pg: Option<String>,
    /// The fleet-live group's agent count (default 200); sets `$GITMOOT_BENCH_AGENTS`.
    #[arg(long, value_name = "N")]
    pub agents: Option<usize>,
    /// Internal: run `--only`'s group and print its raw (figure, value) pairs as JSON, for
    /// the parent run that gives every group a process of its own.
    #[arg(long, hide = true, requires = "only")]
    pub pairs: bool,
}

/// The PostgreSQL server the fleet group may create scratch databases on.
fn pg_server() -> Option<String> {
    std::env::var("GITMOOT_BENCH_PG")
        .ok()
        .filter(|u| !u.is_empty())
}

/// Runs `group` in a child `gitmoot bench` and returns its raw figures. A group measured
/// in the parent would inherit what the groups before it left behind: after the chat
/// group's 200k messages the process is large, and every fork the daemon group makes then
/// copies those page tables (its spawn cost doubled), so each group gets a fresh process.
fn run_isolated(group: Group) -> anyhow::Result<Vec<(String, String)>> {
    let name = group
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let out = std::process::Command::new(std::env::current_exe()?)
        .args(["bench", "--only", &name, "--pairs"])
        .stderr(std::process::Stdio::inherit())
        .output()?;
    if !out.status.success() {
        anyhow::bail!("bench group {name} exited with {}", out.status);
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// One measured figure with the target it answers to, and, where the machine sets the
/// limit, the anchor measured in the same run and the figure's ratio to it.
#[derive(Debug, Serialize)]
pub(crate) struct Figure {
    pub group: Group,
    /// The store the figure was measured on: `sqlite`, `postgres`, or `-` where no store
    /// takes part (the parser).
    pub backend: &'static str,
    pub figure: String,
    pub value: String,
    pub target: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Anchored>,
}

/// A figure held against the machine's own limit.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Anchored {
    /// The anchor's figure name (`daemon.sh_true_spawn_ms`, …).
    pub anchor: &'static str,
    pub anchor_value: f64,
    /// figure ÷ anchor.
    pub ratio: f64,
    /// What the ratio must be (`<= 1.0`, `>= 0.3`).
    pub ratio_target: &'static str,
    pub meets_target: bool,
}

/// Where a figure was measured: the fleet group names its backend, the parser uses no
/// store, every other group measures on a SQLite home.
fn backend(group: Group, figure: &str) -> &'static str {
    match group {
        Group::Parse | Group::Diff => "-",
        Group::Fleet if figure.starts_with("fleet.postgres") => "postgres",
        _ => "sqlite",
    }
}

/// The leading number of a figure's value (`"1.23 (median of 7)"` → 1.23).
fn leading_number(value: &str) -> Option<f64> {
    value.split_whitespace().next()?.parse().ok()
}

/// Attaches each ratio whose figure and anchor were both measured, and writes it into
/// the value so the Markdown table shows it too.
fn attach_anchors(figures: &mut [Figure]) {
    for (figure, anchor, ratio_target, bound, at_most) in RATIOS {
        let Some(a) = figures
            .iter()
            .find(|f| f.figure == anchor)
            .and_then(|f| leading_number(&f.value))
        else {
            continue;
        };
        let Some(f) = figures.iter_mut().find(|f| f.figure == figure) else {
            continue;
        };
        let Some(v) = leading_number(&f.value).filter(|_| a > 0.0) else {
            continue;
        };
        let ratio = v / a;
        f.value = format!("{} (anchor {anchor} {a}; ratio {ratio:.2}x)", f.value);
        f.anchor = Some(Anchored {
            anchor,
            anchor_value: a,
            ratio,
            ratio_target,
            meets_target: if at_most {
                ratio <= bound
            } else {
                ratio >= bound
            },
        });
    }
}

/// Runs the benches `a` asks for; the figures go to `out`.
pub fn run(a: BenchArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if let Some(url) = &a.pg {
        crate::store::Location::parse(url)?;
        // SAFETY: set before any thread of the bench starts.
        unsafe { std::env::set_var("GITMOOT_BENCH_PG", url) };
    }
    if let Some(n) = a.agents {
        if n == 0 {
            return Err(crate::Invalid("--agents must be at least 1".into()).into());
        }
        // SAFETY: set before any thread of the bench starts.
        unsafe { std::env::set_var("GITMOOT_BENCH_AGENTS", n.to_string()) };
    }
    if a.scale {
        return run_scale(&a, out);
    }
    let groups: Vec<Group> = match a.only {
        Some(g) => vec![g],
        None => Group::ALL.to_vec(),
    };
    if a.pairs {
        let pairs = match a.only {
            Some(g) => g.run()?,
            None => Vec::new(),
        };
        writeln!(out, "{}", serde_json::to_string(&pairs)?)?;
        return Ok(());
    }
    let load_before = loadavg();
    let mut figures = Vec::new();
    for group in groups {
        let pairs = if a.only.is_some() {
            group.run()?
        } else {
            run_isolated(group)?
        };
        for (figure, value) in pairs {
            figures.push(Figure {
                group,
                backend: backend(group, &figure),
                target: target(&figure),
                figure,
                value,
                anchor: None,
            });
        }
    }
    attach_anchors(&mut figures);
    if a.json {
        return write_json(out, &figures, &load_before);
    }
    writeln!(out, "| figure | backend | value | target |")?;
    writeln!(out, "|---|---|---|---|")?;
    for f in &figures {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            f.figure, f.backend, f.value, f.target
        )?;
    }
    Ok(())
}

fn run_scale(a: &BenchArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let sizes = if a.scale_jobs.is_empty() {
        scale::SIZES.to_vec()
    } else {
        a.scale_jobs.clone()
    };
    if let Some(bad) = sizes.iter().find(|&&n| n < 20) {
        return Err(crate::invalid!("--scale-jobs {bad}: a history needs at least 20 jobs").into());
    }
    let figures = scale::bench_scale(&std::env::current_exe()?, &sizes);
    if a.json {
        let rows: Vec<_> = figures
            .iter()
            .map(|(figure, value)| serde_json::json!({"figure": figure, "value": value}))
            .collect();
        return write_json(out, &rows, "");
    }
    write!(out, "{}", scale::table(&sizes, &figures))?;
    Ok(())
}

/// The load average over 1, 5 and 15 minutes (`/proc/loadavg`), empty where unreadable.
fn loadavg() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--json`: the figures with the machine they ran on and its load before and after, which
/// says how far to trust them.
fn write_json(
    out: &mut dyn Write,
    figures: &impl Serialize,
    load_before: &str,
) -> anyhow::Result<()> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "figures": figures,
            "machine": {"cores": cores, "cpu": model},
            "loadavg_before": load_before,
            "loadavg": loadavg(),
        }))?
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(name: &str, value: &str) -> Figure {
        Figure {
            group: Group::Daemon,
            backend: backend(Group::Daemon, name),
            figure: name.into(),
            value: value.into(),
            target: target(name),
            anchor: None,
        }
    }

    #[test]
    fn a_figure_is_held_against_its_anchor_from_the_same_run() {
        let mut figures = vec![
            figure("daemon.sh_true_spawn_ms", "0.600"),
            figure("daemon.overhead_per_job_ms", "0.450"),
            figure("chat.send.per_second", "20000"),
        ];
        attach_anchors(&mut figures);
        let a = figures[1].anchor.clone().unwrap();
        assert_eq!(a.anchor, "daemon.sh_true_spawn_ms");
        assert!((a.ratio - 0.75).abs() < 1e-9 && a.meets_target);
        assert!(
            figures[1].value.contains("ratio 0.75x"),
            "{}",
            figures[1].value
        );
        assert!(figures[2].anchor.is_none(), "no anchor measured, no ratio");
    }
}
