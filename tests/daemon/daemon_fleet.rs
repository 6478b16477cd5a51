//! Issue 18's fleet rules on a real store: the daemon registry (`daemon status` lists
//! every live daemon), leases (a daemon whose heartbeat stops has its running jobs
//! recovered by another; a daemon that lost its lease stops running anything) and host
//! labels (`job run --on LABEL` runs only on a daemon carrying the label).

use gitmoot_test_support as support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{
    configured_home, gitmoot, job_state as state, json, shell_agent, spawn_daemon, stdout,
    stop_daemon, texts, wait_until,
};

const WAIT: Duration = Duration::from_secs(60);

const OK_AGENT: &str =
    r#"cat >/dev/null; echo '{"gitmoot_result": {"decision": "approved", "summary": "ok"}}'"#;

/// A home whose daemons beat every third of a one-second lease.
fn home(dir: &Path) -> std::path::PathBuf {
    let home = configured_home(dir, "h", "[daemon]\ntick = \"100ms\"\nlease = \"1s\"\n");
    shell_agent(&home, "worker", OK_AGENT, &[]);
    home
}

fn submit(home: &Path, extra: &[&str]) -> String {
    let mut args = vec!["job", "run", "--agent", "worker", "--json"];
    args.extend_from_slice(extra);
    args.push("do the thing");
    json(home, &args)["id"].as_str().unwrap().to_string()
}

fn sql(home: &Path, statements: &str) {
    let conn = rusqlite::Connection::open(home.join("gitmoot.db")).unwrap();
    conn.busy_timeout(Duration::from_secs(30)).unwrap();
    conn.execute_batch(statements).unwrap();
}

#[test]
fn a_pinned_job_waits_for_a_daemon_that_carries_its_label() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    let pinned = submit(&home, &["--on", "gpu"]);
    let free = submit(&home, &[]);
    let plain = spawn_daemon(&home, &[]);
    wait_until("the unpinned job", WAIT, || {
        state(&home, &free) == "succeeded"
    });
    // Several ticks later the pinned one is still waiting for its label.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(state(&home, &pinned), "queued");
    let out = gitmoot(&home)
        .args(["job", "run", "--agent", "worker", "--on", "gpu", "again"])
        .output()
        .unwrap();
    let hint = String::from_utf8_lossy(&out.stderr);
    assert!(hint.contains("waits for a daemon labelled gpu"), "{hint}");
    stop_daemon(plain);
    stdout(
        &home,
        &["daemon", "run", "--labels", "gpu,fast", "--until-idle"],
    );
    assert_eq!(state(&home, &pinned), "succeeded");
    for bad in [
        vec!["job", "run", "--agent", "worker", "--on", "no spaces", "x"],
        vec!["daemon", "run", "--labels", "gpu,bad label"],
    ] {
        let out = gitmoot(&home).args(&bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: host label"), "{err}");
    }
}

#[test]
fn a_daemon_whose_lease_ran_out_has_its_running_job_recovered_by_a_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    // Pinned to a label the live daemon lacks, so only the takeover can settle it.
    let orphan = submit(&home, &["--on", "elsewhere"]);
    let live = spawn_daemon(&home, &["--parallel", "3"]);
    wait_until("the live daemon in the registry", WAIT, || {
        json(&home, &["daemon", "status", "--json"])["daemons"]
            .as_array()
            .is_some_and(|d| d.len() == 1)
    });
    let status = json(&home, &["daemon", "status", "--json"]);
    let me = &status["daemons"][0];
    assert_eq!(me["pid"], live.id() as u64, "{status}");
    assert_eq!(me["parallel"], 3, "{status}");
    // A daemon on another host claimed the job and then went silent.
    sql(
        &home,
        &format!(
            "INSERT INTO daemons(id, host, pid, parallel, labels, started_ms, heartbeat_ms)
                 VALUES ('d-gone', 'other-host', 4242, 4, 'elsewhere', 1, 1);
             UPDATE jobs SET state = 'running', daemon_id = 'd-gone', started_ms = 1
                 WHERE id = '{orphan}';"
        ),
    );
    wait_until("the takeover", WAIT, || state(&home, &orphan) != "running");
    // An ask whose daemon was lost runs again (issue 25), here waiting for its label.
    assert_eq!(state(&home, &orphan), "queued");
    let shown = json(&home, &["job", "show", &orphan, "--json"]);
    assert_eq!(shown["attempt"], 2, "{shown}");
    assert!(shown["error"].is_null(), "{shown}");
    let events = json(&home, &["job", "events", &orphan, "--json"]);
    let requeued: Vec<&Value> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "job_requeued")
        .collect();
    assert_eq!(requeued.len(), 1, "{events}");
    let why = requeued[0]["message"].as_str().unwrap();
    assert!(
        why.starts_with("lease lost") && why.contains("d-gone"),
        "{events}"
    );
    let status = json(&home, &["daemon", "status", "--json"]);
    let ids = texts(&status["daemons"], "id");
    assert!(!ids.contains(&"d-gone"), "{status}");
    stop_daemon(live);
    let listed = json(&home, &["daemon", "status", "--json"]);
    assert_eq!(
        listed["daemons"],
        Value::Array(vec![]),
        "a clean exit deregisters"
    );
    stdout(
        &home,
        &["daemon", "run", "--labels", "elsewhere", "--until-idle"],
    );
    assert_eq!(state(&home, &orphan), "succeeded");
}

