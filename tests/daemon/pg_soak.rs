//! Issue 25's soak, through the real binary: three daemons on one PostgreSQL store share
//! 600 jobs of fan-outs with dependencies while one is SIGKILLed, one is SIGSTOPped past
//! its lease and resumed, and the server restarts once (`pg_ctl restart -m fast`). Every
//! job ends `succeeded` (what a lost daemon ran runs again on a survivor, or is settled
//! from the paused daemon's finished run when nothing claimed it since), no agent's side
//! effect happens twice for one attempt, and nothing stays `running`.

use gitmoot_test_support as support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Arc;
use std::time::Duration;

use gitmoot::domain::JobState;
use gitmoot::store::{Location, Store, daemons, events, jobs};
use support::pg::{LEASE_MS, host};
use support::{spawn_daemon, stdout, stop_daemon, wait_until};

const ROOTS: usize = 100;

/// Logs `start ID ATTEMPT` and `end ID ATTEMPT` around a short sleep, then answers.
fn agent(home: &Path, name: &str, log: &Path, answer: &str) {
    let script = format!(
        "cat > /dev/null\necho \"start $GITMOOT_JOB_ID $GITMOOT_ATTEMPT\" >> {log}\nsleep 0.3\n\
         echo \"end $GITMOOT_JOB_ID $GITMOOT_ATTEMPT\" >> {log}\n{answer}\n",
        log = log.display()
    );
    support::shell_agent(home, name, &script, &[]);
}

fn open(url: &str) -> Store {
    Store::open_location(&Location::parse(url).unwrap()).unwrap()
}

/// How often each `ID ATTEMPT` logged `start` and `end`.
type Effects = HashMap<String, usize>;

fn effects(log: &Path) -> (Effects, Effects) {
    let (mut starts, mut ends) = (Effects::new(), Effects::new());
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        match line.split_once(' ') {
            Some(("start", key)) => *starts.entry(key.to_string()).or_default() += 1,
            Some(("end", key)) => *ends.entry(key.to_string()).or_default() += 1,
            _ => panic!("a torn log line: {line:?}"),
        }
    }
    (starts, ends)
}

/// Waits until the daemon `d` runs at least `n` jobs whose agents have all logged their
/// start; returns its registry id.
fn busy(store: &mut Store, d: &Child, log: &Path, n: usize) -> String {
    let mut id = String::new();
    wait_until("a busy daemon", Duration::from_secs(120), || {
        let live = daemons::unstopped(store.conn(), None).unwrap();
        let Some(row) = live.iter().find(|r| r.pid == d.id() as i64) else {
            return false;
        };
        id = row.id.clone();
        let running = daemons::running_jobs(store.conn(), &row.id).unwrap();
        let (starts, _) = effects(log);
        running.len() >= n
            && running
                .iter()
                .all(|j| starts.keys().any(|k| k.starts_with(&format!("{j} "))))
    });
    id
}

fn signal(d: &Child, sig: i32) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(d.id() as i32, sig) };
}

fn unsettled(store: &mut Store) -> u64 {
    [JobState::Queued, JobState::Running, JobState::Interrupted]
        .into_iter()
        .map(|s| jobs::count_state(store.conn(), s).unwrap())
        .sum()
}

#[test]
fn three_daemons_finish_600_jobs_through_a_kill_a_pause_and_a_server_restart() {
    // A cluster of its own: restarting the binary's shared one would cut other tests off.
    let cluster = Arc::new(support::pg::Cluster::start());
    let db = cluster.database();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("effects.log");
    let homes: Vec<PathBuf> = (0..3)
        .map(|i| host(dir.path(), &format!("host{i}"), &db.url()))
        .collect();
    agent(
        &homes[0],
        "worker",
        &log,
        r#"echo '{"gitmoot_result":{"decision":"approved","summary":"done"}}'"#,
    );
    agent(
        &homes[0],
        "coord",
        &log,
        r#"case "$GITMOOT_JOB_KIND" in
root) echo '{"gitmoot_result":{"decision":"approved","summary":"plan","delegations":[
 {"id":"a","agent":"worker","action":"ask","prompt":"a"},
 {"id":"b","agent":"worker","action":"review","prompt":"b"},
 {"id":"c","agent":"worker","action":"ask","prompt":"c","deps":["a","b"]},
 {"id":"d","agent":"worker","action":"ask","prompt":"d","deps":["c"]}]}}' ;;
*) echo '{"gitmoot_result":{"decision":"approved","summary":"merged"}}' ;;
esac"#,
    );
    for i in 0..ROOTS {
        stdout(
            &homes[i % 3],
            &["job", "run", "--agent", "coord", &format!("tree {i}")],
        );
    }
    let mut store = open(&db.url());
    let mut fleet: Vec<Child> = homes
        .iter()
        .map(|h| spawn_daemon(h, &["--parallel", "4"]))
        .collect();

    busy(&mut store, &fleet[1], &log, 2);
    signal(&fleet[1], libc::SIGKILL);
    fleet[1].wait().unwrap();

    // Paused past its lease, and past the server's patience with an idle writer.
    busy(&mut store, &fleet[2], &log, 2);
    signal(&fleet[2], libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(3 * LEASE_MS));
    signal(&fleet[2], libc::SIGCONT);

    drop(store);
    cluster.restart_fast();
    store = open(&db.url());

    wait_until("every job to settle", Duration::from_secs(600), || {
        unsettled(&mut store) == 0
    });
    assert!(
        fleet[0].try_wait().unwrap().is_none(),
        "the daemon that was never hurt stopped instead of riding out the restart"
    );
    let mut paused = fleet.pop().unwrap();
    // The killed one was waited for above.
    fleet.truncate(1);
    stop_daemon(fleet.pop().unwrap());
    // The paused daemon learned its lease was taken over and stopped by itself.
    wait_until("the paused daemon to exit", Duration::from_secs(30), || {
        paused.try_wait().unwrap().is_some()
    });

    let all = store
        .read(|tx| jobs::list(tx, &jobs::JobFilter::default()))
        .unwrap();
    assert!(all.len() >= ROOTS * 6, "{} jobs", all.len());
    let (starts, ends) = effects(&log);
    let mut reasons: Vec<String> = Vec::new();
    for (key, n) in &starts {
        assert_eq!(*n, 1, "{key} started {n} times");
    }
    for j in &all {
        let evs = store.read(|tx| events::for_job(tx, &j.id)).unwrap();
        assert_eq!(
            j.state,
            JobState::Succeeded,
            "{}: {:?} {evs:?}",
            j.id,
            j.error
        );
        let key = format!("{} {}", j.id, j.attempt);
        assert_eq!(ends.get(&key), Some(&1), "{key} settled without its run");
        assert!(
            !evs.iter()
                .any(|e| e.kind == "failed" || e.message.contains("daemon restarted")),
            "{}: {evs:?}",
            j.id
        );
        reasons.extend(
            evs.iter()
                .filter(|e| e.kind == "job_requeued" || e.kind == "job_recovered")
                .map(|e| e.message.clone()),
        );
    }
    // Both losses happened, each said as what it was.
    for loss in ["host lost", "lease lost"] {
        assert!(
            reasons.iter().any(|m| m.starts_with(loss)),
            "no job says {loss}: {reasons:?}"
        );
    }
}
