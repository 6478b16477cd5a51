//! The daemon embedded in another program (as the control room runs it): `Daemon::spawn`
//! on its own thread, hooks passed through to every settlement, a forced kill and a
//! cancel terminating running jobs, and the shutdown handle.

use gitmoot_test_support::daemon as daemon_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use daemon_support::{TestHome, alive, read_pid, wait_until};
use gitmoot::clock::{Clock, SystemClock};
use gitmoot::config::Config;
use gitmoot::daemon::{Daemon, DaemonError, DaemonExit, LockError};
use gitmoot::domain::{JobState, RunState};
use gitmoot::engine::{self, EngineError, Env, Hooks, NoHooks};
use gitmoot::home::Home;
use gitmoot::store::jobs::Job;

#[derive(Default)]
struct Counting(AtomicUsize);

impl Hooks for Counting {
    fn job_finished(
        &self,
        _tx: &gitmoot::store::Tx<'_>,
        _clock: &dyn Clock,
        _job: &Job,
    ) -> Result<(), EngineError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

fn daemon(h: &TestHome) -> Daemon {
    Daemon::new(Home::resolve(Some(&h.path())).unwrap()).config(Config::default())
}

#[test]
fn an_embedded_daemon_runs_jobs_calls_the_hooks_and_stops_on_request() {
    let h = TestHome::new();
    h.approver("echo", "ok");
    let root = h.submit("echo", "one", &[]);
    let hooks = Arc::new(Counting::default());
    let handle = daemon(&h).hooks(hooks.clone()).spawn().unwrap();

    // A second embedded daemon on the same home is refused with the holder's pid.
    match daemon(&h).spawn() {
        Err(DaemonError::Lock(LockError::Held { pid, .. })) => {
            assert_eq!(pid, std::process::id().to_string())
        }
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("a second daemon started"),
    }

    assert!(wait_until(Duration::from_secs(10), || h.run(&root).state
        == RunState::Done));
    // Jobs submitted later are picked up by the wake-up, well before a slow tick.
    let second = h.submit("echo", "two", &[]);
    assert!(wait_until(Duration::from_secs(10), || h.run(&second).state
        == RunState::Done));
    assert_eq!(hooks.0.load(Ordering::SeqCst), 2);
    handle.shutdown();
    assert_eq!(
        handle.join().unwrap(),
        DaemonExit::Shutdown { terminated: 0 }
    );
}

#[test]
fn a_forced_kill_and_a_cancel_terminate_running_jobs() {
    let h = TestHome::new();
    let pids = [h.file("a.pid"), h.file("b.pid")];
    for (name, pid) in ["slow-a", "slow-b"].iter().zip(&pids) {
        h.shell_agent(
            name,
            &format!(
                "cat >/dev/null\nsleep 60 & echo $! > {}\nwait\n",
                pid.display()
            ),
        );
    }
    let a = h.submit("slow-a", "a", &[]);
    let b = h.submit("slow-b", "b", &[]);
    let handle = daemon(&h).parallel(Some(2)).spawn().unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        pids.iter().all(|p| p.exists()) && [&a, &b].iter().all(|id| h.job(id).runtime_pid.is_some())
    }));
    let mut store = h.store();
    let cfg = Config::default();
    store
        .write(|tx| engine::kill_root(tx, env(&cfg), &a, true))
        .unwrap();
    store
        .write(|tx| engine::cancel_job(tx, env(&cfg), &b))
        .unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        pids.iter().all(|p| !alive(read_pid(p)))
    }));
    assert!(wait_until(Duration::from_secs(10), || {
        h.job(&a).state.is_terminal() && h.job(&b).runtime_pid.is_none()
    }));
    assert_eq!(h.job(&b).state, JobState::Cancelled);
    assert!(h.job(&a).error.unwrap_or_default().contains("terminated"));
    handle.shutdown();
    handle.join().unwrap();
}

/// The engine as a headless script drives it: the wall clock, no hooks.
fn env(cfg: &Config) -> Env<'_> {
    Env {
        clock: &SystemClock,
        cfg: &cfg.orchestrate,
        hooks: &NoHooks,
    }
}

/// A daemon's own start (the control room's embedded one, which no CLI start precedes)
/// finishes a land killed after its base moved: recorded once, the base holding it once.
#[test]
fn an_embedded_daemons_start_finishes_a_land_killed_after_its_base_moved() {
    use std::os::unix::process::ExitStatusExt;
    let w = gitmoot_test_support::write::WriteHome::new("");
    let a = w.implement(
        "echo a > a.txt; git add a.txt; git commit -qm 'work a'",
        &[],
    );
    w.h.daemon_until_idle(1);
    std::fs::write(w.repo.join("README"), "moved on\n").unwrap();
    w.git(&["commit", "-qam", "main moved on"]);
    let out =
        w.h.cmd(&["job", "land", &a])
            .env("GITMOOT_TEST_LAND_STEP", "moved")
            .output()
            .unwrap();
    assert_eq!(out.status.signal(), Some(9), "the land was not killed");
    let home = Home::resolve(Some(&w.h.path())).unwrap();
    let db = home.db_path();
    let landed = || {
        let store = gitmoot::store::Store::open(&db).unwrap();
        gitmoot::store::events::for_job(store.conn(), &a)
            .unwrap()
            .iter()
            .filter(|e| e.kind == "landed")
            .count()
    };
    assert_eq!(landed(), 0);
    let config = Config::load(&home.config_path()).unwrap();
    let handle = Daemon::new(home).config(config).spawn().unwrap();
    assert!(wait_until(Duration::from_secs(20), || landed() == 1));
    handle.shutdown();
    handle.join().unwrap();
    assert_eq!(landed(), 1);
    let merges = w.git(&["rev-list", "--first-parent", "--merges", "main"]);
    assert_eq!(merges.lines().count(), 1);
    assert!(!w.worktree(&a).exists());
}
