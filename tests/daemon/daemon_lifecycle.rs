//! The daemon as a process: crash recovery after SIGKILL, graceful shutdown on SIGTERM,
//! one daemon per home, `daemon status`, concurrent CLI writers, and read-only legs in
//! throwaway worktrees.

use gitmoot_test_support::daemon as daemon_support;

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use daemon_support::{TestHome, alive, result, wait_until};
use gitmoot::domain::{JobKind, JobState, RunState};
use gitmoot::store::events;
use gitmoot::store::jobs::{self, Job, JobFilter};

fn spawn_daemon(h: &TestHome, args: &[&str]) -> Child {
    let mut full = vec!["daemon", "run"];
    full.extend_from_slice(args);
    h.cmd(&full)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

fn running(h: &TestHome) -> Vec<Job> {
    jobs::list(
        h.store().conn(),
        &JobFilter {
            state: Some(JobState::Running),
            ..JobFilter::default()
        },
    )
    .unwrap()
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < limit,
            "the daemon did not exit in {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_daemon_killed_mid_run_recovers_every_job_on_restart_and_the_tree_completes() {
    let h = TestHome::new();
    h.shell_agent(
        "coord",
        r#"cat > /dev/null
case "$GITMOOT_JOB_KIND" in
root) echo '{"gitmoot_result":{"decision":"approved","summary":"plan","delegations":[
 {"id":"a","agent":"worker","action":"ask","prompt":"a","retry":1},
 {"id":"b","agent":"worker","action":"ask","prompt":"b","retry":1},
 {"id":"c","agent":"worker","action":"ask","prompt":"c","retry":1}]}}' ;;
*) echo '{"gitmoot_result":{"decision":"approved","summary":"merged"}}' ;;
esac
"#,
    );
    h.shell_agent(
        "worker",
        &format!(
            "cat > /dev/null\nsleep 1\necho '{}'\n",
            result("approved", "leg done")
        ),
    );
    let root = h.submit("coord", "crash me", &[]);
    let mut d = spawn_daemon(&h, &["--parallel", "2"]);
    assert!(
        wait_until(Duration::from_secs(15), || {
            let r = running(&h);
            r.len() == 2
                && r.iter()
                    .all(|j| j.kind == JobKind::Leg && j.runtime_pid.is_some())
        }),
        "two legs never ran with their pids recorded"
    );
    let victims = running(&h);
    signal(&d, libc::SIGKILL);
    d.wait().unwrap();
    // The legs' leaders die with their daemon (issue 13: no agent runs unsupervised);
    // recovery ends whatever they left behind.
    let pids: Vec<i32> = victims
        .iter()
        .map(|j| j.runtime_pid.unwrap() as i32)
        .collect();
    for p in &pids {
        assert!(
            wait_until(Duration::from_secs(10), || !alive(*p)),
            "runtime {p} outlived its SIGKILLed daemon"
        );
    }

    h.daemon_until_idle(2);
    for p in &pids {
        assert!(
            wait_until(Duration::from_secs(2), || !alive(*p)),
            "leftover runtime {p} survived recovery"
        );
    }

    assert_eq!(h.run(&root).state, RunState::Done);
    let tree = h.tree(&root);
    assert!(tree.iter().all(|j| j.state.is_terminal()), "{tree:?}");
    for v in &victims {
        let j = h.job(&v.id);
        assert_eq!(j.state, JobState::Failed);
        assert_eq!(
            j.error.as_deref(),
            Some("daemon restarted while the job was running")
        );
        // The retry is a new job with a new id that succeeded.
        let retry = tree
            .iter()
            .find(|r| r.delegation_id == j.delegation_id && r.attempt == 2)
            .expect("the recovered leg was retried");
        assert_eq!(retry.state, JobState::Succeeded);
    }
    let conn = h.store();
    for j in &tree {
        let evs = events::for_job(conn.conn(), &j.id).unwrap();
        let count = |k: &str| evs.iter().filter(|e| e.kind == k).count();
        assert_eq!(count("queued"), 1, "{}: {evs:?}", j.id);
        assert_eq!(count(j.state.as_str()), 1, "{}: {evs:?}", j.id);
        if j.state == JobState::Succeeded {
            assert!(j.result.is_some(), "{} lost its result", j.id);
        }
    }
    let recovered = events::for_job_or_root(conn.conn(), &root, 0)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "job_recovery_failed")
        .count();
    assert_eq!(recovered, 2);
}

