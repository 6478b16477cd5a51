//! Issue 18's fleet on one PostgreSQL store: three daemons (`--parallel 4` each, three
//! homes as three hosts would have) share 600 jobs of fan-outs with dependencies; one is
//! SIGKILLed mid-run. Every job reaches a final state, every agent's side effect (its job
//! id appended to a log) happens once per attempt the store records and never twice at
//! once, and the killed daemon's running jobs are finished by the others within the lease
//! plus five seconds.

use gitmoot_test_support as support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use gitmoot::store::{Location, Store, daemons, jobs};
use support::pg::{LEASE_MS, host};
use support::{spawn_daemon, stdout, stop_daemon, wait_until};

const ROOTS: usize = 100;

/// What the worker agents answer.
const DONE: &str = r#"echo '{"gitmoot_result":{"decision":"approved","summary":"done"}}'"#;

/// One test's fresh PostgreSQL database, its folder and the log the agents append to.
struct Setup {
    db: support::pg::Database,
    dir: tempfile::TempDir,
    log: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self {
            db: support::pg::database(),
            log: dir.path().join("effects.log"),
            dir,
        }
    }

    fn url(&self) -> String {
        self.db.url()
    }

    /// A host's home on the shared store.
    fn host(&self, name: &str) -> PathBuf {
        host(self.dir.path(), name, &self.url())
    }

    /// Registers the `worker` agent (in the shared store) through `home`.
    fn worker(&self, home: &Path) {
        agent(home, "worker", &self.log, DONE);
    }

    fn store(&self) -> Store {
        Store::open_location(&Location::parse(&self.url()).unwrap()).unwrap()
    }
}

/// Appends `start ID ATTEMPT` and `end ID ATTEMPT` around a short piece of work, then answers.
fn agent(home: &Path, name: &str, log: &Path, answer: &str) {
    let script = format!(
        "cat > /dev/null\necho \"start $GITMOOT_JOB_ID $GITMOOT_ATTEMPT\" >> {log}\nsleep 0.05\necho \"end $GITMOOT_JOB_ID $GITMOOT_ATTEMPT\" >> {log}\n{answer}\n",
        log = log.display()
    );
    support::shell_agent(home, name, &script, &[]);
}

/// Has the server terminate every other connection to `store`'s database; returns how many.
fn drop_other_connections(store: &Store) -> i64 {
    store
        .conn()
        .one(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            gitmoot::params![],
        )
        .unwrap()
}

#[test]
fn three_daemons_share_600_jobs_and_finish_a_killed_ones_work_exactly_once() {
    let setup = Setup::new();
    let log = setup.log.clone();
    let homes: Vec<PathBuf> = (0..3).map(|i| setup.host(&format!("host{i}"))).collect();
    setup.worker(&homes[0]);
    agent(
        &homes[0],
        "coord",
        &log,
        r#"case "$GITMOOT_JOB_KIND" in
root) echo '{"gitmoot_result":{"decision":"approved","summary":"plan","delegations":[
 {"id":"a","agent":"worker","action":"ask","prompt":"a","retry":2},
 {"id":"b","agent":"worker","action":"ask","prompt":"b","retry":2},
 {"id":"c","agent":"worker","action":"ask","prompt":"c","retry":2,"deps":["a","b"]},
 {"id":"d","agent":"worker","action":"ask","prompt":"d","retry":2,"deps":["c"]}]}}' ;;
