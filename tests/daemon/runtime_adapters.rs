//! Adapter tests through the real daemon with fake `claude`, `codex` and `kimi`
//! executables (tests/fixtures) that print the real CLIs' output formats: the arguments
//! built for each autonomy policy, model and effort, and the text, usage and cost read back.

use gitmoot_test_support::daemon as daemon_support;

use std::path::{Path, PathBuf};

use daemon_support::{TestHome, git_checkout, succeed};
use gitmoot::domain::JobState;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn setup(extra_config: &str) -> TestHome {
    let h = TestHome::new();
    h.config(&format!(
        "[runtimes.claude]\npath = \"{}\"\nenv = [\"FAKE_*\"]\n[runtimes.codex]\npath = \"{}\"\n\
         default_model = \"gpt-5\"\nenv = [\"FAKE_*\"]\n[runtimes.kimi]\npath = \"{}\"\nenv = [\"FAKE_*\"]\n\
         {extra_config}",
        fixture("fake-claude").display(),
        fixture("fake-codex").display(),
        fixture("fake-kimi").display()
    ));
    h
}

fn run_daemon(h: &TestHome) -> Vec<Value> {
    // Confined agents write only their runtime's state folder (and their own): the fakes
    // log into one folder that is each runtime's state folder at once.
    let state = h.file(".kimi");
    std::fs::create_dir_all(&state).unwrap();
    let log = state.join("fake.log");
    succeed(
        h.cmd(&["daemon", "run", "--until-idle", "--parallel", "1"])
            .env("HOME", h.file(""))
            .env("CLAUDE_CONFIG_DIR", &state)
            .env("CODEX_HOME", &state)
            .env("FAKE_LOG", &log),
    );
    std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn argv(entry: &Value) -> Vec<String> {
    entry["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// The arguments before the trailing `-- <prompt>`.
fn flags(entry: &Value) -> Vec<String> {
    let a = argv(entry);
    let end = a.iter().position(|x| x == "--").unwrap_or(a.len());
    a[..end].to_vec()
}

#[test]
fn claude_gets_permission_model_and_effort_and_reports_usage_and_cost() {
    let h = setup("");
    let cases = [
        ("ro", "read-only", Some("plan")),
        ("ww", "workspace-write", Some("acceptEdits")),
        ("dfa", "danger-full-access", Some("bypassPermissions")),
        ("au", "auto", None),
    ];
    let roots = agent_per_policy(
        &h,
        "claude",
        &cases,
        &["--model", "claude-opus-4", "--effort", "high"],
        |name| format!("review as {name}"),
    );
    let log = run_daemon(&h);
    assert_eq!(log.len(), 4);
    for ((name, _, mode), entry) in cases.iter().zip(&log) {
        let mut want: Vec<String> = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-opus-4",
            "--effort",
            "high",
        ]
        .map(String::from)
        .to_vec();
        if let Some(m) = mode {
            want.extend(["--permission-mode".to_string(), m.to_string()]);
        }
        assert_eq!(flags(entry), want, "{name}");
        let a = argv(entry);
        assert!(
            a.last()
                .unwrap()
                .starts_with(&format!("review as {name}\n\n"))
        );
        assert!(
            a.last().unwrap().contains("gitmoot_result"),
            "the contract is appended"
        );
    }
    for root in &roots {
        let j = h.job(root);
        assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
        assert_eq!(j.result.as_ref().unwrap()["summary"], "claude reviewed it");
        // Cache reads and writes are their own figures, not input tokens (issue 15 item 14).
        assert_eq!((j.tokens_in, j.tokens_out), (120, 55));
        assert!(
            (j.cost_usd - 0.0421).abs() < 1e-9,
            "vendor cost wins: {}",
            j.cost_usd
        );
        let shown: Value = serde_json::from_str(&h.ok(&["job", "show", root, "--json"])).unwrap();
        assert_eq!(shown["tokens"]["in"], 120);
        assert_eq!(shown["tokens"]["cache_read"], 1000);
        assert_eq!(shown["tokens"]["cache_creation"], 30);
    }
}

#[test]
fn claude_not_logged_in_fails_with_the_envelope_text() {
    job_fails_with(
        ("cl", "claude"),
        "NOT_LOGGED_IN please",
        "claude: Not logged in · Please run /login",
    );
}

/// An agent `(name, runtime)` given `prompt`, which its fake turns into a failure, fails
/// its job with exactly `error`.
fn job_fails_with((name, runtime): (&str, &str), prompt: &str, error: &str) {
    let h = setup("");
    h.ok(&["agent", "add", name, "--runtime", runtime]);
    let root = h.submit(name, prompt, &[]);
    run_daemon(&h);
    let j = h.job(&root);
    assert_eq!(j.state, JobState::Failed);
    assert_eq!(j.error.as_deref(), Some(error));
}

/// Registers a `runtime` agent for each case's (name, policy), `flags` appended, and
/// submits `prompt(name)` to it; returns the roots in case order.
fn agent_per_policy(
    h: &TestHome,
    runtime: &str,
    cases: &[(&str, &str, Option<&str>)],
    flags: &[&str],
    prompt: impl Fn(&str) -> String,
) -> Vec<String> {
    cases
        .iter()
        .map(|(name, policy, _)| {
            let mut args = vec![
                "agent",
                "add",
                name,
                "--runtime",
                runtime,
                "--policy",
                policy,
            ];
            args.extend_from_slice(flags);
            h.ok(&args);
            h.submit(name, &prompt(name), &[])
        })
        .collect()
}

#[test]
fn codex_gets_sandbox_effort_git_check_and_closed_stdin_and_reports_usage() {
    let repo = tempfile::tempdir().unwrap();
    git_checkout(repo.path(), &[("README", "hi")]);
    let h = setup(&format!(
        "[repos.\"acme/api\"]\npath = \"{}\"\n",
        repo.path().display()
    ));
    let cases = [
        ("ro", "read-only", Some("read-only")),
        ("ww", "workspace-write", Some("workspace-write")),
        ("dfa", "danger-full-access", Some("danger-full-access")),
        ("au", "auto", None),
    ];
    let roots = agent_per_policy(&h, "codex", &cases, &["--effort", "high"], |_| {
        "check it".into()
    });
    h.ok(&[
        "agent",
        "add",
        "inrepo",
        "--runtime",
        "codex",
        "--model",
        "o4-mini",
    ]);
    let in_repo = h.submit("inrepo", "check the repo", &["--repo", "acme/api"]);
    let log = run_daemon(&h);
    assert_eq!(log.len(), 5);
    for ((name, _, sandbox), entry) in cases.iter().zip(&log) {
        let mut want: Vec<String> = vec!["exec".into(), "--json".into()];
        if let Some(s) = sandbox {
            want.extend(["--sandbox".to_string(), s.to_string()]);
        }
        want.extend(
            [
                "--skip-git-repo-check",
                "--model",
                "gpt-5",
                "-c",
                "model_reasoning_effort=\"high\"",
            ]
            .map(String::from),
        );
        assert_eq!(flags(entry), want, "{name}");
        assert_eq!(entry["stdin"], "", "stdin must be closed");
    }
    let repo_run = &log[4];
    // agent add defaults to read-only; inside a git checkout no skip flag is passed.
    assert_eq!(
        flags(repo_run),
        [
            "exec",
            "--json",
            "--sandbox",
            "read-only",
            "--model",
            "o4-mini"
        ]
    );
    assert_eq!(
        Path::new(repo_run["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        repo.path().canonicalize().unwrap(),
        "a root job runs in the repo's shared checkout"
    );
    for root in roots.iter().chain([&in_repo]) {
        let j = h.job(root);
        assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
        assert_eq!(j.result.as_ref().unwrap()["summary"], "codex checked it");
        assert_eq!((j.tokens_in, j.tokens_out), (1200, 80));
        assert!(
            j.cost_usd > 0.0,
            "priced from the table when codex reports no cost"
        );
    }
}

#[test]
fn codex_failure_reports_its_own_error_event() {
    job_fails_with(
        ("cx", "codex"),
        "FAIL now",
        "codex: stream disconnected before completion",
    );
}

#[test]
fn codex_printing_plain_text_succeeds_with_no_usage_and_its_repair_quotes_the_output() {
    let h = setup("");
    h.ok(&["agent", "add", "cx", "--runtime", "codex"]);
    let ok = h.submit("cx", "PLAINTEXT ok", &[]);
    let repaired = h.submit("cx", "PLAINTEXT", &[]);
    let log = run_daemon(&h);
    let j = h.job(&ok);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    assert_eq!(
        j.result.as_ref().unwrap()["summary"],
        "plain codex checked it"
    );
    assert_eq!((j.tokens_in, j.tokens_out), (0, 0));
    let j = h.job(&repaired);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    assert_eq!((j.tokens_in, j.tokens_out), (0, 0));
    let repair = argv(log.last().unwrap());
    let prompt = repair.last().unwrap();
    assert!(
        prompt.contains("Previous raw output:\nOpenAI Codex v0.1.0")
            && prompt.contains("no contract in this answer"),
        "{prompt}"
    );
}

#[test]
fn codex_usage_is_each_jobs_own_because_no_session_is_resumed_and_readme_says_so() {
    let h = setup("");
    h.ok(&["agent", "add", "cx", "--runtime", "codex"]);
    let first = h.submit("cx", "check one", &[]);
    let second = h.submit("cx", "check two", &[]);
    let log = run_daemon(&h);
    assert_eq!(log.len(), 2);
    for entry in &log {
        let a = argv(entry);
        assert_eq!(a[..2], ["exec", "--json"], "a fresh session: {a:?}");
        assert!(!a.iter().any(|x| x == "resume"), "{a:?}");
    }
    // The fake reports 1200/80 per session: the second job is not 2400/160.
    for root in [&first, &second] {
        let j = h.job(root);
        assert_eq!((j.tokens_in, j.tokens_out), (1200, 80));
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains("gitmoot never resumes a codex session")
            && readme.contains("already that job's own delta"),
        "README must say codex usage is already a per-job delta (000:286)"
    );
}

#[test]
fn kimi_gets_model_and_prompt_and_reports_text_and_usage() {
    let h = setup("");
    h.ok(&[
        "agent",
        "add",
        "km",
        "--runtime",
        "kimi",
        "--model",
        "kimi-k2",
    ]);
    let root = h.submit("km", "look around", &[]);
    let log = run_daemon(&h);
    let a = argv(&log[0]);
    assert_eq!(a[..3], ["--model", "kimi-k2", "-p"]);
    assert!(a[3].starts_with("look around\n\n"));
    assert_eq!(a[4..], ["--output-format", "stream-json"]);
    let j = h.job(&root);
    assert_eq!(j.state, JobState::Succeeded, "{:?}", j.error);
    assert_eq!(j.result.as_ref().unwrap()["summary"], "kimi looked");
    assert_eq!((j.tokens_in, j.tokens_out), (300, 20));
    assert!(j.raw_output.unwrap().starts_with("Let me look.\n"));
}

/// Every activity kind each adapter produces from a stream recorded off the real CLI
/// (Claude Code 2.1.197 and codex-cli 0.171.0 against the tests' model stand-ins, see
/// tests/real_cli.rs), in order.
#[test]
fn recorded_real_streams_pin_every_activity_kind() {
    use gitmoot::domain::RuntimeKind;
    use gitmoot::runtime::activity::{ActivityKind as K, StreamParser};
    use gitmoot::runtime::{OutputLine, OutputStream};

    fn parse(kind: RuntimeKind, stdout: &str, stderr: &str) -> (Vec<(K, String)>, StreamParser) {
        let mut p = StreamParser::new(kind);
        let mut got = Vec::new();
        for (stream, text) in [
            (OutputStream::Stdout, stdout),
            (OutputStream::Stderr, stderr),
        ] {
            for line in text.lines() {
                let line = OutputLine {
                    stream,
                    bytes: line.as_bytes().to_vec(),
                };
                got.extend(p.line(&line).into_iter().map(|a| (a.kind, a.summary)));
            }
        }
        (got, p)
    }
    let read = |n: &str| std::fs::read_to_string(fixture(n)).unwrap();

    let (claude, p) = parse(RuntimeKind::Claude, &read("claude-stream.jsonl"), "");
    let kinds: Vec<K> = claude.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        [K::Message, K::ToolCall, K::ToolResult, K::Message, K::Usage],
        "{claude:?}"
    );
    assert_eq!(claude[1].1, "$ ls");
    assert_eq!(claude[2].1, "a.txt");
    assert_eq!(
        claude[4].1,
        "2400 in · 80 out · cache 4000 read / 600 written · $0.0198"
    );
    let u = p.usage();
    assert_eq!((u.tokens_in, u.tokens_out, u.cache_read), (2400, 80, 4000));
    assert_eq!(u.cost_usd, Some(0.01975));

    let (codex, p) = parse(
        RuntimeKind::Codex,
        &read("codex-stream.jsonl"),
        &read("codex-stderr.txt"),
    );
    let kinds: Vec<K> = codex.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        [
            K::Error,
            K::Command,
            K::ToolResult,
            K::Message,
            K::Usage,
            K::Stderr,
            K::Stderr
        ],
        "{codex:?}"
    );
    assert_eq!(codex[1].1, "$ /bin/bash -lc ls");
    assert_eq!(codex[2].1, "exit 0: a.txt");
    assert!(codex[3].1.starts_with("The folder holds the files."));
    assert_eq!((p.usage().tokens_in, p.usage().tokens_out), (2400, 80));
}
