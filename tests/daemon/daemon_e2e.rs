//! End-to-end: the real `gitmoot` binary, a real SQLite home and scripted shell agents.
//! A coordinator fans out, legs run under the parallel cap and their deps, a leg times out
//! without leaving orphans, malformed output is repaired once, a missing binary fails.

use gitmoot_test_support::daemon as daemon_support;

use std::collections::HashMap;
use std::time::Duration;

use daemon_support::{TestHome, alive, read_pid, result, succeed, wait_until};
use gitmoot::domain::{JobKind, JobState, RunState};

/// A coordinator that delegates on its first run and synthesises on its continuation,
/// decided by `$GITMOOT_JOB_KIND`.
fn coordinator(delegations: &str) -> String {
    format!(
        r#"cat > /dev/null
case "$GITMOOT_JOB_KIND" in
root) cat <<'JSON'
{{"gitmoot_result":{{"decision":"approved","summary":"plan ready","delegations":{delegations}}}}}
JSON
;;
*) if grep -q "leg a done" "$GITMOOT_PROMPT_FILE"; then saw=yes; else saw=no; fi
   echo "{{\"gitmoot_result\":{{\"decision\":\"approved\",\"summary\":\"synthesis saw-a=$saw\"}}}}" ;;
esac
"#
    )
}

fn worker(log: &std::path::Path) -> String {
    format!(
        r#"cat > /dev/null
echo "start $GITMOOT_DELEGATION_ID $(date +%s%N)" >> {log}
sleep 0.4
echo "end $GITMOOT_DELEGATION_ID $(date +%s%N)" >> {log}
echo "{{\"gitmoot_result\":{{\"decision\":\"approved\",\"summary\":\"leg $GITMOOT_DELEGATION_ID done\"}}}}"
"#,
        log = log.display()
    )
}

/// (start, end) nanoseconds of each leg, from the workers' log.
fn spans(log: &std::path::Path) -> HashMap<String, (u128, u128)> {
    let mut out: HashMap<String, (u128, u128)> = HashMap::new();
    for line in std::fs::read_to_string(log).unwrap().lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let t: u128 = parts[2].parse().unwrap();
        let e = out.entry(parts[1].to_string()).or_default();
        if parts[0] == "start" {
            e.0 = t;
        } else {
            e.1 = t;
        }
    }
    out
}

#[test]
fn a_coordinator_fans_out_legs_run_two_at_a_time_and_the_continuation_finishes_the_run() {
    let h = TestHome::new();
    let log = h.file("legs.log");
    h.shell_agent(
        "coord",
        &coordinator(
            r#"[
 {"id":"a","agent":"worker","action":"ask","prompt":"part a"},
 {"id":"b","agent":"worker","action":"ask","prompt":"part b"},
 {"id":"c","agent":"worker","action":"ask","prompt":"part c"},
 {"id":"d","agent":"worker","action":"review","prompt":"check a and b","deps":["a","b"]}]"#,
        ),
    );
    h.shell_agent("worker", &worker(&log));
    let root = h.submit("coord", "build the thing", &[]);
    h.daemon_until_idle(2);

    let run = h.run(&root);
    assert_eq!(run.state, RunState::Done, "{run:?}");
    let tree = h.tree(&root);
    let legs: Vec<_> = tree.iter().filter(|j| j.kind == JobKind::Leg).collect();
    assert_eq!(legs.len(), 4);
    assert!(legs.iter().all(|j| j.state == JobState::Succeeded));
    let cont = tree
        .iter()
        .find(|j| j.kind == JobKind::Continuation)
        .expect("a continuation ran");
    assert_eq!(cont.state, JobState::Succeeded);
    assert_eq!(
        cont.result.as_ref().unwrap()["summary"],
        "synthesis saw-a=yes"
    );

    let s = spans(&log);
    assert_eq!(s.len(), 4);
    // Never more than two legs at once, and two did overlap.
    let mut max = 0;
    for (_, (start, _)) in s.iter() {
        let at_once = s.values().filter(|(a, b)| a <= start && start < b).count();
        max = max.max(at_once);
    }
    assert_eq!(max, 2, "{s:?}");
    // d waited for both of its deps.
    assert!(s["d"].0 >= s["a"].1 && s["d"].0 >= s["b"].1, "{s:?}");
    assert!(
        legs.iter()
            .all(|j| j.started_ms.is_some() && j.finished_ms.is_some())
    );
}

#[test]
fn a_leg_that_times_out_fails_and_leaves_no_process_behind() {
    let h = TestHome::new();
    let pidfile = h.file("grandchild.pid");
    h.shell_agent(
        "coord",
        &coordinator(
            r#"[{"id":"slow","agent":"sleeper","action":"ask","prompt":"take forever","timeout":"1s","failure_policy":"continue"}]"#,
        ),
    );
    h.shell_agent(
        "sleeper",
        &format!("sleep 300 & echo $! > {}\nwait\n", pidfile.display()),
    );
    let root = h.submit("coord", "go", &[]);
    let started = std::time::Instant::now();
    h.daemon_until_idle(2);
    assert!(started.elapsed() < Duration::from_secs(20));

    let tree = h.tree(&root);
    let leg = tree.iter().find(|j| j.kind == JobKind::Leg).unwrap();
    assert_eq!(leg.state, JobState::Failed);
    assert_eq!(leg.error.as_deref(), Some("timed out after 1s"));
    let grandchild = read_pid(&pidfile);
    assert!(
        wait_until(Duration::from_secs(2), || !alive(grandchild)),
        "the sleep grandchild {grandchild} outlived its timed-out leg"
    );
    assert!(h.run(&root).state.is_terminal());
}

