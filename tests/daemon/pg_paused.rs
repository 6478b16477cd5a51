//! A daemon of a shared PostgreSQL store SIGSTOPped past its lease, through the real
//! binary (issue 46): the work its agents finished while it was paused is never run again
//! by the daemon that takes its lease over — it is settled once from that first run, when
//! the paused daemon wakes (SIGCONT) or from its stdout record once it is killed
//! (SIGKILL) — and a job whose agent was still running runs again there, as a lost
//! daemon's job does.

use gitmoot_test_support as support;

use std::path::Path;
use std::process::Child;
use std::time::Duration;

use gitmoot::domain::JobState;
use gitmoot::store::Store;
use support::pg::host;
use support::{spawn_daemon, stop_daemon, wait_until};

use super::pg_recovery::{
    count, daemon_id, effects, job, job_events, open, signal, sleeper, stderr, submit,
};

/// Daemon A paused with finished and unfinished work, and daemon B that took its lease.
struct Paused {
    a: Child,
    a_id: String,
    b: Child,
    store: Store,
    /// An `ask` and a `review` whose agents ended while A was paused.
    finished: [String; 2],
    /// An `implement` whose agent ended while A was paused.
    implement: String,
    /// An `ask` whose first agent was still running when B took A's lease.
    running: String,
}

/// Starts A, has it run four jobs, pauses it while they run, lets three agents finish,
/// then starts B and waits for it to take A's lease over and run the unfinished job again.
fn paused_with_finished_work(dir: &Path, url: &str, log: &Path) -> Paused {
    let a_home = host(dir, "a", url);
    let b_home = host(dir, "b", url);
    sleeper(&a_home, "quick", log, "1");
    // Its first attempt outlives the test; a later one ends at once.
    sleeper(
        &a_home,
        "slow",
        log,
        "$([ \"$GITMOOT_ATTEMPT\" = 1 ] && echo 120 || echo 0)",
    );
    let mut store = open(url);
    let a = spawn_daemon(&a_home, &["--parallel", "4"]);
    let a_id = daemon_id(&mut store, &a);
    let finished = [
        submit(&a_home, "quick", &[]),
        submit(&a_home, "quick", &["--action", "review"]),
    ];
    let implement = submit(&a_home, "quick", &["--action", "implement"]);
    let running = submit(&a_home, "slow", &[]);
    let all = [&finished[0], &finished[1], &implement, &running];
    wait_until("A to start all four", Duration::from_secs(60), || {
        let started = effects(log, "start");
        all.iter()
            .all(|id| started.contains_key(&((*id).clone(), 1)))
    });
    signal(&a, libc::SIGSTOP);
    wait_until(
        "three agents to finish while A is paused",
        Duration::from_secs(30),
        || {
            let ended = effects(log, "end");
            all[..3]
                .iter()
                .all(|id| ended.contains_key(&((*id).clone(), 1)))
        },
    );
    let b = spawn_daemon(&b_home, &["--parallel", "4"]);
    wait_until(
        "B to run the unfinished job again",
        Duration::from_secs(60),
        || job(&mut store, &running).state == JobState::Succeeded,
    );
    assert_eq!(
        job(&mut store, &implement).state,
        JobState::Interrupted,
        "a lost implement waits for its daemon or a human"
    );
    for id in &finished {
        let j = job(&mut store, id);
        let evs = job_events(&mut store, id);
        assert_eq!(
            (j.state, j.attempt, j.daemon_id.as_deref()),
            (JobState::Running, 1, Some(a_id.as_str())),
            "{id}: its agent finished, so B leaves it to A: {evs:?}"
        );
    }
    Paused {
        a,
        a_id,
        b,
        store,
        finished,
        implement,
        running,
    }
}

