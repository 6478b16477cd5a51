//! Stopping work from outside, through the real binary: a hang-up of `job run --wait` (and
//! its waiter, live or killed, never listed as a daemon) and
//! `gitmoot daemon stop` in its three ways (default, `--wait`, `--kill`) and its refusals.

use gitmoot_test_support::daemon as daemon_support;
use gitmoot_test_support::{spawn_daemon, wait_until};

use std::process::{Child, Stdio};
use std::time::Duration;

use daemon_support::{TestHome, alive, read_pid, result};
use gitmoot::domain::JobState;

fn signal(pid: u32, sig: i32) {
    // SAFETY: signalling a process this test started.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Waits up to a minute for `child` to exit (killing it if it does not) and says whether it did.
fn exited(child: &mut Child) -> Option<std::process::ExitStatus> {
    let mut status = None;
    daemon_support::wait_until(Duration::from_secs(60), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status
}

/// A shell agent that writes its pid to `pidfile`, then works for `secs` and approves.
fn sleeper(h: &TestHome, name: &str, secs: u32) -> std::path::PathBuf {
    let pidfile = h.file(&format!("{name}.pid"));
    h.shell_agent(
        name,
        &format!(
            "cat >/dev/null\necho $$ > {}\nsleep {secs}\necho '{}'\n",
            pidfile.display(),
            result("approved", "slept")
        ),
    );
    pidfile
}

fn started(pidfile: &std::path::Path) -> i32 {
    wait_until("the agent to start", Duration::from_secs(30), || {
        std::fs::read_to_string(pidfile).is_ok_and(|t| t.ends_with('\n'))
    });
    read_pid(pidfile)
}

/// `n` jobs of a shell agent that works `secs`, a `--parallel 1` daemon on them, and the pid
/// of the first job's agent once it runs.
fn working(h: &TestHome, secs: u32, n: usize) -> (Vec<String>, Child, i32) {
    let pidfile = sleeper(h, "worker", secs);
    let jobs = (0..n)
        .map(|i| h.submit("worker", &format!("job {i}"), &[]))
        .collect();
    let d = spawn_daemon(&h.path(), &["--parallel", "1"]);
    (jobs, d, started(&pidfile))
}

/// A `job run --wait` of a shell agent that works five minutes, and its agent's pid once
/// it runs.
fn waiter(h: &TestHome) -> (Child, i32) {
    let pidfile = sleeper(h, "slow", 300);
    let child = h
        .cmd(&["job", "run", "--agent", "slow", "--wait", "take your time"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (child, started(&pidfile))
}

fn daemon_status(h: &TestHome) -> serde_json::Value {
    serde_json::from_str(&h.ok(&["daemon", "status", "--json"])).unwrap()
}

fn stop(h: &TestHome, args: &[&str]) -> std::process::Output {
    let mut full = vec!["daemon", "stop"];
    full.extend_from_slice(args);
    h.cmd(&full).output().unwrap()
}

/// `daemon stop ARGS`, which must succeed and say in one line that the daemon stopped.
fn stopped(h: &TestHome, args: &[&str]) {
    let out = stop(h, args);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(said.trim_end().lines().count(), 1, "{said}");
    assert!(said.contains("stopped"), "{said}");
}

#[test]
fn a_hang_up_of_a_wait_settles_its_job_terminated_and_leaves_no_daemon_listed() {
    let h = TestHome::new();
    let (mut child, agent) = waiter(&h);
    signal(child.id(), libc::SIGHUP);
    let status = exited(&mut child).expect("the waiter outlived its hang-up");
    assert_eq!(status.code(), Some(129));
    let jobs = daemon_support::TestHome::store(&h);
    let all = gitmoot::store::jobs::list(jobs.conn(), &Default::default()).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].state, JobState::Failed, "{:?}", all[0]);
    let why = all[0].error.clone().unwrap_or_default();
    assert!(why.contains("terminated"), "{why}");
    assert!(
        daemon_support::wait_until(Duration::from_secs(10), || !alive(agent)),
        "agent {agent} outlived the hung-up wait"
    );
    let s = daemon_status(&h);
    assert_eq!(s["running"], false, "{s}");
    assert_eq!(s["daemons"], serde_json::json!([]), "{s}");
}

#[test]
fn a_waiter_live_or_killed_is_never_listed_as_a_daemon() {
    let h = TestHome::new();
    let (mut child, agent) = waiter(&h);
    let s = daemon_status(&h);
    assert_eq!(s["daemons"], serde_json::json!([]), "{s}");
    assert_eq!(s["running"], false, "{s}");
    assert_eq!(s["waiter_pid"], child.id(), "{s}");
    let text = h.ok(&["daemon", "status"]);
    assert!(text.contains("`job run --wait` pid"), "{text}");
    assert!(!text.contains("daemons attached"), "{text}");

    child.kill().unwrap();
    child.wait().unwrap();
    let s = daemon_status(&h);
    assert_eq!(s["daemons"], serde_json::json!([]), "{s}");
    assert_eq!(s["running"], false, "{s}");
    assert_eq!(s["waiter_pid"], serde_json::Value::Null, "{s}");
    // The killed waiter's agent is left behind (its group is the agent's own); end it.
    // SAFETY: signalling the process group of an agent this test started.
    unsafe {
        libc::kill(-agent, libc::SIGKILL);
        libc::kill(agent, libc::SIGKILL);
    }
}

#[test]
fn stopping_with_no_daemon_says_so_in_one_line_and_exits_1() {
    let h = TestHome::new();
    h.ok(&["init"]);
    let out = stop(&h, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no daemon is running"), "{err}");
}

#[test]
fn wait_and_kill_together_are_a_usage_error() {
    let h = TestHome::new();
    let out = stop(&h, &["--wait", "--kill"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // Refused for the pair of flags, not for an unknown verb.
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn a_default_stop_ends_the_daemon_and_claims_nothing_more() {
    let h = TestHome::new();
    h.config("[daemon]\nshutdown_grace = \"1s\"\n");
    let (jobs, mut d, agent) = working(&h, 300, 2);
    let [first, second] = &jobs[..] else { panic!() };
    stopped(&h, &[]);
    // `daemon stop` returns only once the daemon has exited.
    assert!(d.try_wait().unwrap().is_some(), "the daemon still runs");
    assert!(!alive(agent));
    assert_eq!(h.job(first).state, JobState::Failed);
    assert_eq!(h.job(second).state, JobState::Queued);
    assert!(h.job(second).started_ms.is_none());
}

#[test]
fn a_stop_with_wait_lets_the_running_and_the_queued_job_finish() {
    let h = TestHome::new();
    let (jobs, mut d, _) = working(&h, 1, 2);
    let [first, second] = &jobs[..] else { panic!() };
    stopped(&h, &["--wait"]);
    assert_eq!(h.job(first).state, JobState::Succeeded);
    assert_eq!(h.job(second).state, JobState::Succeeded);
    assert!(d.try_wait().unwrap().is_some(), "the daemon still runs");
}

#[test]
fn a_stop_with_kill_terminates_the_running_job_without_the_grace() {
    let h = TestHome::new();
    h.config("[daemon]\nshutdown_grace = \"5m\"\n");
    let (jobs, mut d, agent) = working(&h, 300, 1);
    let job = &jobs[0];
    let began = std::time::Instant::now();
    stopped(&h, &["--kill"]);
    assert!(began.elapsed() < Duration::from_secs(60));
    assert!(exited(&mut d).is_some());
    assert!(!alive(agent));
    let j = h.job(job);
    assert_eq!(j.state, JobState::Failed);
    assert!(j.error.unwrap_or_default().contains("--kill"));
}