#[test]
fn records_of_ended_jobs_a_killed_daemon_left_are_removed_as_the_next_one_starts() {
    // An ended run's record waits under its job's name for the next run to take it over;
    // a daemon SIGKILLed before that leaves it, and the next start removes it.
    let h = TestHome::new();
    h.shell_agent(
        "quick",
        &format!("cat > /dev/null\necho '{}'\n", result("approved", "done")),
    );
    let ids: Vec<String> = (0..3)
        .map(|i| h.submit("quick", &format!("q{i}"), &[]))
        .collect();
    let records = || -> Vec<String> {
        std::fs::read_dir(h.path().join("runs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".out"))
            .collect()
    };
    let mut d = spawn_daemon(&h, &["--parallel", "3"]);
    assert!(
        wait_until(Duration::from_secs(15), || ids
            .iter()
            .all(|id| h.job(id).state == JobState::Succeeded)),
        "the jobs never succeeded"
    );
    assert!(
        !records().is_empty(),
        "no ended record waited for a next run"
    );
    signal(&d, libc::SIGKILL);
    d.wait().unwrap();
    h.daemon_until_idle(1);
    assert_eq!(records(), Vec::<String>::new());
}

#[test]
fn an_agents_own_children_die_with_a_sigkilled_daemon_before_any_restart() {
    // Issue 13.2: the leader's parent-death signal reaches only the leader; what it
    // started in the background must not run on unsupervised either.
    let h = TestHome::new();
    let pidfile = h.file("bg.pid");
    h.shell_agent(
        "spawner",
        &format!(
            "cat > /dev/null\nsleep 120 & echo $! > {}\nwait\n",
            pidfile.display()
        ),
    );
    h.submit("spawner", "leave a child", &[]);
    let mut d = spawn_daemon(&h, &[]);
    assert!(
        wait_until(Duration::from_secs(15), || std::fs::read_to_string(
            &pidfile
        )
        .is_ok_and(|s| s.trim().parse::<i32>().is_ok())),
        "the agent never started its background child"
    );
    let grandchild = daemon_support::read_pid(&pidfile);
    assert!(alive(grandchild));
    signal(&d, libc::SIGKILL);
    d.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || !alive(grandchild)),
        "the background child {grandchild} outlived its SIGKILLed daemon"
    );
}

#[test]
fn a_result_recovered_from_its_record_is_redacted_like_a_live_one() {
    // The agent prints its result, then is still running when its daemon dies; the next
    // start settles the job from the record, which must keep no secret either.
    let h = TestHome::new();
    let printed = h.file("printed");
    h.shell_agent(
        "leaky",
        &format!(
            "cat > /dev/null\necho 'token sk-proj-Zq9cT4kLmN8vB2xR7yW1'\necho '{}'\ntouch {}\nsleep 120\n",
            result("approved", "used sk-proj-Zq9cT4kLmN8vB2xR7yW1"),
            printed.display()
        ),
    );
    let id = h.submit("leaky", "leak", &[]);
    let mut d = spawn_daemon(&h, &[]);
    assert!(
        wait_until(Duration::from_secs(15), || printed.exists()),
        "the agent never printed its result"
    );
    signal(&d, libc::SIGKILL);
    d.wait().unwrap();
    h.daemon_until_idle(1);
    let job = h.job(&id);
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.error);
    let shown = h.ok(&["job", "show", &id, "--json"]);
    assert!(!shown.contains("Zq9cT4kLmN8vB2xR7yW1"), "{shown}");
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(v["result"]["summary"], "used sk-[REDACTED]", "{shown}");
}

