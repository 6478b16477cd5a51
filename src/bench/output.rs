//! `bench_output`: four shell agents printing 200 MB each through a real daemon at
//! `--parallel 4`, in this (bench group's own) process. The figures: the process's peak
//! resident memory above its idle resident memory while they print, and the largest stdout
//! record on disk at any moment, sampled every 100 ms.
//!
//! Owns only the measurement; `gitmoot bench` prints it.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::domain::JobState;
use crate::store::jobs;

const AGENTS: usize = 4;
const PRINTED: u64 = 200_000_000;

/// A first line, `PRINTED` bytes of 4 KB lines, then the result.
fn agent_command() -> String {
    format!(
        "cat >/dev/null; echo first; yes \"$(head -c 4000 /dev/zero | tr '\\0' y)\" | head -c {PRINTED}; echo; \
         printf '%s\\n' '{{\"gitmoot_result\":{{\"decision\":\"approved\",\"summary\":\"ok\"}}}}'"
    )
}

pub fn bench_output() -> super::Measured {
    super::in_scratch("output", measure).map_err(|e| super::Failure::new("output.error", e))
}

/// This process's `field` of `/proc/self/status` (`VmRSS`, `VmHWM`), in kB.
fn vm_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The longest file in `dir` now.
fn largest_in(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .max()
        .unwrap_or(0)
}

fn measure(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let (home, mut store) = super::home_with_agent(dir, "bench", &agent_command())?;
    let rt = crate::daemon::runtime(AGENTS).map_err(|e| err(&e))?;
    let roots = super::daemon::submit(&mut store, AGENTS)?;
    let idle = vm_kb("VmRSS").ok_or("no /proc/self/status")?;
    // Writing 5 resets the peak (VmHWM) to the current resident size: the peak read after
    // is the daemon's, not what setting up the home cost.
    std::fs::write("/proc/self/clear_refs", "5").map_err(|e| err(&e))?;
    let done = AtomicBool::new(false);
    let runs = home.root().join("runs");
    let (ran, largest) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut largest = 0;
            while !done.load(Ordering::Relaxed) {
                largest = largest_in(&runs).max(largest);
                std::thread::sleep(Duration::from_millis(100));
            }
            largest
        });
        let ran = super::run_until_idle(&rt, &home, AGENTS);
        done.store(true, Ordering::Relaxed);
        (ran, sampler.join().unwrap_or(0))
    });
    ran?;
    let peak = vm_kb("VmHWM").ok_or("no /proc/self/status")?;
    for root in &roots {
        let job = jobs::require(store.conn(), root).map_err(|e| err(&e))?;
        if job.state != JobState::Succeeded {
            return Err(format!(
                "a printing job ended {}: {:?}",
                job.state, job.error
            ));
        }
    }
    let mb = |kb: u64| format!("{:.1}", kb as f64 / 1024.0);
    Ok(vec![
        (
            "output.printed_mb".into(),
            format!("{AGENTS} x {}", PRINTED / 1_000_000),
        ),
        ("output.idle_rss_mb".into(), mb(idle)),
        (
            "output.peak_rss_above_idle_mb".into(),
            mb(peak.saturating_sub(idle)),
        ),
        (
            "output.largest_record_mib".into(),
            format!("{:.2}", largest as f64 / (1024.0 * 1024.0)),
        ),
    ])
}
