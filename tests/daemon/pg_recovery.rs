//! Issue 25's losses at a shared PostgreSQL store's edges, through the real binary: a
//! server restart mid-run strands no job and settles each finished one once; a SIGKILLed
//! daemon's `ask`/`review` jobs run again on a survivor while its `implement` waits
//! `interrupted` (a daemon SIGSTOPped past its lease is `pg_paused`'s).

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

/// An agent that logs `start ID ATTEMPT` and `end ID ATTEMPT` around `sleep SECS`, then
/// approves: its side effects, one pair per attempt that ran to its end. It may do any
/// action.
pub(super) fn sleeper(home: &Path, name: &str, log: &Path, secs: &str) {
    let script = format!(
        "cat > /dev/null\necho \"start $GITMOOT_JOB_ID $GITMOOT_ATTEMPT\" >> {log}\nsleep {secs}\n\
         echo \"end $GITMOOT_JOB_ID $GITMOOT_ATTEMPT\" >> {log}\n\
         echo '{{\"gitmoot_result\":{{\"decision\":\"approved\",\"summary\":\"done\"}}}}'",
        log = log.display()
    );
    let caps = [
        "--capability",
        "ask",
        "--capability",
        "review",
        "--capability",
        "implement",
    ];
    support::shell_agent(home, name, &script, &caps);
}

pub(super) fn submit(home: &Path, agent: &str, extra: &[&str]) -> String {
    let mut args = vec!["job", "run", "--agent", agent];
    args.extend_from_slice(extra);
    args.push("work");
    stdout(home, &args).trim().to_string()
}

pub(super) fn open(url: &str) -> Store {
    Store::open_location(&Location::parse(url).unwrap()).unwrap()
}

pub(super) fn job(store: &mut Store, id: &str) -> jobs::Job {
    store.read(|tx| jobs::require(tx, id)).unwrap()
}

pub(super) fn job_events(store: &mut Store, id: &str) -> Vec<events::Event> {
    store.read(|tx| events::for_job(tx, id)).unwrap()
}

pub(super) fn count(evs: &[events::Event], kind: &str) -> usize {
    evs.iter().filter(|e| e.kind == kind).count()
}

/// How often each `(job, attempt)` logged `what` (`start` or `end`).
pub(super) fn effects(log: &Path, what: &str) -> HashMap<(String, u32), usize> {
    let mut n = HashMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let mut parts = line.split(' ');
        let (Some(w), Some(id), Some(attempt)) = (parts.next(), parts.next(), parts.next()) else {
            panic!("a torn log line: {line:?}");
        };
        if w == what {
            *n.entry((id.to_string(), attempt.parse().unwrap()))
                .or_default() += 1;
        }
    }
    n
}

fn live(store: &mut Store) -> u64 {
    store
        .read(|tx| -> gitmoot::store::Result<u64> {
            Ok(
                jobs::count_state(tx, JobState::Queued)?
                    + jobs::count_state(tx, JobState::Running)?,
            )
        })
        .unwrap()
}

/// What a daemon that exited wrote to its stderr.
pub(super) fn stderr(d: &mut Child) -> String {
    use std::io::Read;
    let mut text = String::new();
    d.stderr.take().unwrap().read_to_string(&mut text).unwrap();
    text
}

pub(super) fn signal(d: &Child, sig: i32) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(d.id() as i32, sig) };
}

/// The id of the daemon `d` in the registry, once it registered.
pub(super) fn daemon_id(store: &mut Store, d: &Child) -> String {
    let mut id = String::new();
    wait_until("the daemon to register", Duration::from_secs(30), || {
        let rows = daemons::unstopped(store.conn(), None).unwrap();
        match rows.iter().find(|r| r.pid == d.id() as i64) {
            Some(r) => {
                id = r.id.clone();
                true
            }
            None => false,
        }
    });
    id
}