#[test]
fn a_daemon_that_lost_its_lease_stops_instead_of_running_on() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    let mut d = spawn_daemon(&home, &[]);
    wait_until("the daemon in the registry", WAIT, || {
        json(&home, &["daemon", "status", "--json"])["daemons"]
            .as_array()
            .is_some_and(|d| d.len() == 1)
    });
    // Another daemon declared it dead and took its jobs over.
    sql(&home, "UPDATE daemons SET stopped_ms = 1");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = d.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < WAIT,
            "the daemon ran on without its lease"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    let mut err = String::new();
    std::io::Read::read_to_string(&mut d.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("another daemon took its jobs over"), "{err}");
}

#[test]
fn a_daemon_with_a_long_tick_still_beats_within_its_lease() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    std::fs::write(
        home.join("config.toml"),
        "[daemon]\ntick = \"60s\"\nlease = \"900ms\"\n",
    )
    .unwrap();
    let d = spawn_daemon(&home, &[]);
    let beat = || {
        json(&home, &["daemon", "status", "--json"])["daemons"][0]["heartbeat_ms"]
            .as_i64()
            .unwrap_or(0)
    };
    wait_until("the first heartbeat", WAIT, || beat() > 0);
    let first = beat();
    wait_until("a later heartbeat, long before the tick", WAIT, || {
        beat() > first
    });
    stop_daemon(d);
}

#[test]
fn running_jobs_of_a_stopped_or_unknown_daemon_are_taken_over_by_a_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    // Pinned to a label the live daemon lacks, so each waits, requeued, where it can be seen.
    let of_stopped = submit(&home, &["--on", "elsewhere"]);
    let of_unknown = submit(&home, &["--on", "elsewhere"]);
    let live = spawn_daemon(&home, &[]);
    wait_until("the live daemon in the registry", WAIT, || {
        json(&home, &["daemon", "status", "--json"])["daemons"]
            .as_array()
            .is_some_and(|d| d.len() == 1)
    });
    // One daemon deregistered with its job still running; another never registered here.
    sql(
        &home,
        &format!(
            "INSERT INTO daemons(id, host, pid, parallel, labels, started_ms, heartbeat_ms, stopped_ms)
                 VALUES ('d-stopped', 'other-host', 4242, 4, 'elsewhere', 1, 1, 2);
             UPDATE jobs SET state = 'running', daemon_id = 'd-stopped', started_ms = 1
                 WHERE id = '{of_stopped}';
             UPDATE jobs SET state = 'running', daemon_id = 'd-unknown', started_ms = 1
                 WHERE id = '{of_unknown}';"
        ),
    );
    for (id, daemon) in [(&of_stopped, "d-stopped"), (&of_unknown, "d-unknown")] {
        wait_until("the takeover", WAIT, || state(&home, id) != "running");
        let shown = json(&home, &["job", "show", id, "--json"]);
        assert_eq!(shown["state"], "queued", "{shown}");
        assert_eq!(shown["attempt"], 2, "{shown}");
        let events = json(&home, &["job", "events", id, "--json"]);
        let why: Vec<&str> = events
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "job_requeued")
            .map(|e| e["message"].as_str().unwrap())
            .collect();
        assert_eq!(why.len(), 1, "{events}");
        assert!(
            why[0].starts_with("daemon stopped") && why[0].contains(daemon),
            "{events}"
        );
        assert!(!events.to_string().contains("daemon restarted"), "{events}");
    }
    stop_daemon(live);
}

#[test]
fn until_idle_stops_beside_a_job_pinned_to_a_label_no_daemon_carries() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    let pinned = submit(&home, &["--on", "gpu"]);
    let free = submit(&home, &[]);
    // The timeout only keeps a regression from hanging the suite.
    let out = gitmoot(&home)
        .args(["daemon", "run", "--until-idle"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(state(&home, &free), "succeeded");
    assert_eq!(state(&home, &pinned), "queued");
    assert!(
        err.contains(&format!("left job {pinned} queued"))
            && err.contains("pinned to label gpu")
            && err.contains("--labels gpu"),
        "{err}"
    );
    // A daemon carrying the label still takes it, and says nothing of it.
    let out = gitmoot(&home)
        .args(["daemon", "run", "--until-idle", "--labels", "gpu"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("left job"));
    assert_eq!(state(&home, &pinned), "succeeded");
}

#[test]
fn a_second_daemon_refused_the_lock_never_says_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path());
    let first = spawn_daemon(&home, &[]);
    wait_until("the first daemon", WAIT, || {
        stdout(&home, &["daemon", "status"]).starts_with("daemon running")
    });
    let out = gitmoot(&home)
        .args(["daemon", "run"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let (said, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("already holds the daemon lock"), "{err}");
    assert!(!said.contains("daemon started"), "{said}");
    stop_daemon(first);
    let said = stdout(&home, &["daemon", "run", "--until-idle"]);
    assert_eq!(said.matches("daemon started").count(), 1, "{said}");
}