/// Each of `ids` settled once, succeeded, from its first attempt, whose agent started once.
fn settled_once_from_the_first_run(p: &mut Paused, ids: &[&String], log: &Path) {
    let starts = effects(log, "start");
    for id in ids {
        let j = job(&mut p.store, id);
        let evs = job_events(&mut p.store, id);
        assert_eq!(j.state, JobState::Succeeded, "{id}: {evs:?}");
        assert_eq!(j.attempt, 1, "{id} settled from A's run: {evs:?}");
        assert_eq!(j.daemon_id.as_deref(), Some(p.a_id.as_str()));
        assert_eq!(count(&evs, "succeeded"), 1, "{evs:?}");
        assert_eq!(count(&evs, "failed"), 0, "{evs:?}");
        assert_eq!(count(&evs, "job_requeued"), 0, "{evs:?}");
        let runs: Vec<_> = starts.iter().filter(|((job, _), _)| job == *id).collect();
        assert_eq!(
            runs,
            [(&((*id).clone(), 1), &1)],
            "{id}'s agent started once"
        );
    }
}

/// The job whose agent was still running ran again on B as its next attempt, once.
fn the_running_job_ran_again(p: &mut Paused, log: &Path) {
    let j = job(&mut p.store, &p.running);
    assert_eq!((j.state, j.attempt), (JobState::Succeeded, 2));
    let starts = effects(log, "start");
    assert_eq!(starts.get(&(p.running.clone(), 1)), Some(&1));
    assert_eq!(starts.get(&(p.running.clone(), 2)), Some(&1));
    let evs = job_events(&mut p.store, &p.running);
    assert_eq!(count(&evs, "job_requeued"), 1, "{evs:?}");
    assert_eq!(count(&evs, "succeeded"), 1, "{evs:?}");
}

#[test]
fn a_paused_daemon_s_finished_work_is_settled_once_when_it_wakes_never_run_again() {
    let db = support::pg::database();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("effects.log");
    let mut p = paused_with_finished_work(dir.path(), &db.url(), &log);
    signal(&p.a, libc::SIGCONT);
    let status = p.a.wait().unwrap();
    let a_err = stderr(&mut p.a);
    assert!(!status.success(), "A exits saying its lease was taken over");
    assert!(a_err.contains("lease ran out"), "{a_err}");
    let (finished, implement) = (p.finished.clone(), p.implement.clone());
    settled_once_from_the_first_run(&mut p, &[&finished[0], &finished[1], &implement], &log);
    for id in [&finished[0], &finished[1], &implement] {
        let evs = job_events(&mut p.store, id);
        assert!(
            evs.iter()
                .any(|e| e.kind == "job_recovered" && e.message.starts_with("lease lost")),
            "its events say how it was settled: {evs:?}"
        );
    }
    the_running_job_ran_again(&mut p, &log);
    let evs = job_events(&mut p.store, &p.running);
    assert_eq!(
        count(&evs, "job_settlement_discarded"),
        1,
        "A's cut-off first run of it is discarded: {evs:?}"
    );
    stop_daemon(p.b);
}

#[test]
fn a_paused_daemon_killed_has_its_finished_work_settled_from_its_records_never_run_again() {
    let db = support::pg::database();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("effects.log");
    let mut p = paused_with_finished_work(dir.path(), &db.url(), &log);
    signal(&p.a, libc::SIGKILL);
    p.a.wait().unwrap();
    let finished = p.finished.clone();
    wait_until(
        "B to settle A's finished work from its records",
        Duration::from_secs(60),
        || {
            finished
                .iter()
                .all(|id| job(&mut p.store, id).state == JobState::Succeeded)
        },
    );
    settled_once_from_the_first_run(&mut p, &[&finished[0], &finished[1]], &log);
    for id in &finished {
        let evs = job_events(&mut p.store, id);
        assert_eq!(count(&evs, "job_recovered"), 1, "{evs:?}");
    }
    the_running_job_ran_again(&mut p, &log);
    let starts = effects(&log, "start");
    assert_eq!(
        starts.keys().filter(|(job, _)| *job == p.implement).count(),
        1,
        "the interrupted implement did not run again"
    );
    stop_daemon(p.b);
}