#[test]
fn sigterm_lets_short_jobs_finish_terminates_long_ones_and_records_why() {
    let h = TestHome::new();
    h.config("[daemon]\nshutdown_grace = \"1s\"\n");
    let pidfile = h.file("slow.pid");
    h.shell_agent(
        "fast",
        &format!(
            "cat > /dev/null\nsleep 0.5\necho '{}'\n",
            result("approved", "fast")
        ),
    );
    h.shell_agent(
        "slow",
        &format!(
            "cat > /dev/null\nsleep 60 & echo $! > {}\nwait\n",
            pidfile.display()
        ),
    );
    let fast = h.submit("fast", "quick", &[]);
    let slow = h.submit("slow", "long", &[]);
    let waiting = h.submit("fast", "never claimed", &[]);
    let mut d = spawn_daemon(&h, &["--parallel", "2"]);
    assert!(wait_until(Duration::from_secs(10), || running(&h).len() == 2));

    // One daemon per home: a second refuses and names the holder.
    let second = h.cmd(&["daemon", "run"]).output().unwrap();
    assert_eq!(second.status.code(), Some(1));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains(&format!("pid {}", d.id())), "{err}");

    assert!(wait_until(Duration::from_secs(5), || {
        let s = h.ok(&["daemon", "status", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        v["jobs"].as_array().is_some_and(|j| j.len() == 2)
    }));
    let s: serde_json::Value =
        serde_json::from_str(&h.ok(&["daemon", "status", "--json"])).unwrap();
    assert_eq!(s["running"], true);
    // Issue 16: the pid is a JSON number, not a string.
    assert_eq!(s["pid"], d.id());
    assert_eq!(s["parallel"], 2);
    assert_eq!(s["running_jobs"], 2);
    assert_eq!(s["queued_jobs"], 1);
    assert!(
        s["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["id"] == slow && j["agent"] == "slow")
    );
    let human = h.ok(&["daemon", "status"]);
    assert!(
        human.starts_with(&format!("daemon running pid {}\n", d.id())),
        "{human}"
    );
    assert!(human.contains("running: 2  queued: 1"), "{human}");

    signal(&d, libc::SIGTERM);
    let status = wait_exit(&mut d, Duration::from_secs(8));
    assert!(status.success());
    assert_eq!(h.job(&fast).state, JobState::Succeeded);
    let s = h.job(&slow);
    assert_eq!(s.state, JobState::Failed);
    assert_eq!(
        s.error.as_deref(),
        Some("daemon shut down: terminated after the 1s shutdown grace")
    );
    assert_eq!(h.job(&waiting).state, JobState::Queued);
    let grandchild = daemon_support::read_pid(&pidfile);
    assert!(wait_until(Duration::from_secs(2), || !alive(grandchild)));
    assert!(h.ok(&["daemon", "status"]).starts_with("daemon stopped"));
}

#[test]
fn four_cli_writers_and_the_daemon_never_see_database_is_locked() {
    let h = TestHome::new();
    h.shell_agent(
        "quick",
        &format!("cat > /dev/null\necho '{}'\n", result("approved", "ok")),
    );
    let mut d = spawn_daemon(&h, &["--parallel", "4"]);
    // Writers start once the daemon holds the home, so `job run` has no "no daemon" hint.
    assert!(wait_until(Duration::from_secs(10), || {
        h.ok(&["daemon", "status"]).starts_with("daemon running")
    }));
    let bin = TestHome::bin();
    let home = h.path();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (bin, home) = (bin.clone(), home.clone());
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                for i in 0..50 {
                    let out = Command::new(&bin)
                        .arg("--home")
                        .arg(&home)
                        .args([
                            "job",
                            "run",
                            "--agent",
                            "quick",
                            &format!("writer {w} job {i}"),
                        ])
                        .output()
                        .unwrap();
                    if !out.status.success() || !out.stderr.is_empty() {
                        failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
                    }
                }
                failures
            })
        })
        .collect();
    let failures: Vec<String> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(failures.is_empty(), "{failures:?}");
    let done = || {
        let list = gitmoot::store::runs::list(h.store().conn(), 1_000).unwrap();
        list.len() == 200 && list.iter().all(|r| r.state == RunState::Done)
    };
    assert!(
        wait_until(Duration::from_secs(60), done),
        "not every root completed"
    );
    signal(&d, libc::SIGTERM);
    let status = wait_exit(&mut d, Duration::from_secs(10));
    let mut stderr = String::new();
    std::io::Read::read_to_string(d.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("database is locked"), "{stderr}");
    let log = std::fs::read_to_string(h.path().join("logs/gitmoot.log")).unwrap_or_default();
    assert!(!log.contains("database is locked"));
}

/// A home whose repo `acme/api` is a git checkout holding README "committed" in its commit
/// and "uncommitted edit" in its working tree.
fn checkout_with_an_uncommitted_edit() -> (TestHome, std::path::PathBuf) {
    let h = TestHome::new();
    let repo = h.file("repo");
    daemon_support::git_checkout(&repo, &[("README", "committed")]);
    std::fs::write(repo.join("README"), "uncommitted edit").unwrap();
    h.config(&format!(
        "[repos.\"acme/api\"]\npath = \"{}\"\n",
        repo.display()
    ));
    (h, repo)
}

/// Each agent's (start, end) in ns from `start NAME NS DIR README` / `end NAME NS` lines;
/// every start line is handed to `check` first.
fn spans(log: &str, mut check: impl FnMut(&str, &[&str])) -> HashMap<&str, (u128, u128)> {
    let mut spans: HashMap<&str, (u128, u128)> = HashMap::new();
    for line in log.lines() {
        let p: Vec<&str> = line.split_whitespace().collect();
        match p[0] {
            "start" => {
                check(line, &p);
                spans.entry(p[1]).or_default().0 = p[2].parse().unwrap();
            }
            "end" => spans.entry(p[1]).or_default().1 = p[2].parse().unwrap(),
            _ => {}
        }
    }
    spans
}