*) echo '{"gitmoot_result":{"decision":"approved","summary":"merged"}}' ;;
esac"#,
    );
    for i in 0..ROOTS {
        stdout(
            &homes[i % 3],
            &["job", "run", "--agent", "coord", &format!("tree {i}")],
        );
    }
    let mut store = setup.store();
    let mut fleet: Vec<Child> = homes
        .iter()
        .map(|h| spawn_daemon(h, &["--parallel", "4"]))
        .collect();
    // Once every coordinator has fanned out, kill the second daemon while it runs legs.
    let victim_pid = fleet[1].id() as i64;
    let mut victim_id = String::new();
    let succeeded = jobs::JobFilter {
        state: Some(gitmoot::domain::JobState::Succeeded),
        ..jobs::JobFilter::default()
    };
    wait_until(
        "the fan-outs and a busy second daemon",
        Duration::from_secs(120),
        || {
            let done = store.read(|tx| jobs::list(tx, &succeeded)).unwrap();
            let roots_done = done.iter().filter(|j| j.id == j.root_id).count();
            let live = daemons::unstopped(store.conn(), None).unwrap();
            let Some(d) = live.iter().find(|d| d.pid == victim_pid) else {
                return false;
            };
            victim_id = d.id.clone();
            // Killed only once each of its agents has left its side effect, so every
            // recorded attempt must show exactly one.
            let running = daemons::running_jobs(store.conn(), &d.id).unwrap();
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            roots_done == ROOTS
                && running.len() >= 2
                && running
                    .iter()
                    .all(|id| text.lines().any(|l| l.starts_with(&format!("start {id} "))))
        },
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(fleet[1].id() as i32, libc::SIGKILL) };
    fleet[1].wait().unwrap();
    let killed = Instant::now();
    let orphans_at_kill = daemons::running_jobs(store.conn(), &victim_id).unwrap();
    wait_until(
        "the killed daemon's jobs to be finished by the others",
        Duration::from_millis(LEASE_MS + 5_000),
        || {
            daemons::running_jobs(store.conn(), &victim_id)
                .unwrap()
                .is_empty()
        },
    );
    let took = killed.elapsed();
    wait_until("every job to settle", Duration::from_secs(600), || {
        let c = store.conn();
        jobs::count_state(c, gitmoot::domain::JobState::Queued).unwrap()
            + jobs::count_state(c, gitmoot::domain::JobState::Running).unwrap()
            == 0
    });
    for d in fleet
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, d)| d)
    {
        stop_daemon(d);
    }

    let all = store
        .read(|tx| jobs::list(tx, &jobs::JobFilter::default()))
        .unwrap();
    assert!(all.len() >= ROOTS * 6, "{} jobs", all.len());
    assert!(
        all.iter().all(|j| j.state.is_terminal()),
        "a job did not reach a final state"
    );
    let fanned_out = all
        .iter()
        .filter(|j| j.id == j.root_id)
        .all(|j| j.state == gitmoot::domain::JobState::Succeeded);
    assert!(fanned_out, "every coordinator fanned out");
    // The agents' side effects against the attempts the store records.
    let text = std::fs::read_to_string(&log).unwrap();
    let mut starts: HashMap<&str, usize> = HashMap::new();
    let mut ends: HashMap<&str, usize> = HashMap::new();
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("start", id)) => *starts.entry(id).or_default() += 1,
            Some(("end", id)) => *ends.entry(id).or_default() += 1,
            _ => panic!("a torn log line: {line:?}"),
        }
    }
    let known: HashMap<&str, &jobs::Job> = all.iter().map(|j| (j.id.as_str(), j)).collect();
    for (key, n) in &starts {
        let (id, attempt) = key.split_once(' ').unwrap();
        let attempt: u32 = attempt.parse().unwrap();
        assert!(
            known.get(id).is_some_and(|j| attempt <= j.attempt),
            "{key} ran but the store has no such attempt"
        );
        assert_eq!(*n, 1, "{key} started {n} times");
    }
    for j in &all {
        // No attempt missing: every attempt that started left its side effect once.
        let key = format!("{} {}", j.id, j.attempt);
        if j.started_ms.is_some() {
            assert_eq!(starts.get(key.as_str()), Some(&1), "{key} never ran");
        }
        if j.state == gitmoot::domain::JobState::Succeeded {
            assert_eq!(ends.get(key.as_str()), Some(&1), "{key} never finished");
        }
    }
    // What the killed daemon held ran again on a survivor as its next attempt (issue 25:
    // read-only work survives a lost host), saying why. Every tree it did not touch finished.
    for id in &orphans_at_kill {
        let j = known[id.as_str()];
        assert_eq!(j.state, gitmoot::domain::JobState::Succeeded, "{id}");
        assert!(j.attempt >= 2, "{id} did not run again");
        let evs = gitmoot::store::events::for_job(store.conn(), id).unwrap();
        assert!(
            evs.iter()
                .any(|e| e.kind == "job_requeued" && e.message.starts_with("host lost")),
            "{id}: {evs:?}"
        );
    }
    let touched: Vec<&str> = orphans_at_kill
        .iter()
        .map(|id| known[id.as_str()].root_id.as_str())
        .collect();
    for (id, j) in &known {
        if j.kind == gitmoot::domain::JobKind::Continuation
            && !touched.contains(&j.root_id.as_str())
        {
            assert_eq!(j.state, gitmoot::domain::JobState::Succeeded, "{id}");
        }
    }
    eprintln!(
        "pg fleet: {} jobs, {} recovered from the killed daemon in {took:?}",
        all.len(),
        orphans_at_kill.len()
    );
}