#[test]
fn a_postgres_restart_mid_run_strands_no_job_and_settles_each_finished_one_once() {
    // A cluster of its own: restarting the binary's shared one would cut other tests off.
    let cluster = Arc::new(support::pg::Cluster::start());
    let db = cluster.database();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("effects.log");
    let h = host(dir.path(), "host", &db.url());
    sleeper(&h, "sleeper", &log, "0.5");
    let ids: Vec<String> = (0..120).map(|_| submit(&h, "sleeper", &[])).collect();
    let mut d = spawn_daemon(&h, &["--parallel", "4"]);
    let mut store = open(&db.url());
    for round in 1..=3 {
        wait_until("jobs to run", Duration::from_secs(120), || {
            effects(&log, "end").len() >= round * 24
        });
        drop(store);
        cluster.restart_fast();
        store = open(&db.url());
    }
    wait_until(
        "every job to settle after the restarts",
        Duration::from_secs(180),
        || live(&mut store) == 0,
    );
    assert!(
        d.try_wait().unwrap().is_none(),
        "the daemon stopped instead of riding out the restarts"
    );
    stop_daemon(d);
    let starts = effects(&log, "start");
    for id in &ids {
        let j = job(&mut store, id);
        assert_eq!(j.state, JobState::Succeeded, "{id}: {:?}", j.error);
        assert!(j.result.is_some(), "{id} lost its result");
        let evs = job_events(&mut store, id);
        assert_eq!(
            count(&evs, "succeeded"),
            1,
            "{id} settled more than once: {evs:?}"
        );
        assert_eq!(count(&evs, "failed"), 0, "{id}: {evs:?}");
        for a in 1..=j.attempt {
            assert!(
                starts.get(&(id.clone(), a)).is_none_or(|n| *n == 1),
                "{id} attempt {a} ran twice"
            );
        }
    }
}

#[test]
fn a_killed_daemon_s_read_only_jobs_run_again_on_a_survivor_and_its_implement_waits_interrupted() {
    let db = support::pg::database();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("effects.log");
    let homes: Vec<PathBuf> = (0..3)
        .map(|i| host(dir.path(), &format!("host{i}"), &db.url()))
        .collect();
    sleeper(&homes[0], "slow", &log, "3");
    let mut store = open(&db.url());
    // The victim starts alone, so it holds every job when it dies.
    let mut victim = spawn_daemon(&homes[1], &["--parallel", "4"]);
    let victim_id = daemon_id(&mut store, &victim);
    let asks = [
        submit(&homes[0], "slow", &[]),
        submit(&homes[0], "slow", &["--action", "review"]),
    ];
    let implement = submit(&homes[0], "slow", &["--action", "implement"]);
    let all: Vec<&String> = asks.iter().chain([&implement]).collect();
    wait_until(
        "the victim to run all three",
        Duration::from_secs(60),
        || {
            let started = effects(&log, "start");
            all.iter()
                .all(|id| started.contains_key(&((*id).clone(), 1)))
        },
    );
    let survivors: Vec<Child> = [0, 2]
        .iter()
        .map(|i| spawn_daemon(&homes[*i], &["--parallel", "4"]))
        .collect();
    signal(&victim, libc::SIGKILL);
    victim.wait().unwrap();
    wait_until(
        "the survivors to finish the read-only jobs",
        Duration::from_secs(60),
        || {
            asks.iter()
                .all(|id| job(&mut store, id).state.is_terminal())
        },
    );
    wait_until(
        "the implement job to be interrupted",
        Duration::from_secs(30),
        || job(&mut store, &implement).state == JobState::Interrupted,
    );
    for id in &asks {
        let j = job(&mut store, id);
        assert_eq!(j.state, JobState::Succeeded, "{id}: {:?}", j.error);
        assert_eq!(j.attempt, 2, "{id} ran again as its second attempt");
        assert_ne!(j.daemon_id.as_deref(), Some(victim_id.as_str()), "{id}");
        let evs = job_events(&mut store, id);
        let requeued: Vec<&events::Event> =
            evs.iter().filter(|e| e.kind == "job_requeued").collect();
        assert_eq!(requeued.len(), 1, "{evs:?}");
        assert!(requeued[0].message.starts_with("host lost"), "{evs:?}");
        assert!(requeued[0].message.contains(&victim_id), "{evs:?}");
        assert_eq!(count(&evs, "failed"), 0, "{evs:?}");
        assert!(
            !evs.iter().any(|e| e.message.contains("daemon restarted")),
            "{evs:?}"
        );
    }
    let j = job(&mut store, &implement);
    assert_eq!(j.attempt, 1, "an implement job is not re-run blindly");
    let evs = job_events(&mut store, &implement);
    let why = evs
        .iter()
        .find(|e| e.kind == "interrupted")
        .expect("an interrupted event");
    assert!(why.message.starts_with("host lost"), "{evs:?}");
    assert!(why.message.contains("job resume"), "{evs:?}");
    // Listed as waiting on a human, and not re-run by a survivor.
    let listed = support::json(&homes[2], &["job", "show", &implement, "--json"]);
    assert_eq!(listed["state"], "interrupted", "{listed}");
    std::thread::sleep(Duration::from_millis(LEASE_MS));
    assert_eq!(
        effects(&log, "start").get(&(implement.clone(), 1)),
        Some(&1)
    );
    assert!(!effects(&log, "start").contains_key(&(implement.clone(), 2)));
    // The human's retry runs it again as its next attempt.
    stdout(&homes[2], &["job", "resume", &implement, "retry"]);
    wait_until("the retried implement job", Duration::from_secs(60), || {
        job(&mut store, &implement).state == JobState::Succeeded
    });
    assert_eq!(job(&mut store, &implement).attempt, 2);
    for d in survivors {
        stop_daemon(d);
    }
}

