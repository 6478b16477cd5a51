//! The supervisor against real `sh` children: capture, deadlines, kills, records, feeds.

use super::*;

fn sh(script: &str) -> Invocation {
    Invocation {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
        cwd: None,
        stdin: Stdin::Null,
        sandbox: None,
    }
}

fn no_kill() -> watch::Receiver<Option<KillRequest>> {
    watch::channel(None).1
}

#[tokio::test]
async fn captures_stdout_stderr_and_the_exit_code() {
    let mut inv = sh("cat; echo oops >&2; exit 3");
    inv.stdin = Stdin::Bytes(b"hello".to_vec());
    let out = run(&inv, None, no_kill(), |_| {}).await.unwrap();
    assert_eq!(out.stdout, b"hello");
    assert_eq!(out.stderr_summary(), "oops");
    assert_eq!(out.exit, Exit::Code(3));
}

#[tokio::test]
async fn stdin_beyond_the_pipe_buffer_arrives_whole_and_a_child_that_reads_none_is_fine() {
    // 1 MiB: most goes on the side once the child reads; the first part before it starts.
    let big: Vec<u8> = (0..1024 * 1024).map(|i| b'a' + (i % 26) as u8).collect();
    let mut inv = sh("cksum");
    inv.stdin = Stdin::Bytes(big.clone());
    let out = run(&inv, None, no_kill(), |_| {}).await.unwrap();
    let mut expect = sh("cksum");
    expect.stdin = Stdin::Null;
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &big).unwrap();
    expect.args[1] = format!("cksum < {}", file.path().display());
    let want = run(&expect, None, no_kill(), |_| {}).await.unwrap();
    assert_eq!(out.stdout, want.stdout);
    let mut deaf = sh("exit 0");
    deaf.stdin = Stdin::Bytes(big);
    let out = run(&deaf, None, no_kill(), |_| {}).await.unwrap();
    assert_eq!(out.exit, Exit::Code(0));
}