#[test]
fn malformed_output_is_repaired_once_then_the_job_fails() {
    let h = TestHome::new();
    let count = h.file("runs");
    h.shell_agent(
        "sloppy",
        &format!(
            "cat > /dev/null\necho run >> {}\necho 'I did it, trust me'\n",
            count.display()
        ),
    );
    let root = h.submit("sloppy", "do it", &[]);
    h.daemon_until_idle(1);
    let job = h.job(&root);
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(
        job.error.as_deref(),
        Some("repair output malformed: missing valid gitmoot_result JSON object")
    );
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 2);
    let kinds: Vec<String> = gitmoot::store::events::for_job(h.store().conn(), &root)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "queued",
            "running",
            "malformed_output",
            "repair_retry",
            "failed"
        ]
    );
}

#[test]
fn a_repair_that_fixes_the_output_succeeds_and_sees_the_errors() {
    let h = TestHome::new();
    h.shell_agent(
        "learner",
        &format!(
            "if [ \"$GITMOOT_REPAIR\" = 0 ]; then cat >/dev/null; echo '{{\"gitmoot_result\":{{\"decision\":\"maybe\"}}}}'; \
             elif grep -q 'Validation errors' \"$GITMOOT_PROMPT_FILE\"; then cat >/dev/null; echo '{}'; fi\n",
            result("approved", "fixed")
        ),
    );
    let root = h.submit("learner", "do it", &[]);
    h.daemon_until_idle(1);
    let job = h.job(&root);
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.error);
    assert_eq!(job.result.unwrap()["summary"], "fixed");
    assert_eq!(h.run(&root).state, RunState::Done);
}

#[test]
fn a_missing_runtime_binary_fails_the_job_naming_it() {
    let h = TestHome::new();
    h.ok(&["agent", "add", "cl", "--runtime", "claude"]);
    let root = h.submit("cl", "hello", &[]);
    let empty = h.file("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    succeed(
        h.cmd(&["daemon", "run", "--until-idle"])
            .env("PATH", &empty),
    );
    let job = h.job(&root);
    assert_eq!(job.state, JobState::Failed);
    let err = job.error.unwrap();
    assert!(
        err.contains("runtime claude: binary \"claude\" not found on PATH"),
        "{err}"
    );

    h.config("[runtimes.codex]\npath = \"/nonexistent/codex\"\n");
    h.ok(&["agent", "add", "cx", "--runtime", "codex"]);
    let root = h.submit("cx", "hello", &[]);
    h.daemon_until_idle(1);
    let err = h.job(&root).error.unwrap();
    assert!(
        err.contains("[runtimes.codex].path \"/nonexistent/codex\""),
        "{err}"
    );
}

#[test]
fn a_failing_shell_agent_reports_its_exit_code_and_stderr_tail() {
    let h = TestHome::new();
    h.shell_agent(
        "broken",
        "cat >/dev/null\necho 'fatal: config missing' >&2\nexit 7\n",
    );
    let root = h.submit("broken", "x", &[]);
    h.daemon_until_idle(1);
    assert_eq!(
        h.job(&root).error.as_deref(),
        Some("shell exited with code 7: fatal: config missing")
    );
}

#[test]
fn the_shell_contract_gives_prompt_on_stdin_and_in_a_file_and_the_job_env() {
    let h = TestHome::new();
    let dump = h.file("env.txt");
    h.shell_agent(
        "probe",
        &format!(
            "stdin=$(cat)\nfile=$(cat \"$GITMOOT_PROMPT_FILE\")\n\
             [ \"$stdin\" = \"$file\" ] && echo same > {d}\n\
             env | grep '^GITMOOT_' | sort >> {d}\necho '{}'\n",
            result("approved", "ok"),
            d = dump.display()
        ),
    );
    let root = h.submit("probe", "the task text", &["--repo", "acme/api"]);
    h.daemon_until_idle(1);
    assert_eq!(h.job(&root).state, JobState::Succeeded);
    let text = std::fs::read_to_string(&dump).unwrap();
    assert!(text.starts_with("same\n"), "{text}");
    for want in [
        format!("GITMOOT_JOB_ID={root}"),
        format!("GITMOOT_ROOT_ID={root}"),
        "GITMOOT_JOB_KIND=root".into(),
        "GITMOOT_ACTION=ask".into(),
        "GITMOOT_REPO=acme/api".into(),
        "GITMOOT_ATTEMPT=1".into(),
        "GITMOOT_PARENT_ID=".into(),
        "GITMOOT_DELEGATION_ID=".into(),
    ] {
        assert!(text.lines().any(|l| l == want), "missing {want} in {text}");
    }
    // The home stays the daemon's: an agent that knew it could answer its own gates.
    assert!(!text.contains("GITMOOT_HOME"), "{text}");
    // The prompt file lives outside the home and is gone once the job ended.
    let prompt = text
        .lines()
        .find_map(|l| l.strip_prefix("GITMOOT_PROMPT_FILE="))
        .unwrap();
    assert!(
        !prompt.starts_with(&*h.path().to_string_lossy()),
        "{prompt}"
    );
    assert!(!std::path::Path::new(prompt).exists(), "{prompt}");
}

