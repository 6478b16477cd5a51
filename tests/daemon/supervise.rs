//! Supervision at the edges, through the real binary: what an agent's process inherits,
//! closed pipes, big prompts, corrupt rows and files, the relay's socket, interrupted
//! `--wait`, escaped grandchildren and a daemon killed with work in flight.

use gitmoot_test_support::daemon as daemon_support;

use std::io::Write;
use std::process::Stdio;

use daemon_support::{TestHome, result, shell_agent_args, signal};
use gitmoot::domain::JobState;
use gitmoot::store::events;

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Whether process `pid` is gone within `secs` seconds.
fn dies_within(secs: u64, pid: i32) -> bool {
    daemon_support::wait_until(std::time::Duration::from_secs(secs), || {
        !daemon_support::alive(pid)
    })
}

#[test]
fn planted_secrets_and_the_home_do_not_reach_a_shell_agent() {
    let h = TestHome::new();
    let dump = h.file("env.txt");
    h.shell_agent(
        "probe",
        &format!(
            "cat >/dev/null\nenv > {}\necho '{}'\n",
            dump.display(),
            result("approved", "ok")
        ),
    );
    h.config("[runtimes.shell]\nenv = [\"PASSED_ON\"]\n");
    let root = h.submit("probe", "look around", &[]);
    let out = h
        .cmd(&["daemon", "run", "--until-idle", "--parallel", "1"])
        .env("ANTHROPIC_API_KEY", "sk-ant-planted")
        .env("OPENAI_API_KEY", "sk-openai-planted")
        .env("AWS_SECRET_ACCESS_KEY", "aws-planted")
        .env("GITHUB_TOKEN", "ghp-planted")
        .env("GITMOOT_HOME", h.path())
        .env("PASSED_ON", "by-name")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(h.job(&root).state, JobState::Succeeded);
    let env = std::fs::read_to_string(&dump).unwrap();
    for secret in ["planted", "GITMOOT_HOME"] {
        assert!(!env.contains(secret), "{secret} leaked into {env}");
    }
    assert!(env.lines().any(|l| l == "PASSED_ON=by-name"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
    assert!(
        env.lines().any(|l| l == format!("GITMOOT_JOB_ID={root}")),
        "{env}"
    );
}

#[test]
fn every_printing_verb_into_a_closed_reader_exits_zero() {
    let h = TestHome::new();
    h.approver("echo", "fine");
    let root = h.submit("echo", "a task", &[]);
    h.daemon_until_idle(1);
    h.ok(&["chat", "create", "room", "--repo", "acme/api"]);
    h.ok(&["chat", "send", "room", "hello @echo"]);
    let verbs: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["agent", "list"],
        vec!["agent", "list", "--json"],
        vec!["agent", "show", "echo"],
        vec!["job", "list"],
        vec!["job", "list", "--json"],
        vec!["job", "show", &root],
        vec!["job", "show", &root, "--json"],
        vec!["job", "tree", &root],
        vec!["job", "events", &root],
        vec!["job", "pending"],
        vec!["chat", "list"],
        vec!["chat", "show", "room"],
        vec!["chat", "show", "room", "--json"],
        vec!["chat", "inbox", "echo"],
        vec!["memory", "list"],
        vec!["config", "show"],
        vec!["config", "path"],
        vec!["daemon", "status"],
        vec!["completions", "bash"],
    ];
    for args in verbs {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = h
            .cmd(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?} into a closed pipe: {}",
            stderr_of(&out)
        );
        assert!(out.stderr.is_empty(), "{args:?}: {}", stderr_of(&out));
    }
}

