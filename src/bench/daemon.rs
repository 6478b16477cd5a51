//! `bench_daemon`: trivial shell jobs through a real daemon on a throwaway home, against
//! `sh -c true` spawned the same way in the same process — the daemon's own cost per job
//! (claim, prompt file, pid record, contract parse, settle) is the difference — and
//! against a bare spawn with nothing of ours around it, the machine's own limit. Each
//! pass also reports the CPU it used per job (ours and the jobs'), next to a bare spawn's,
//! and next to the floor no job can go below: `sh -c true` through the runner (its pipes,
//! its cgroup, the guard that outlives the daemon), bare and under a read-only agent's
//! confinement.
//!
//! Owns only the measurement; `gitmoot bench` prints it.

use std::time::{Duration, Instant};

use crate::clock::SystemClock;
use crate::domain::{Action, AutonomyPolicy, JobState, RuntimeKind};
use crate::engine::{SubmitRoot, submit_root};
use crate::runtime::sandbox;
use crate::store::{Store, jobs};

pub(super) const AGENT_COMMAND: &str =
    r#"printf '%s\n' '{"gitmoot_result":{"decision":"approved","summary":"ok"}}'"#;

/// 1,000 jobs at parallel 1 (the overhead figure) and at parallel 4 (throughput).
pub fn bench_daemon() -> super::Measured {
    bench_daemon_with(1_000)
}

/// The same with `n` jobs per pass.
pub(crate) fn bench_daemon_with(n: usize) -> super::Measured {
    super::in_scratch("daemon", |dir| measure(dir, n))
        .map_err(|e| super::Failure::new("daemon.error", e))
}

fn measure(dir: &std::path::Path, n: usize) -> Result<Vec<(String, String)>, String> {
    let (home, mut store) = super::home_with_agent(dir, "bench", AGENT_COMMAND)?;
    // Each pass runs on the runtime `daemon run --parallel N` builds; the anchor on the
    // parallel-1 one.
    let runtime = |parallel| crate::daemon::runtime(parallel).map_err(|e| e.to_string());
    let anchor_rt = runtime(1)?;
    let bare_cpu = cpu_ms();
    let bare = bare_spawns(n)?;
    let bare_cpu = cpu_ms() - bare_cpu;
    let runner_cpu = cpu_ms();
    let spawn = anchor_rt.block_on(super::sh_runs("true", b"prompt", n, None))?;
    let runner_cpu = (cpu_ms() - runner_cpu) / n as f64;
    let confined_cpu = confined_spawn_cpu(&anchor_rt, dir, n)?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let bare_ms = ms(bare) / n as f64;
    let bare_cpu = bare_cpu / n as f64;
    let to_bare = |cpu: f64| format!("{cpu:.3} ({:.2}x bare spawn CPU)", cpu / bare_cpu);
    let mut out = vec![
        ("daemon.jobs".to_string(), n.to_string()),
        ("daemon.bare_spawn_ms".into(), format!("{bare_ms:.3}")),
        ("daemon.bare_spawn_cpu_ms".into(), format!("{bare_cpu:.3}")),
        ("daemon.runner_spawn_cpu_ms".into(), to_bare(runner_cpu)),
        (
            "daemon.confined_spawn_cpu_ms".into(),
            confined_cpu.map_or_else(|| "n/a (no Landlock here)".into(), to_bare),
        ),
        (
            "daemon.spawn_ceiling_jobs_per_s".into(),
            format!("{:.0} ({cores} cores)", cores as f64 * 1_000.0 / bare_ms),
        ),
        (
            "daemon.sh_true_spawn_ms".into(),
            format!("{:.3}", ms(spawn) / n as f64),
        ),
    ];
    for parallel in [1usize, 4] {
        submit(&mut store, n)?;
        let rt = runtime(parallel)?;
        let cpu = cpu_ms();
        let started = Instant::now();
        super::run_until_idle(&rt, &home, parallel)?;
        let took = started.elapsed();
        let cpu = cpu_ms() - cpu;
        let succeeded =
            jobs::count_state(store.conn(), JobState::Succeeded).map_err(|e| e.to_string())?;
        out.push((
            format!("daemon.parallel{parallel}.jobs_per_s"),
            format!("{:.0}", n as f64 / took.as_secs_f64()),
        ));
        out.push((
            format!("daemon.parallel{parallel}.cpu_ms_per_job"),
            format!("{:.3}", cpu / n as f64),
        ));
        if parallel == 1 {
            out.push((
                "daemon.overhead_per_job_ms".into(),
                format!("{:.3}", (ms(took) - ms(spawn)) / n as f64),
            ));
        }
        out.push((
            format!("daemon.parallel{parallel}.succeeded_total"),
            succeeded.to_string(),
        ));
    }
    Ok(out)
}