/// With a tick of a minute, only the change feed can tell an idle daemon on PostgreSQL
/// that a job arrived: the job still runs at once.
#[test]
fn an_idle_daemon_on_postgres_is_woken_by_the_change_feed_not_its_tick() {
    let setup = Setup::new();
    let h = setup.host("host");
    setup.worker(&h);
    std::fs::write(
        h.join("config.toml"),
        format!(
            "[daemon]\ntick = \"60s\"\n\n[store]\nurl = \"{}\"\n",
            setup.url()
        ),
    )
    .unwrap();
    let d = spawn_daemon(&h, &["--parallel", "4"]);
    let mut store = setup.store();
    wait_until("the daemon to register", Duration::from_secs(30), || {
        !daemons::unstopped(store.conn(), None).unwrap().is_empty()
    });
    // Past the daemon's first passes, so only a wake-up can start the job now.
    std::thread::sleep(Duration::from_secs(2));
    let id = stdout(&h, &["job", "run", "--agent", "worker", "wake up"]);
    let id = id.trim();
    wait_until(
        "the job to run well inside the tick",
        Duration::from_secs(20),
        || {
            store
                .read(|tx| jobs::get(tx, id))
                .unwrap()
                .is_some_and(|j| j.state == gitmoot::domain::JobState::Succeeded)
        },
    );
    stop_daemon(d);
}

/// The server drops every connection of the daemon mid-job: it reconnects, keeps its
/// lease and its running job, and goes on claiming.
#[test]
fn a_daemon_reconnects_when_postgres_drops_its_connections() {
    let setup = Setup::new();
    let h = setup.host("host");
    setup.worker(&h);
    support::shell_agent(
        &h,
        "slow",
        r#"cat > /dev/null
sleep 2
echo '{"gitmoot_result":{"decision":"approved","summary":"slow"}}'"#,
        &[],
    );
    let mut d = spawn_daemon(&h, &["--parallel", "4"]);
    let mut store = setup.store();
    let first = stdout(&h, &["job", "run", "--agent", "slow", "outlive the outage"]);
    let first = first.trim().to_string();
    let state =
        |store: &mut Store, id: &str| store.read(|tx| jobs::get(tx, id)).unwrap().map(|j| j.state);
    wait_until("the slow job to run", Duration::from_secs(30), || {
        state(&mut store, &first) == Some(gitmoot::domain::JobState::Running)
    });
    let dropped = drop_other_connections(&store);
    assert!(
        dropped >= 2,
        "the daemon's store and change feed connections"
    );
    let finished = gitmoot_test_support::daemon::wait_until(Duration::from_secs(30), || {
        state(&mut store, &first) == Some(gitmoot::domain::JobState::Succeeded)
    });
    if !finished {
        let log = std::fs::read_to_string(h.join("logs/gitmoot.log")).unwrap_or_default();
        let job = store.read(|tx| jobs::get(tx, &first)).unwrap();
        panic!("the slow job did not finish after the outage: {job:?}\n{log}");
    }
    assert!(
        d.try_wait().unwrap().is_none(),
        "the daemon stopped instead of reconnecting"
    );
    let next = stdout(&h, &["job", "run", "--agent", "worker", "after the outage"]);
    let next = next.trim().to_string();
    wait_until(
        "a job submitted after the outage",
        Duration::from_secs(30),
        || state(&mut store, &next) == Some(gitmoot::domain::JobState::Succeeded),
    );
    stop_daemon(d);
}

/// The control room on a PostgreSQL store, in a real terminal: it draws the shared store's
/// trees and shows a job another host submits while it runs.
#[test]
fn the_control_room_runs_on_a_postgres_store_and_shows_others_work_live() {
    let setup = Setup::new();
    let h = setup.host("host");
    setup.worker(&h);
    let other = host(setup.dir.path(), "other-host", &setup.url());
    stdout(&h, &["job", "run", "--agent", "worker", "first tree on pg"]);
    let cmd = format!(
        "sh -c '{} --home {} tui --no-daemon; echo TUI-EXITED; sleep 30'",
        support::bin(),
        h.display()
    );
    let t = support::tmux::Tmux::start("pgroom", &cmd, &[]);
    let wait = Duration::from_secs(60);
    t.wait_for("first tree on pg", wait);
    let id = stdout(
        &other,
        &["job", "run", "--agent", "worker", "second host's tree"],
    );
    t.wait_for(id.trim(), wait);
    t.quit(wait);
}

/// A store whose connection the server drops fails the one call that noticed, saying the
/// connection was lost, and runs the next on a fresh connection (what the control room's
/// loader and executor and every verb's next transaction rely on).
#[test]
fn a_store_reopens_a_connection_the_server_dropped() {
    let setup = Setup::new();
    let mut store = setup.store();
    let mut admin = setup.store();
    let count =
        |s: &mut Store| s.read(|tx| jobs::count_state(tx, gitmoot::domain::JobState::Queued));
    assert_eq!(count(&mut store).unwrap(), 0);
    let dropped = drop_other_connections(&admin);
    assert_eq!(dropped, 1);
    let lost = count(&mut store).unwrap_err();
    assert!(lost.is_connection_lost(), "{lost}");
    assert_eq!(count(&mut store).unwrap(), 0, "the next call reconnected");
    assert!(count(&mut admin).is_ok());
}