/// Runs `args` with `input` on its stdin, capturing both outputs.
fn pipe_in(h: &TestHome, args: &[&str], input: &str) -> std::process::Output {
    let mut child = h
        .cmd(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn big_prompt() -> String {
    let line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\n";
    line.repeat(1024 * 1024 / line.len() + 1)
}

#[test]
fn a_one_mib_prompt_goes_in_through_a_file_and_through_stdin() {
    let h = TestHome::new();
    let seen = h.file("seen.txt");
    h.shell_agent(
        "reader",
        &format!(
            "cat > {}\necho '{}'\n",
            seen.display(),
            result("approved", "read it")
        ),
    );
    let prompt = big_prompt();
    let file = h.file("prompt.txt");
    std::fs::write(&file, &prompt).unwrap();
    let by_file = h
        .ok(&[
            "job",
            "run",
            "--agent",
            "reader",
            "--prompt-file",
            file.to_str().unwrap(),
        ])
        .trim()
        .to_string();
    let out = pipe_in(&h, &["job", "run", "--agent", "reader", "-"], &prompt);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let by_stdin = String::from_utf8(out.stdout).unwrap().trim().to_string();
    for id in [&by_file, &by_stdin] {
        assert_eq!(h.job(id).prompt, prompt, "job {id}");
    }
    h.daemon_until_idle(1);
    for id in [&by_file, &by_stdin] {
        assert_eq!(h.job(id).state, JobState::Succeeded);
    }
    assert!(std::fs::read_to_string(&seen).unwrap().starts_with(&prompt));

    // chat send and chat task take big messages the same two ways.
    h.ok(&["chat", "create", "room", "--repo", "acme/api"]);
    let body = format!("@reader {prompt}");
    std::fs::write(&file, &body).unwrap();
    h.ok(&[
        "chat",
        "send",
        "room",
        "--message-file",
        file.to_str().unwrap(),
    ]);
    let out = pipe_in(&h, &["chat", "task", "room", "-"], &body);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let shown = h.ok(&["chat", "show", "room", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let bodies = gitmoot_test_support::bodies(&v);
    assert!(
        bodies.iter().filter(|b| **b == body).count() >= 2,
        "{}",
        bodies.len()
    );

    // Both at once, or neither, is one error line and exit 2.
    let out = h
        .cmd(&[
            "job",
            "run",
            "--agent",
            "reader",
            "x",
            "--prompt-file",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let out = h
        .cmd(&[
            "job",
            "run",
            "--agent",
            "reader",
            "--prompt-file",
            "/nope/missing",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("/nope/missing"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn a_config_that_is_not_utf8_and_a_corrupt_store_are_named_and_refused() {
    let h = TestHome::new();
    h.ok(&["init"]);
    std::fs::write(
        h.path().join("config.toml"),
        b"[daemon]\nparallel = \xff\xfe\n",
    )
    .unwrap();
    let out = h.cmd(&["config", "show"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(err.starts_with("error: config "), "{err}");
    assert!(
        err.contains("config.toml") && err.contains("UTF-8"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let other = TestHome::new();
    std::fs::create_dir_all(other.path()).unwrap();
    std::fs::write(
        other.path().join("gitmoot.db"),
        "this is not a database at all, just text".repeat(200),
    )
    .unwrap();
    let out = other.cmd(&["job", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains(&other.path().join("gitmoot.db").display().to_string()),
        "{err}"
    );
}

/// Writes `set` (an SQL assignment) into job `id`'s row behind the store's back.
fn corrupt(h: &TestHome, set: &str, id: &str) {
    h.store()
        .conn()
        .sqlite()
        .unwrap()
        .execute(&format!("UPDATE jobs SET {set} WHERE id = ?1"), [id])
        .unwrap();
}

#[test]
fn a_corrupt_row_fails_only_its_job_and_reads_skip_it_by_name() {
    let h = TestHome::new();
    h.approver("echo", "fine");
    let poisoned = h.submit("echo", "poisoned", &[]);
    let others: Vec<String> = (0..3)
        .map(|i| h.submit("echo", &format!("job {i}"), &[]))
        .collect();
    corrupt(&h, "ephemeral = '{not json'", &poisoned);
    h.daemon_until_idle(2);
    for id in &others {
        assert_eq!(h.job(id).state, JobState::Succeeded, "{id}");
    }
    let job = h.job(&poisoned);
    assert_eq!(job.state, JobState::Failed);
    let error = job.error.unwrap();
    assert!(
        error.contains("quarantined") && error.contains("ephemeral"),
        "{error}"
    );
    let evs = events::for_job(h.store().conn(), &poisoned).unwrap();
    assert!(evs.iter().any(|e| e.kind == "job_quarantined"), "{evs:?}");

    // A row whose state is garbage: `job list` still lists the rest and names the bad one.
    corrupt(&h, "state = 'bogus'", &others[0]);
    let out = h.cmd(&["job", "list"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        listed.contains(&others[1]) && !listed.contains(&others[0]),
        "{listed}"
    );
    let err = stderr_of(&out);
    assert!(
        err.starts_with("warning: skipped job ") && err.contains(&others[0]),
        "{err}"
    );
    // The daemon still starts and runs new work.
    let next = h.submit("echo", "after", &[]);
    h.daemon_until_idle(1);
    assert_eq!(h.job(&next).state, JobState::Succeeded);
}

/// The relay sockets under the system's temporary folder, where none may be left.
fn relay_sockets_in_tmp() -> Vec<std::ffi::OsString> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("gitmoot-relay-"))
        .collect()
}

#[test]
fn the_relay_socket_lives_in_the_home_and_stale_ones_are_cleaned() {
    let h = TestHome::new();
    h.ok(&["init"]);
    let run = h.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    // A socket file left by a daemon that died (pid far beyond pid_max).
    let stale = run.join("relay-2147483600.sock");
    std::fs::write(&stale, "").unwrap();
    let before = relay_sockets_in_tmp();
    h.daemon_until_idle(1);
    assert!(!stale.exists(), "the stale socket was left");
    let left: Vec<_> = std::fs::read_dir(&run).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&run).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let after: Vec<_> = relay_sockets_in_tmp()
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    assert!(after.is_empty(), "{after:?}");
}

fn wait_exit(child: &mut std::process::Child) -> std::process::ExitStatus {
    let mut status = None;
    let done = daemon_support::wait_until(std::time::Duration::from_secs(60), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if !done {
        let _ = child.kill();
    }
    status.unwrap_or_else(|| child.wait().unwrap())
}

/// Live processes whose environment carries one of `ids` as their job marker.
fn marked_processes(ids: &[&String]) -> usize {
    let markers: Vec<String> = ids
        .iter()
        .map(|id| format!("GITMOOT_JOB_ID={id}"))
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            let alive = std::fs::read_to_string(e.path().join("stat")).is_ok_and(|st| {
                st.rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next())
                    .is_some_and(|state| state != 'Z')
            });
            alive
                && std::fs::read(e.path().join("environ")).is_ok_and(|env| {
                    env.split(|b| *b == 0)
                        .any(|kv| markers.iter().any(|m| kv == m.as_bytes()))
                })
        })
        .count()
}

fn running_jobs(h: &TestHome) -> Vec<String> {
    let store = h.store();
    let mut st = store
        .conn()
        .sqlite()
        .unwrap()
        .prepare("SELECT id FROM jobs WHERE state = 'running'")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn an_interrupted_wait_leaves_no_running_job_and_no_live_agent() {
    for (sig, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGKILL, -1),
    ] {
        let h = TestHome::new();
        let pidfile = h.file("agent.pid");
        h.shell_agent(
            "slow",
            &format!(
                "cat >/dev/null\necho $$ > {}\nsleep 300\n",
                pidfile.display()
            ),
        );
        let mut child = h
            .cmd(&["job", "run", "--agent", "slow", "--wait", "take your time"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(daemon_support::wait_until(
            std::time::Duration::from_secs(30),
            || std::fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n'))
        ));
        let agent = daemon_support::read_pid(&pidfile);
        signal(child.id(), sig);
        let status = wait_exit(&mut child);
        if code > 0 {
            assert_eq!(status.code(), Some(code), "signal {sig}");
            assert!(running_jobs(&h).is_empty(), "signal {sig}");
        } else {
            // Nothing runs in a SIGKILLed process: the agent's leader dies with it, and
            // the next daemon settles the job and kills what the leader left behind.
            let leader = std::fs::read_to_string(format!("/proc/{agent}/stat"))
                .ok()
                .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.to_string()))
                .and_then(|r| r.split_whitespace().nth(1).map(str::to_string))
                .and_then(|p| p.parse::<i32>().ok());
            if let Some(leader) = leader.filter(|p| *p > 1) {
                assert!(dies_within(10, leader));
            }
            h.daemon_until_idle(1);
            assert!(running_jobs(&h).is_empty());
        }
        assert!(
            dies_within(10, agent),
            "agent {agent} outlived the interrupted wait (signal {sig})"
        );
    }
}

#[test]
fn a_setsid_grandchild_cannot_hold_a_slot_past_the_timeout() {
    let h = TestHome::new();
    let pidfile = h.file("escaped.pid");
    h.shell_agent(
        "escaper",
        &format!(
            "cat >/dev/null\nsetsid sleep 300 &\necho $! > {}\nsleep 300\n",
            pidfile.display()
        ),
    );
    h.approver("echo", "fine");
    let stuck = h.submit("escaper", "escape", &["--timeout", "1s"]);
    let next = h.submit("echo", "after", &[]);
    let mut daemon = h
        .cmd(&["daemon", "run", "--until-idle", "--parallel", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = wait_exit(&mut daemon);
    assert!(status.success(), "the daemon was wedged");
    let job = h.job(&stuck);
    assert_eq!(job.state, JobState::Failed);
    assert!(job.error.unwrap().contains("timed out"));
    assert_eq!(h.job(&next).state, JobState::Succeeded);
    let escaped = daemon_support::read_pid(&pidfile);
    assert!(
        dies_within(10, escaped),
        "the setsid grandchild {escaped} survived"
    );
}

#[test]
fn oversized_output_keeps_its_tail_and_a_lost_result_fails_without_a_rerun() {
    let h = TestHome::new();
    let runs = h.file("runs.txt");
    h.shell_agent(
        "tail",
        &format!(
            "cat >/dev/null\nhead -c 5000000 /dev/zero | tr '\\0' x\necho\necho '{}'\n",
            result("approved", "at the end")
        ),
    );
    h.shell_agent(
        "lost",
        &format!(
            "cat >/dev/null\necho run >> {}\necho '{}'\nhead -c 5000000 /dev/zero | tr '\\0' x\n",
            runs.display(),
            result("approved", "in the middle")
        ),
    );
    let tail = h.submit("tail", "talk", &[]);
    let lost = h.submit("lost", "talk", &[]);
    h.daemon_until_idle(2);
    let job = h.job(&tail);
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.error);
    assert_eq!(job.result.unwrap()["summary"], "at the end");
    let job = h.job(&lost);
    // The result sits in the first megabyte here, so it is kept; only a cut one fails.
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.error);

    let cut = h.file("cut.txt");
    h.shell_agent(
        "cut",
        &format!(
            "cat >/dev/null\necho run >> {}\nhead -c 2000000 /dev/zero | tr '\\0' x\necho\n\
             echo '{}'\nhead -c 4000000 /dev/zero | tr '\\0' x\n",
            cut.display(),
            result("approved", "lost in the middle")
        ),
    );
    let id = h.submit("cut", "talk", &[]);
    h.daemon_until_idle(1);
    let job = h.job(&id);
    assert_eq!(job.state, JobState::Failed);
    assert!(
        job.error
            .as_deref()
            .unwrap()
            .starts_with("output cut at 4 MiB"),
        "{:?}",
        job.error
    );
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), "run\n", "re-run");
}

#[test]
fn a_read_only_shell_agent_cannot_write_where_the_kernel_enforces_it() {
    let h = TestHome::new();
    let target = h.file("written-by-agent");
    let keep = h.file("kept");
    std::fs::write(&keep, "mine").unwrap();
    let script = h.file("writer.sh");
    std::fs::write(
        &script,
        format!(
            r#"cat > /dev/null
if echo hi > {target} 2>/dev/null; then w=wrote; else w=refused; fi
rm -f {keep} 2>/dev/null
if echo hi > "$TMPDIR/scratch" && [ -s "$GITMOOT_PROMPT_FILE" ]; then t=tmp-ok; else t=tmp-bad; fi
echo "{{\"gitmoot_result\":{{\"decision\":\"approved\",\"summary\":\"$w $t\"}}}}"
"#,
            target = target.display(),
            keep = keep.display()
        ),
    )
    .unwrap();
    let command = format!("sh {}", script.display());
    let add = |name: &str, policy: &str| {
        h.cmd(&shell_agent_args(name, &command, &["--policy", policy]))
            .output()
            .unwrap()
    };
    let ro = add("sh-ro", "read-only");
    assert!(ro.status.success(), "{}", stderr_of(&ro));
    let ww = add("sh-ww", "workspace-write");
    assert!(ww.status.success(), "{}", stderr_of(&ww));
    let kimi = h
        .cmd(&[
            "agent",
            "add",
            "km-ro",
            "--runtime",
            "kimi",
            "--policy",
            "read-only",
        ])
        .output()
        .unwrap();
    let list = h.ok(&["agent", "list"]);
    let line = |name: &str| {
        list.lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .to_string()
    };
    assert!(line("sh-ww").ends_with("workspace-write"), "{list}");
    if !gitmoot::runtime::sandbox::enforceable() {
        // Kimi's headless mode has no permission switch: without Landlock its read-only
        // is advisory.
        assert!(
            stderr_of(&kimi).contains("warning: read-only is advisory for kimi agents"),
            "{}",
            stderr_of(&kimi)
        );
        assert!(line("km-ro").ends_with("read-only (advisory)"), "{list}");
        // A kernel without Landlock: nothing holds a shell agent to read-only, and it says so.
        assert!(
            stderr_of(&ro).starts_with("warning: read-only is advisory for shell agents"),
            "{}",
            stderr_of(&ro)
        );
        assert!(line("sh-ro").ends_with("read-only (advisory)"), "{list}");
        return;
    }
    assert!(stderr_of(&ro).is_empty(), "{}", stderr_of(&ro));
    assert!(line("sh-ro").ends_with("read-only"), "{list}");
    // Landlock holds every runtime, kimi included, to its policy.
    assert!(
        !stderr_of(&kimi).contains("advisory"),
        "{}",
        stderr_of(&kimi)
    );
    assert!(line("km-ro").ends_with("read-only"), "{list}");
    assert!(
        h.ok(&["agent", "show", "sh-ro"])
            .contains("policy:       read-only\n")
    );

    let ro_job = h.submit("sh-ro", "try to write", &[]);
    h.daemon_until_idle(1);
    let summary = |id: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&h.ok(&["job", "show", id, "--json"])).unwrap();
        v["result"]["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(summary(&ro_job), "refused tmp-ok");
    assert!(!target.exists(), "the read-only agent wrote a file");
    assert!(keep.exists(), "the read-only agent removed a file");

    // Outside its working folder a workspace-write agent is refused as well.
    let ww_job = h.submit("sh-ww", "try to write", &[]);
    h.daemon_until_idle(1);
    assert_eq!(summary(&ww_job), "refused tmp-ok");
    assert!(
        !target.exists(),
        "the workspace-write agent wrote outside its folder"
    );
    assert!(
        keep.exists(),
        "the workspace-write agent removed a file outside its folder"
    );
}

#[test]
fn a_daemon_killed_with_200_jobs_in_flight_settles_each_exactly_once_on_restart() {
    let h = TestHome::new();
    let (started, finished, gate) = (h.file("started"), h.file("finished"), h.file("gate"));
    // Half finish at once; half hold their slot until the gate opens (never, before the kill).
    h.shell_agent(
        "quick",
        &format!(
            "cat >/dev/null\necho '{}'\necho $GITMOOT_JOB_ID >> {}\n",
            result("approved", "quick"),
            finished.display()
        ),
    );
    h.shell_agent(
        "held",
        &format!(
            "cat >/dev/null\necho $GITMOOT_JOB_ID >> {s}\nwhile [ ! -e {g} ]; do sleep 0.2; done\n\
             echo '{r}'\necho $GITMOOT_JOB_ID >> {f}\n",
            s = started.display(),
            g = gate.display(),
            r = result("approved", "held"),
            f = finished.display()
        ),
    );
    let mut ids = Vec::new();
    for i in 0..200 {
        let agent = if i % 2 == 0 { "quick" } else { "held" };
        ids.push(h.submit(agent, &format!("job {i}"), &[]));
    }
    let mut daemon = h
        .cmd(&["daemon", "run", "--parallel", "200"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(
        daemon_support::wait_until(std::time::Duration::from_secs(90), || {
            lines(&started).len() == 100
        }),
        "the held agents never all ran"
    );
    signal(daemon.id(), libc::SIGKILL);
    daemon.wait().unwrap();
    // Every held agent must die with its daemon before the gate opens. The guard that
    // kills their groups is one more process to schedule, so on a loaded machine that
    // takes a moment; the wait is for the kill, and an agent the guard missed never goes
    // and fails the test here.
    let held: Vec<&String> = ids.iter().skip(1).step_by(2).collect();
    assert!(
        daemon_support::wait_until(std::time::Duration::from_secs(20), || {
            marked_processes(&held) == 0
        }),
        "{} held agents outlived their daemon",
        marked_processes(&held)
    );
    std::fs::write(&gate, "").unwrap();
    h.daemon_until_idle(50);

    assert!(running_jobs(&h).is_empty());
    let done: std::collections::HashSet<String> = lines(&finished).into_iter().collect();
    let store = h.store();
    for id in &ids {
        let job = gitmoot::store::jobs::require(store.conn(), id).unwrap();
        assert!(job.state.is_terminal(), "{id} is {}", job.state);
        if done.contains(id) {
            assert_eq!(job.state, JobState::Succeeded, "{id}: {:?}", job.error);
        }
        let settled = events::for_job(store.conn(), id)
            .unwrap()
            .into_iter()
            .filter(|e| ["succeeded", "failed", "blocked", "cancelled"].contains(&e.kind.as_str()))
            .count();
        assert_eq!(settled, 1, "{id} settled {settled} times");
    }
    // No held agent survived its daemon to finish unsupervised.
    let held_done = lines(&finished)
        .iter()
        .filter(|id| {
            ids.iter()
                .position(|i| i == *id)
                .is_some_and(|n| n % 2 == 1)
        })
        .count();
    assert_eq!(held_done, 0, "held agents ran on after the daemon died");
}