#[tokio::test]
async fn the_deadline_kills_the_whole_group() {
    let dir = crate::ids::scratch_dir("proc");
    let pidfile = dir.join("pid");
    let inv = sh(&format!(
        "sleep 300 & echo $! > {}; wait",
        pidfile.display()
    ));
    let mut leader = 0;
    let out = run(&inv, Some(Duration::from_millis(300)), no_kill(), |p| {
        leader = p
    })
    .await
    .unwrap();
    assert_eq!(out.exit, Exit::TimedOut(Duration::from_millis(300)));
    let grandchild: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SIGKILL is delivered asynchronously: allow the scheduler a moment on a busy box.
    let gone = |pid: i32| {
        (0..100).any(|_| {
            let dead = !crate::pid::is_alive(pid);
            if !dead {
                std::thread::sleep(Duration::from_millis(20));
            }
            dead
        })
    };
    assert!(gone(grandchild), "grandchild {grandchild} survived");
    assert!(gone(leader as i32));
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_kill_request_terminates_and_says_why() {
    let (tx, rx) = watch::channel(None);
    let inv = sh("sleep 300");
    let handle = tokio::spawn(async move { run(&inv, None, rx, |_| {}).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    tx.send(Some(KillRequest("operator".into()))).unwrap();
    let out = handle.await.unwrap().unwrap();
    assert_eq!(out.exit, Exit::Killed("operator".into()));
}

#[tokio::test]
async fn output_beyond_the_capture_limit_keeps_its_head_and_tail() {
    let inv = sh(&format!(
        "echo first; head -c {} /dev/zero; echo; echo last",
        CAPTURE_LIMIT + 10
    ));
    let out = run(&inv, None, no_kill(), |_| {}).await.unwrap();
    assert_eq!(out.stdout.len(), CAPTURE_LIMIT);
    assert!(out.stdout_truncated);
    assert!(out.stdout.starts_with(b"first\n"));
    assert!(out.stdout.ends_with(b"\nlast\n"));
}

#[tokio::test]
async fn a_recorded_run_is_captured_from_the_file_the_child_writes_which_stays_bounded() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("job.out");
    let big = 4 * CAPTURE_LIMIT;
    let inv = sh(&format!(
        "echo first; head -c {big} /dev/zero | tr '\\0' x; echo; sleep 0.1; echo last"
    ));
    let (tx, mut rx) = line_channel(1024, 1 << 20);
    let fed = tokio::spawn(async move {
        let mut fed = Vec::new();
        while let Some(line) = rx.recv().await {
            if line.stream == OutputStream::Stdout {
                fed.push(line.bytes);
            }
        }
        fed
    });
    let out = run_recorded(&inv, Some(&record), None, no_kill(), |_| {}, Some(tx))
        .await
        .unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert!(out.stdout_truncated);
    assert_eq!(out.stdout.len(), CAPTURE_LIMIT);
    assert!(out.stdout.starts_with(b"first\n"));
    assert!(out.stdout.ends_with(b"\nlast\n"));
    let fed = fed.await.unwrap();
    // The long line is fed in pieces only where the record was cut before it was read.
    assert_eq!(fed.first().map(Vec::as_slice), Some(&b"first"[..]));
    assert_eq!(fed.last().map(Vec::as_slice), Some(&b"last"[..]));
    assert!(fed.len() >= 3, "every line is fed from the file");
    // The file never held more than its cap: cut out of the file where the file system
    // collapses ranges, freed in place where it only punches holes.
    let meta = std::fs::metadata(&record).unwrap();
    let on_disk = meta.len().min(meta.blocks() * 512);
    assert!(on_disk <= CAPTURE_LIMIT as u64, "{on_disk} bytes on disk");
    let (kept, cut) = read_record(&record).unwrap();
    assert!(cut);
    assert_eq!(kept[..CAPTURE_HEAD], out.stdout[..CAPTURE_HEAD]);
    assert!(out.stdout.ends_with(&kept[CAPTURE_HEAD..]));
    assert!(
        kept.len() > CAPTURE_HEAD + 256 * 1024,
        "the record keeps the end"
    );
}

#[tokio::test]
async fn a_recorded_run_has_what_the_child_printed_on_disk_while_it_runs() {
    // What this side reads is in the record before anything else is done with it: a
    // daemon that dies after reading it loses nothing (what it had not read, the guard
    // saves, see `guard.rs`).
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("job.out");
    let inv = sh("echo result; sleep 5");
    let run = run_recorded(&inv, Some(&record), None, no_kill(), |_| {}, None);
    tokio::pin!(run);
    let seen = async {
        while std::fs::read(&record).unwrap_or_default().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        std::fs::read(&record).unwrap()
    };
    tokio::select! {
        bytes = seen => assert_eq!(bytes, b"result\n"),
        _ = &mut run => panic!("the child should still be running"),
    }
}

#[tokio::test]
async fn lines_are_fed_as_they_arrive_and_the_capture_is_unchanged() {
    let (tx, mut rx) = line_channel(16, 1 << 20);
    // The second line is printed only after the test has seen the first, so the
    // feed must deliver lines while the child still runs.
    let dir = crate::ids::scratch_dir("lines");
    let gate = dir.join("go");
    let inv = sh(&format!(
        "echo one; echo warn >&2; while [ ! -e {} ]; do sleep 0.01; done; printf 'two\\nthree'",
        gate.display()
    ));
    let handle =
        tokio::spawn(async move { run_streaming(&inv, None, no_kill(), |_| {}, Some(tx)).await });
    let mut seen = Vec::new();
    while seen.len() < 2 {
        seen.push(rx.recv().await.unwrap());
    }
    std::fs::write(&gate, "").unwrap();
    while let Some(line) = rx.recv().await {
        seen.push(line);
    }
    let out = handle.await.unwrap().unwrap();
    let text = |s: OutputStream| -> Vec<String> {
        seen.iter()
            .filter(|l| l.stream == s)
            .map(|l| String::from_utf8_lossy(&l.bytes).into_owned())
            .collect()
    };
    assert_eq!(text(OutputStream::Stdout), ["one", "two", "three"]);
    assert_eq!(text(OutputStream::Stderr), ["warn"]);
    assert_eq!(out.stdout, b"one\ntwo\nthree");
    assert_eq!(out.stderr_summary(), "warn");
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error_naming_it() {
    let mut inv = sh("true");
    inv.program = "/nonexistent/claude".into();
    let err = run(&inv, None, no_kill(), |_| {}).await.unwrap_err();
    assert!(err.to_string().contains("/nonexistent/claude"), "{err}");
}

#[tokio::test]
async fn a_child_leads_its_own_group_with_sigpipe_restored_and_no_signal_blocked() {
    // The test harness ignores SIGPIPE, as every Rust program does; a child must not
    // inherit that, nor the signal mask of the thread that started it. The shell execs
    // grep at once: a shell that forks blocks signals of its own while it waits.
    let inv = sh("exec grep -E '^(Pid|NSpgid|SigBlk|SigIgn):' /proc/self/status");
    let out = run(&inv, None, no_kill(), |_| {}).await.unwrap();
    let text = out.stdout_text();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(":\t"))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    assert_eq!(field("Pid"), field("NSpgid"), "the child leads its group");
    assert_eq!(field("SigBlk"), "0000000000000000");
    let ignored = u64::from_str_radix(field("SigIgn"), 16).unwrap();
    assert_eq!(
        ignored & (1 << (libc::SIGPIPE - 1)),
        0,
        "SIGPIPE ignored: {text}"
    );
}