#[test]
fn a_full_server_disk_keeps_the_finished_job_says_so_once_and_settles_when_space_returns() {
    let db = support::pg::database();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("effects.log");
    let h = host(dir.path(), "host", &db.url());
    sleeper(&h, "sleeper", &log, "0.2");
    // The server's disk stands full for settlements while `disk_is_full` holds a row: the
    // same `disk_full` (53100) a table that cannot grow raises, nothing written.
    let mut sql = postgres::Client::connect(&db.url(), postgres::NoTls).unwrap();
    sql.batch_execute(
        "CREATE TABLE disk_is_full (x int);
         INSERT INTO disk_is_full VALUES (1);
         CREATE FUNCTION no_space() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NEW.state = 'succeeded' AND EXISTS (SELECT 1 FROM disk_is_full) THEN
             RAISE EXCEPTION 'could not extend file: No space left on device'
               USING ERRCODE = 'disk_full';
           END IF;
           RETURN NEW;
         END $$;
         CREATE TRIGGER no_space BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION no_space();",
    )
    .unwrap();
    let id = submit(&h, "sleeper", &[]);
    let mut d = spawn_daemon(&h, &["--parallel", "2"]);
    let mut store = open(&db.url());
    wait_until("the agent to finish", Duration::from_secs(30), || {
        effects(&log, "end").len() == 1
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        job(&mut store, &id).state,
        JobState::Running,
        "kept, not failed"
    );
    assert!(d.try_wait().unwrap().is_none(), "the daemon waits it out");
    sql.batch_execute("DELETE FROM disk_is_full").unwrap();
    let settled = support::daemon::wait_until(Duration::from_secs(60), || {
        job(&mut store, &id).state == JobState::Succeeded
    });
    signal(&d, libc::SIGTERM);
    d.wait().unwrap();
    let said = stderr(&mut d);
    let logged = std::fs::read_to_string(h.join("logs/gitmoot.log")).unwrap_or_default();
    assert!(settled, "the job never settled: {said} {logged}");
    assert_eq!(said.matches("is full").count(), 1, "said once: {said}");
    let evs = job_events(&mut store, &id);
    assert_eq!(count(&evs, "succeeded"), 1, "{evs:?}");
    assert_eq!(effects(&log, "start").len(), 1, "the agent ran once");
}
