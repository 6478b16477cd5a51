//! The wall-clock bound through the real binary: roots that waited in the queue past
//! `max_delegation_walltime` still run, and only a coordinator's fan-out after the limit is
//! dropped, its tree ending in the graceful finalize.

use gitmoot_test_support::daemon as daemon_support;

use daemon_support::{TestHome, result};
use gitmoot::domain::{JobKind, JobState};
use gitmoot::store::events;

#[test]
fn roots_queued_past_the_wall_clock_limit_still_run_and_only_a_late_fan_out_is_dropped() {
    let h = TestHome::new();
    h.config("[orchestrate]\nmax_delegation_walltime = \"1s\"\n");
    h.shell_agent(
        "coord",
        &format!(
            r#"cat > /dev/null
case "$GITMOOT_JOB_KIND" in
root) sleep 1.2
  echo '{{"gitmoot_result":{{"decision":"approved","summary":"plan","delegations":[{{"id":"late","agent":"sleeper","action":"ask","prompt":"p"}}]}}}}' ;;
*) echo '{}' ;;
esac
"#,
            result("approved", "final")
        ),
    );
    h.shell_agent(
        "sleeper",
        &format!(
            "cat >/dev/null\nsleep 1\necho '{}'\n",
            result("approved", "slept")
        ),
    );
    let coord = h.submit("coord", "plan", &[]);
    let roots: Vec<String> = (0..3)
        .map(|i| h.submit("sleeper", &format!("r{i}"), &[]))
        .collect();
    h.daemon_until_idle(1);

    for root in &roots {
        let job = h.job(root);
        assert_eq!(
            job.state,
            JobState::Succeeded,
            "{root} waited, then ran: {job:?}"
        );
    }
    let tree = h.tree(&coord);
    assert!(
        tree.iter().all(|j| j.kind != JobKind::Leg),
        "the fan-out after the limit was dropped: {tree:?}"
    );
    let finalize = tree.iter().find(|j| j.kind == JobKind::Finalize);
    assert_eq!(
        finalize.map(|j| j.state),
        Some(JobState::Succeeded),
        "{tree:?}"
    );
    let store = h.store();
    let tripped: Vec<_> = events::for_job_or_root(store.conn(), &coord, 0)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "delegation_walltime_exceeded")
        .collect();
    assert_eq!(tripped.len(), 1, "{tripped:?}");
    assert!(
        tripped[0]
            .message
            .contains("not dispatching 1 delegation(s)")
    );
}
