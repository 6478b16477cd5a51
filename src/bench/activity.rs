//! `bench_activity`: a shell agent printing 10,000 lines over about a second, run once bare
//! through the process runner and once as a job through a real daemon that records its
//! activity live. The figures: records stored (none lost up to the per-job cap) and the
//! job's wall time over the bare run.
//!
//! Owns only the measurement; `gitmoot bench` prints it.

use std::time::Duration;

use crate::clock::SystemClock;
use crate::domain::{Action, JobState};
use crate::engine::{SubmitRoot, submit_root};
use crate::store::activity::{self, MAX_RECORDS};
use crate::store::jobs;

/// `lines` lines in 100 bursts 10 ms apart, then the result.
fn agent_command(lines: usize) -> String {
    format!(
        "awk 'BEGIN {{ for (b = 0; b < 100; b++) {{ for (i = 0; i < {per}; i++) printf \"line %d\\n\", b * {per} + i; \
         fflush(); system(\"sleep 0.01\") }} }}'; \
         printf '%s\\n' '{{\"gitmoot_result\":{{\"decision\":\"approved\",\"summary\":\"ok\"}}}}'",
        per = lines / 100
    )
}

/// 10,000 lines.
pub fn bench_activity() -> super::Measured {
    bench_activity_with(10_000)
}

/// The same with `lines` lines (a multiple of 100).
pub(crate) fn bench_activity_with(lines: usize) -> super::Measured {
    super::in_scratch("activity", |dir| measure(dir, lines))
        .map_err(|e| super::Failure::new("activity.error", e))
}

fn measure(dir: &std::path::Path, lines: usize) -> Result<Vec<(String, String)>, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let command = agent_command(lines);
    let (home, mut store) = super::home_with_agent(dir, "chatty", &command)?;
    // As `daemon run --parallel 1` builds it.
    let rt = crate::daemon::runtime(1).map_err(|e| err(&e))?;
    // The bare figure is the best of three runs (one before and two after the job's), so
    // a cold first start does not flatter the daemon.
    let mut bare = rt.block_on(super::sh_runs(&command, b"talk", 1, None))?;
    let root = store
        .write(|tx| {
            submit_root(
                tx,
                &SystemClock,
                SubmitRoot::new("chatty", Action::Ask, "talk", "bench"),
            )
        })
        .map_err(|e| err(&e))?;
    super::run_until_idle(&rt, &home, 1)?;
    for _ in 0..2 {
        bare = bare.min(rt.block_on(super::sh_runs(&command, b"talk", 1, None))?);
    }
    let job = jobs::require(store.conn(), &root).map_err(|e| err(&e))?;
    if job.state != JobState::Succeeded {
        return Err(format!(
            "the chatty job ended {}: {:?}",
            job.state, job.error
        ));
    }
    let wall = Duration::from_millis(
        (job.finished_ms.unwrap_or(0) - job.started_ms.unwrap_or(0)).max(0) as u64,
    );
    let info = activity::of_job(store.conn(), &root)
        .map_err(|e| err(&e))?
        .unwrap_or_default();
    let printed = lines as u64 + 1;
    // Up to the cap every line is a record; at the cap one record says the rest was cut.
    let expected = printed.min(MAX_RECORDS - 1) + u64::from(printed >= MAX_RECORDS);
    let overhead = (wall.as_secs_f64() / bare.as_secs_f64() - 1.0) * 100.0;
    Ok(vec![
        ("activity.lines_printed".into(), printed.to_string()),
        ("activity.records_stored".into(), info.records.to_string()),
        (
            "activity.records_lost".into(),
            expected.saturating_sub(info.records).to_string(),
        ),
        (
            "activity.bare_run_ms".into(),
            format!("{:.0}", bare.as_secs_f64() * 1000.0),
        ),
        (
            "activity.job_wall_ms".into(),
            format!("{:.0}", wall.as_secs_f64() * 1000.0),
        ),
        ("activity.overhead_percent".into(), format!("{overhead:.1}")),
    ])
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_small_pass_stores_every_line() {
        let out = super::bench_activity_with(1_000).expect("a small pass measures");
        let get = |k: &str| out.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("activity.records_stored").as_deref(), Some("1001"));
        assert_eq!(get("activity.records_lost").as_deref(), Some("0"));
    }
}
