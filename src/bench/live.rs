//! `bench_fleet_live`: N shell agents, each printing L lines over S seconds, under one
//! `gitmoot daemon run` process with a control room (`gitmoot tui`, attached) open in a
//! private tmux pane. What it reports is what an operator of a streaming fleet pays: the
//! fleet's wall time over the ideal (S), records lost, the daemon's CPU per stored record,
//! the control room's CPU while the fleet streams, both processes' peak RSS, and how long a
//! key takes to change the screen (keys sent through tmux, the screen polled).
//!
//! Owns only the measurement; reads `/proc` and drives the pane, never the product's
//! internals beyond submitting the jobs and counting the records.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::tui::idle::{Pane, cpu_ticks};
use crate::domain::JobState;
use crate::store::{Store, activity, jobs};

/// The fleet's shape: `agents` agents, each printing `lines` lines over `seconds`.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub agents: usize,
    pub lines: usize,
    pub seconds: f64,
}

impl Shape {
    /// From `$GITMOOT_BENCH_AGENTS` (set by `gitmoot bench --agents N`), else 200 agents;
    /// 300 lines over 30 s each.
    pub fn from_env() -> Self {
        let agents = std::env::var("GITMOOT_BENCH_AGENTS")
            .ok()
            .and_then(|n| n.parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(200);
        Shape {
            agents,
            lines: 300,
            seconds: 30.0,
        }
    }
}

/// How long the fleet may take before the bench gives up on it.
const GRACE: Duration = Duration::from_secs(60);
/// The gap between key presses while the fleet streams.
const KEY_GAP: Duration = Duration::from_millis(400);

/// The agent: perl (essential on every Debian-like system) prints a line, sleeps, and so on,
/// with no process per line, then the result.
fn agent_command(s: Shape) -> String {
    let gap = s.seconds / s.lines as f64;
    format!(
        "perl -e '$|=1; for my $i (1..{lines}) {{ print \"step $i: read src/module_$i.rs and ran the focused tests\\n\"; select(undef,undef,undef,{gap:.4}) }} \
         print \"{{\\\"gitmoot_result\\\":{{\\\"decision\\\":\\\"approved\\\",\\\"summary\\\":\\\"ok\\\"}}}}\\n\"'",
        lines = s.lines
    )
}

pub fn bench_fleet_live() -> super::Measured {
    let shape = Shape::from_env();
    super::in_scratch("live", |dir| measure(dir, shape))
        .map_err(|e| super::Failure::new("fleet_live.error", e))
}

/// A process's peak resident set (`VmHWM`), in MB.
fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn clock_hz() -> f64 {
    // SAFETY: sysconf only reads a system constant.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as f64
}

/// The daemon, as its own process (its CPU and memory are then its own).
fn spawn_daemon(exe: &Path, home: &Path, parallel: usize) -> Result<Child, String> {
    Command::new(exe)
        .arg("--home")
        .arg(home)
        .args(["daemon", "run", "--parallel", &parallel.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the daemon: {e}"))
}

/// The screen rows holding the selection bar: a key that moves the selection changes them,
/// and streaming data never does.
fn selection_rows(screen: &str) -> Vec<usize> {
    screen
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains('▌'))
        .map(|(i, _)| i)
        .collect()
}

/// Presses `j` and `k` by turns until `until` or until `done` says so, timing each press to
/// the screen's change.
fn key_latencies(pane: &Pane, until: Instant, mut done: impl FnMut() -> bool) -> Vec<Duration> {
    let mut out = Vec::new();
    let mut down = true;
    while Instant::now() + KEY_GAP < until && !done() {
        let Ok(before) = pane.capture() else { break };
        let rows = selection_rows(&before);
        let sent = Instant::now();
        if pane.keys(&[if down { "j" } else { "k" }]).is_err() {
            break;
        }
        down = !down;
        while sent.elapsed() < Duration::from_secs(2) {
            match pane.capture() {
                Ok(s) if selection_rows(&s) != rows => {
                    out.push(sent.elapsed());
                    break;
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(2)),
                Err(_) => break,
            }
        }
        std::thread::sleep(KEY_GAP);
    }
    out.sort_unstable();
    out
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .map_or(0.0, |d| d.as_secs_f64() * 1_000.0)
}

fn measure(dir: &Path, s: Shape) -> Result<Vec<(String, String)>, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let exe = std::env::current_exe().map_err(|e| err(&e))?;
    std::fs::write(dir.join("config.toml"), "[daemon]\ntick = \"250ms\"\n").map_err(|e| err(&e))?;
    let (_, mut store) = super::home_with_agent(dir, "streamer", &agent_command(s))?;
    let mut daemon = spawn_daemon(&exe, dir, s.agents)?;
    let pane = Pane::start(&[
        exe.display().to_string(),
        "--home".into(),
        dir.display().to_string(),
        "tui".into(),
        "--no-daemon".into(),
    ])?;
    let measured = run_fleet(&mut store, &pane, daemon.id(), s);
    drop(pane);
    // SAFETY: a plain signal to the daemon this bench started.
    unsafe { libc::kill(daemon.id() as i32, libc::SIGTERM) };
    let _ = daemon.wait();
    measured
}

fn run_fleet(
    store: &mut Store,
    pane: &Pane,
    daemon: u32,
    s: Shape,
) -> Result<Vec<(String, String)>, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    std::thread::sleep(Duration::from_secs(2));
    let room = pane.pid()?;
    pane.keys(&["2"])?;
    let (room0, daemon0) = (cpu_ticks(room)?, cpu_ticks(daemon)?);
    let started = Instant::now();
    let ids = super::daemon::submit_as(store, "streamer", s.agents)?;
    let streaming = started + Duration::from_secs_f64(s.seconds);
    // Keys pressed while the daemon starts the whole fleet at once compete with N process
    // starts on the machine's cores; they are reported apart from the streaming figure.
    let all_running = || {
        jobs::count_state(store.conn(), JobState::Running).unwrap_or(0) >= s.agents as u64
            || jobs::count_state(store.conn(), JobState::Succeeded).unwrap_or(0) > 0
    };
    let starting = key_latencies(pane, streaming, all_running);
    let latencies = key_latencies(pane, streaming, || false);
    let room_cpu = (cpu_ticks(room)? - room0) as f64 / clock_hz();
    let window = started.elapsed().as_secs_f64();
    let deadline = streaming + GRACE;
    let wall = loop {
        let done = jobs::count_state(store.conn(), JobState::Succeeded).map_err(|e| err(&e))?;
        if done >= s.agents as u64 {
            break started.elapsed();
        }
        if Instant::now() > deadline {
            return Err(format!("{done} of {} jobs ended in time", s.agents));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let daemon_cpu = (cpu_ticks(daemon)? - daemon0) as f64 / clock_hz();
    let mut records = 0u64;
    for id in &ids {
        records += activity::of_job(store.conn(), id)
            .map_err(|e| err(&e))?
            .map_or(0, |a| a.records);
    }
    let expected = (s.agents * (s.lines + 1)) as u64;
    let mb = |pid| peak_rss_mb(pid).map_or("-".into(), |m| format!("{m:.1}"));
    Ok(vec![
        ("fleet_live.agents".into(), s.agents.to_string()),
        ("fleet_live.lines_per_agent".into(), s.lines.to_string()),
        (
            "fleet_live.wall_over_ideal".into(),
            format!("{:.2}", wall.as_secs_f64() / s.seconds),
        ),
        (
            "fleet_live.records_lost".into(),
            expected.saturating_sub(records).to_string(),
        ),
        (
            "fleet_live.daemon_cpu_per_record_us".into(),
            format!("{:.1}", daemon_cpu * 1e6 / records.max(1) as f64),
        ),
        (
            "fleet_live.room_cpu_percent".into(),
            format!("{:.1}", room_cpu / window * 100.0),
        ),
        ("fleet_live.daemon_peak_rss_mb".into(), mb(daemon)),
        ("fleet_live.room_peak_rss_mb".into(), mb(room)),
        ("fleet_live.keys_timed".into(), latencies.len().to_string()),
        (
            "fleet_live.key_to_screen_p50_ms".into(),
            format!("{:.0}", percentile(&latencies, 0.5)),
        ),
        (
            "fleet_live.key_to_screen_p90_ms".into(),
            format!("{:.0}", percentile(&latencies, 0.9)),
        ),
        (
            "fleet_live.key_to_screen_max_ms".into(),
            format!("{:.0}", percentile(&latencies, 1.0)),
        ),
        (
            "fleet_live.keys_timed_while_starting".into(),
            starting.len().to_string(),
        ),
        (
            "fleet_live.key_to_screen_while_starting_max_ms".into(),
            format!("{:.0}", percentile(&starting, 1.0)),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selection_rows_ignore_everything_but_the_bar() {
        let a = "title\n▌ one\n  two\n";
        let b = "title changed\n  one\n▌ two\n";
        assert_eq!(selection_rows(a), [1]);
        assert_eq!(selection_rows(b), [2]);
        assert_eq!(selection_rows("x\n▌ one 12s\n"), selection_rows(a));
    }
}