/// `sh -c true` started and waited for `n` times with nothing of ours around it (the
/// standard library's spawn, no pipes, no supervision): the machine's own cost of a
/// process, and with the core count the most trivial jobs any supervisor could run a
/// second here.
fn bare_spawns(n: usize) -> Result<Duration, String> {
    let started = Instant::now();
    for _ in 0..n {
        std::process::Command::new("/bin/sh")
            .args(["-c", "true"])
            .status()
            .map_err(|e| format!("spawning sh: {e}"))?;
    }
    Ok(started.elapsed())
}

/// CPU per `sh -c true` through the runner `n` times under the confinement a read-only
/// shell agent gets (Landlock and the read-only mount view, its own temporary folder and
/// `/dev` writable, its cgroup): what a confined job costs before the daemon does anything
/// for it. `None` where the kernel cannot confine.
fn confined_spawn_cpu(
    rt: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    n: usize,
) -> Result<Option<f64>, String> {
    let tmp = dir.join("confined-tmp");
    std::fs::create_dir_all(&tmp).map_err(|e| format!("making {}: {e}", tmp.display()))?;
    let Some(paths) =
        sandbox::writable(AutonomyPolicy::ReadOnly, RuntimeKind::Shell, &[], &tmp, &[])
            .filter(|_| sandbox::enforceable())
    else {
        return Ok(None);
    };
    let cpu = cpu_ms();
    let confinement = Some(sandbox::Confinement::new(&paths, None));
    rt.block_on(super::sh_runs("true", b"prompt", n, confinement))?;
    Ok(Some((cpu_ms() - cpu) / n as f64))
}

/// CPU time (user + system) this process and its waited-for children used so far, in
/// ms: unlike wall time it barely moves when other work shares the machine, so it shows
/// what a job costs even on a busy one.
fn cpu_ms() -> f64 {
    let used = |who| {
        // SAFETY: getrusage(2) fills the zeroed struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let t = |tv: libc::timeval| tv.tv_sec as f64 * 1_000.0 + tv.tv_usec as f64 / 1_000.0;
        t(u.ru_utime) + t(u.ru_stime)
    };
    used(libc::RUSAGE_SELF) + used(libc::RUSAGE_CHILDREN)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

/// Queues `n` trivial root jobs for the `bench` agent in one transaction; returns their ids.
pub(super) fn submit(store: &mut Store, n: usize) -> Result<Vec<String>, String> {
    submit_as(store, "bench", n)
}

/// Queues `n` root asks for `agent` in one transaction; returns their ids.
pub(super) fn submit_as(store: &mut Store, agent: &str, n: usize) -> Result<Vec<String>, String> {
    store
        .write(|tx| {
            (0..n)
                .map(|i| {
                    submit_root(
                        tx,
                        &SystemClock,
                        SubmitRoot::new(agent, Action::Ask, format!("bench job {i}"), "bench"),
                    )
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_small_pass_runs_every_job() {
        let out = super::bench_daemon_with(20).expect("a small pass measures");
        let get = |k: &str| out.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(
            get("daemon.parallel1.succeeded_total").as_deref(),
            Some("20")
        );
        assert_eq!(
            get("daemon.parallel4.succeeded_total").as_deref(),
            Some("40")
        );
        let cpu = |k: &str| {
            let v = get(k).unwrap_or_else(|| panic!("{k} is reported"));
            v.split_whitespace()
                .next()
                .and_then(|n| n.parse::<f64>().ok())
        };
        assert!(cpu("daemon.runner_spawn_cpu_ms").is_some_and(|ms| ms > 0.0));
        let confined = cpu("daemon.confined_spawn_cpu_ms");
        assert_eq!(
            confined.is_some(),
            crate::runtime::sandbox::enforceable(),
            "a confined figure exactly where the kernel confines"
        );
        assert!(confined.is_none_or(|ms| ms > 0.0));
    }
}