#[test]
fn job_run_wait_runs_an_in_process_daemon_and_prints_the_result() {
    let h = TestHome::new();
    h.approver("echo", "all good");
    let out = h.ok(&["job", "run", "--agent", "echo", "--wait", "check it"]);
    let mut lines = out.lines();
    assert!(lines.next().unwrap().ends_with(" done"), "{out}");
    assert_eq!(lines.next(), Some("decision: approved"));
    assert_eq!(lines.next(), Some("summary:  all good"));

    let out = h.ok(&["job", "run", "--agent", "echo", "--wait", "--json", "again"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["run"]["state"], "done");
    assert_eq!(v["tree"]["result"]["summary"], "all good");

    h.shell_agent("nope", "cat >/dev/null\nexit 3\n");
    let out = h
        .cmd(&["job", "run", "--agent", "nope", "--wait", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: run job-") && stderr.contains("ended failed"),
        "{stderr}"
    );
}

#[test]
fn output_over_one_mib_is_stored_capped_and_marked_truncated() {
    let h = TestHome::new();
    h.shell_agent(
        "chatty",
        &format!(
            "cat >/dev/null\nhead -c 2000000 /dev/zero | tr '\\0' 'x'\necho\necho '{}'\n",
            result("approved", "long story")
        ),
    );
    let root = h.submit("chatty", "talk", &[]);
    h.daemon_until_idle(1);
    let job = h.job(&root);
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.error);
    assert_eq!(job.result.unwrap()["summary"], "long story");
    assert!(job.output_truncated);
    assert_eq!(job.raw_output.unwrap().len(), 1024 * 1024);
}

#[test]
fn trivial_jobs_finishing_together_are_each_settled_once_and_leave_no_record() {
    // Jobs that end while the pool is busy are settled in batches, together with the
    // claim of their successors; every one must still settle exactly once.
    let h = TestHome::new();
    h.approver("quick", "done");
    let ids: Vec<String> = (0..24)
        .map(|i| h.submit("quick", &format!("job {i}"), &[]))
        .collect();
    h.daemon_until_idle(4);
    let store = h.store();
    for id in &ids {
        let job = h.job(id);
        assert_eq!(job.state, JobState::Succeeded, "{id}: {:?}", job.error);
        assert_eq!(h.run(id).state, RunState::Done, "{id}");
        let kinds: Vec<String> = gitmoot::store::events::for_job(store.conn(), id)
            .unwrap()
            .into_iter()
            .filter(|e| e.job_id.as_deref() == Some(id.as_str()))
            .map(|e| e.kind)
            .collect();
        assert_eq!(
            kinds.iter().filter(|k| *k == "running").count(),
            1,
            "{id}: {kinds:?}"
        );
        assert_eq!(
            kinds.iter().filter(|k| *k == "succeeded").count(),
            1,
            "{id}: {kinds:?}"
        );
    }
    let records: Vec<_> = std::fs::read_dir(h.path().join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(records.is_empty(), "records left behind: {records:?}");
}

/// While the same jobs run, the status file is rewritten for its heartbeat alone about
/// once a second, however fast the daemon ticks, and still names the running job.
#[test]
fn the_status_file_names_the_running_job_and_beats_about_once_a_second() {
    let h = TestHome::new();
    h.config("[daemon]\ntick = \"50ms\"\n");
    h.shell_agent(
        "sleeper",
        &format!(
            "cat >/dev/null\nsleep 5\necho '{}'\n",
            result("approved", "slept")
        ),
    );
    let mut daemon = h
        .cmd(&["daemon", "run"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let root = h.submit("sleeper", "sleep a while", &[]);
    let status = || -> Option<serde_json::Value> {
        serde_json::from_slice(&std::fs::read(h.path().join("daemon-status.json")).ok()?).ok()
    };
    let names_root = |s: &serde_json::Value| {
        s["running"]
            .as_array()
            .is_some_and(|r| r.iter().any(|j| j["id"] == root.as_str()))
    };
    assert!(
        wait_until(Duration::from_secs(10), || status()
            .is_some_and(|s| names_root(&s))),
        "the status file never named the running job"
    );
    let mut beats = std::collections::BTreeSet::new();
    let watched = std::time::Instant::now();
    while watched.elapsed() < Duration::from_millis(2_500) {
        if let Some(s) = status() {
            assert!(names_root(&s), "the running job left the status file: {s}");
            beats.insert(s["last_tick_ms"].as_i64().unwrap());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(
        (2..=4).contains(&beats.len()),
        "{} writes in 2.5 s: {beats:?}",
        beats.len()
    );
}