#[test]
fn read_only_legs_of_a_checkout_run_at_once_in_detached_worktrees_outside_the_home_removed_after() {
    let (h, repo) = checkout_with_an_uncommitted_edit();
    let log = h.file("legs.log");
    h.shell_agent(
        "coord",
        &format!(
            r#"cat > /dev/null
echo "coord $GITMOOT_JOB_KIND $(pwd)" >> {log}
case "$GITMOOT_JOB_KIND" in
root) echo '{{"gitmoot_result":{{"decision":"approved","summary":"plan","delegations":[
 {{"id":"x","agent":"reader","action":"ask","prompt":"x"}},
 {{"id":"y","agent":"reader","action":"review","prompt":"y"}}]}}}}' ;;
*) echo '{}' ;;
esac
"#,
            result("approved", "merged"),
            log = log.display()
        ),
    );
    h.shell_agent(
        "reader",
        &format!(
            "cat > /dev/null\necho \"start $GITMOOT_DELEGATION_ID $(date +%s%N) $(pwd) $(cat README)\" >> {log}\n\
             sleep 0.5\necho \"end $GITMOOT_DELEGATION_ID $(date +%s%N)\" >> {log}\necho '{}'\n",
            result("approved", "read"),
            log = log.display()
        ),
    );
    let root = h.submit("coord", "read the repo", &["--repo", "acme/api"]);
    h.daemon_until_idle(4);
    let tree = h.cmd(&["job", "tree", &root]).output().unwrap();
    assert_eq!(
        h.run(&root).state,
        RunState::Done,
        "{}",
        String::from_utf8_lossy(&tree.stdout)
    );

    let text = std::fs::read_to_string(&log).unwrap();
    let repo_real = repo.canonicalize().unwrap();
    let coord_dirs: Vec<&str> = text.lines().filter(|l| l.starts_with("coord")).collect();
    assert!(
        coord_dirs
            .iter()
            .all(|l| l.ends_with(&repo_real.display().to_string())
                || l.ends_with(&repo.display().to_string())),
        "the coordinator runs in the shared checkout: {text}"
    );
    let wt_root = h.worktrees_dir();
    let home = h.path().display().to_string();
    let spans = spans(&text, |line, p| {
        assert!(p[3].starts_with(&wt_root.display().to_string()), "{line}");
        assert!(
            !p[3].contains(&home),
            "a leg's folder names the home: {line}"
        );
        assert_eq!(p[4], "committed", "legs see the committed tip: {line}");
    });
    let (x, y) = (spans["x"], spans["y"]);
    assert!(
        x.0 < y.1 && y.0 < x.1,
        "siblings in one repo ran at once: {spans:?}"
    );
    assert_eq!(std::fs::read_dir(&wt_root).unwrap().count(), 0);
    assert_eq!(
        daemon_support::git(&repo, &["worktree", "list"])
            .lines()
            .count(),
        1
    );
    let legs: Vec<Job> = h
        .tree(&root)
        .into_iter()
        .filter(|j| j.kind == JobKind::Leg)
        .collect();
    assert!(legs.iter().all(|j| j.worktree.is_some()));
}

#[test]
fn moot_seats_of_a_checkout_run_at_once_in_detached_worktrees_and_are_told_where_edits_are() {
    let (h, repo) = checkout_with_an_uncommitted_edit();
    let log = h.file("seats.log");
    for seat in ["alice", "bob"] {
        h.shell_agent(
            seat,
            &format!(
                "cat > {prompts}-{seat}\necho \"start {seat} $(date +%s%N) $(pwd) $(cat README)\" >> {log}\n\
                 sleep 0.5\necho \"end {seat} $(date +%s%N)\" >> {log}\necho '{result}'\n",
                prompts = h.file("prompt").display(),
                log = log.display(),
                result = result("approved", "seated"),
            ),
        );
    }
    daemon_support::succeed(&mut h.cmd(&[
        "moot",
        "first",
        "which bug first?",
        "--agents",
        "alice,bob",
        "--repo",
        "acme/api",
    ]));
    h.daemon_until_idle(4);
    let text = std::fs::read_to_string(&log).unwrap();
    let wt_root = h.worktrees_dir().display().to_string();
    let spans = spans(&text, |line, p| {
        assert!(p[3].starts_with(&wt_root), "a seat's own worktree: {line}");
        assert_eq!(p[4], "committed", "seats see the committed tip: {line}");
    });
    let (a, b) = (spans["alice"], spans["bob"]);
    assert!(a.0 < b.1 && b.0 < a.1, "the seats ran at once: {spans:?}");
    for seat in ["alice", "bob"] {
        let prompt = std::fs::read_to_string(h.file(&format!("prompt-{seat}"))).unwrap();
        assert!(
            prompt.contains(&format!(
                "Uncommitted edits, if any, are only in the canonical checkout at {}",
                repo.display()
            )),
            "{prompt}"
        );
    }
    assert_eq!(std::fs::read_dir(h.worktrees_dir()).unwrap().count(), 0);
}
