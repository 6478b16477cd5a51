//! Containment by the kernel, through the real binary on scratch homes: a confined shell
//! agent writes only where its policy lets it, never the home or the store, never learns
//! the home's path, can neither chmod outside its folders nor signal its daemon, and
//! nothing it started outlives a SIGKILLed daemon.

use gitmoot_test_support::daemon as daemon_support;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use daemon_support::{TestHome, shell_agent_args};
use gitmoot::domain::JobState;

/// A shell agent of `policy` whose command is `script` (run by `sh -c` itself, so `$PPID`
/// is the daemon), reporting what it found as its summary: it may not write a file to say so.
fn confined(h: &TestHome, name: &str, policy: &str, script: &str) {
    let command = format!(
        "cat >/dev/null; r=''\n{script}\necho \"{{\\\"gitmoot_result\\\":{{\\\"decision\\\":\\\"approved\\\",\\\"summary\\\":\\\"$r\\\"}}}}\""
    );
    h.ok(&shell_agent_args(name, &command, &["--policy", policy]));
}

/// The summary of the job `name` ran for one prompt, after a daemon ran it.
fn run_summary(h: &TestHome, name: &str) -> String {
    let id = h.submit(name, "try", &[]);
    h.daemon_until_idle(1);
    let job = h.job(&id);
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.error);
    job.result.unwrap()["summary"]
        .as_str()
        .unwrap()
        .trim()
        .to_string()
}

/// A shell test `if (CMD); then r="$r YES"; else r="$r NO"; fi`, in a subshell: a failed
/// redirection of a special builtin would end the agent's shell.
fn probe(cmd: &str, yes: &str, no: &str) -> String {
    format!("if ( {cmd} ) 2>/dev/null; then r=\"$r {yes}\"; else r=\"$r {no}\"; fi\n")
}

#[test]
fn a_workspace_write_shell_agent_writes_only_its_folders_and_never_learns_the_home() {
    let h = TestHome::new();
    let home = h.path();
    let outside = h.file("outside");
    let gitmoot = TestHome::bin();
    let script = [
        probe(
            &format!("echo x > {}/planted 2>/dev/null", home.display()),
            "home-written",
            "home-refused",
        ),
        probe(
            &format!(": >> {}/gitmoot.db 2>/dev/null", home.display()),
            "store-opened",
            "store-refused",
        ),
        probe(
            &format!(
                "{} --home {} agent add evil --runtime shell --command true --policy danger-full-access >/dev/null 2>&1",
                gitmoot.display(),
                home.display()
            ),
            "agent-added",
            "agent-refused",
        ),
        probe(
            &format!("echo x > {} 2>/dev/null", outside.display()),
            "outside-written",
            "outside-refused",
        ),
        probe("echo x > ./mine && chmod 700 ./mine", "cwd-ok", "cwd-refused"),
        probe("echo x > \"$TMPDIR/mine\"", "tmp-ok", "tmp-refused"),
        probe(
            &format!("env | grep -qF '{}'", home.display()),
            "env-names-home",
            "env-clean",
        ),
        probe(
            &format!(
                "case \"$GITMOOT_PROMPT_FILE:$(pwd):$TMPDIR\" in *'{}'*) false ;; *) true ;; esac",
                home.display()
            ),
            "paths-outside",
            "paths-in-home",
        ),
    ]
    .concat();
    confined(&h, "ww", "workspace-write", &script);
    assert_eq!(
        run_summary(&h, "ww"),
        "home-refused store-refused agent-refused outside-refused cwd-ok tmp-ok env-clean paths-outside"
    );
    assert!(!home.join("planted").exists());
    assert!(!outside.exists());
    assert!(
        !h.ok(&["agent", "list"]).contains("evil"),
        "the agent registered an agent of its own"
    );
}

#[test]
fn a_read_only_agent_can_neither_chmod_outside_nor_signal_its_daemon() {
    let h = TestHome::new();
    let victim = h.file("victim");
    std::fs::write(&victim, "mine").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let script = [
        probe(
            &format!("chmod 777 {} 2>/dev/null", victim.display()),
            "chmod-done",
            "chmod-refused",
        ),
        probe(
            &format!("chown \"$(id -u)\" {} 2>/dev/null", victim.display()),
            "chown-done",
            "chown-refused",
        ),
        probe(
            "kill -0 $PPID 2>/dev/null",
            "daemon-signalled",
            "signal-refused",
        ),
        probe(
            "echo x > \"$TMPDIR/own\" && chmod 700 \"$TMPDIR/own\"",
            "tmp-ok",
            "tmp-refused",
        ),
    ]
    .concat();
    confined(&h, "ro", "read-only", &script);
    assert_eq!(
        run_summary(&h, "ro"),
        "chmod-refused chown-refused signal-refused tmp-ok"
    );
    let mode = std::fs::metadata(&victim).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_setsid_double_forked_grandchild_dies_within_a_second_of_its_daemons_sigkill() {
    let h = TestHome::new();
    let pidfile = h.file("grandchild.pid");
    h.shell_agent(
        "escaper",
        &format!(
            "cat >/dev/null\nsetsid sh -c 'sleep 300 & echo $! > {}' </dev/null >/dev/null 2>&1\nsleep 300\n",
            pidfile.display()
        ),
    );
    h.submit("escaper", "escape", &[]);
    let mut daemon = h
        .cmd(&["daemon", "run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        daemon_support::wait_until(Duration::from_secs(30), || {
            std::fs::read_to_string(&pidfile).is_ok_and(|s| s.trim().parse::<i32>().is_ok())
        }),
        "the agent never started its grandchild"
    );
    let grandchild = daemon_support::read_pid(&pidfile);
    assert!(daemon_support::alive(grandchild));
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let gone = daemon_support::wait_until(Duration::from_secs(1), || {
        !daemon_support::alive(grandchild)
    });
    if !gone {
        // SAFETY: kill(2) on the pid the test's own agent wrote down.
        unsafe { libc::kill(grandchild, libc::SIGKILL) };
    }
    assert!(gone, "the setsid grandchild outlived its daemon");
}
