//! Every verb that prints to stdout, run through the real binary into a reader that takes
//! one line and leaves (`gitmoot … | head -1`): each must end with exit 0 and say nothing
//! on stderr beyond what it says anyway. The home is seeded so the listings print well
//! past a pipe's 64 KiB buffer, so their writes meet the closed pipe mid-stream.

use gitmoot_test_support as support;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use gitmoot::chat::ChatHooks;
use gitmoot::chat::messages::{SendOptions, send_message};
use gitmoot::chat::relay::{ENV_SOCKET, ENV_TOKEN};
use gitmoot::chat::threads::{self, NewThread};
use gitmoot::chat::write_retry;
use gitmoot::clock::SystemClock;
use gitmoot::config::OrchestrateConfig;
use gitmoot::domain::{Action, Capability};
use gitmoot::engine::{self, Env, Outcome, Settlement, SubmitRoot};
use gitmoot::home::Home;
use gitmoot::store::Store;
use gitmoot::store::agents::{self, Agent};

/// Rows enough that every listing prints more than a pipe holds.
const AGENTS: usize = 1600;
const JOBS: usize = 800;
const MESSAGES: usize = 400;

/// A result every agent of the small home prints at once.
const QUICK: &str = r#"cat >/dev/null
echo '{"gitmoot_result": {"decision": "approved", "summary": "done"}}'"#;

/// The exit code and stderr of `args` whose stdout reader reads one line and closes.
fn into_closed_reader(home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(support::bin())
        .arg("--home")
        .arg(home)
        .args(args)
        .env_remove("GITMOOT_HOME")
        .env_remove("GITMOOT_STORE")
        .env_remove(ENV_SOCKET)
        .env_remove(ENV_TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    drop(reader);
    let status = child.wait().unwrap();
    (status.code(), errors.join().unwrap())
}

fn agent(name: &str, repos: &[&str]) -> Agent {
    let mut a = Agent::shell(name, "true");
    a.capabilities = vec![Capability::Ask, Capability::Review];
    a.repos = repos.iter().map(|r| r.to_string()).collect();
    a
}

fn root(agent: &str, prompt: String) -> SubmitRoot {
    SubmitRoot {
        repo: Some("acme/api".into()),
        ..SubmitRoot::new(agent, Action::Ask, prompt, "cli")
    }
}

/// Settles `id` with `result` (the chat hooks attached, so an ask round of a promoted job
/// waits in its thread).
fn settle(store: &mut Store, id: &str, result: &str) {
    let cfg = OrchestrateConfig::default();
    let env = Env {
        clock: &SystemClock,
        cfg: &cfg,
        hooks: &ChatHooks,
    };
    let r = gitmoot::contract::parse(result).unwrap();
    store
        .write(|tx| engine::settle(tx, env, id, Settlement::of(Outcome::Parsed(r))))
        .unwrap();
}

/// The ids the mutating verbs act on, one each.
struct Seeded {
    roots: Vec<String>,
    big: String,
    asking: String,
    failed_leg: String,
    /// The thread a promoted job's open question waits in.
    question_thread: String,
}

fn seed(dir: &Path) -> Seeded {
    let home = Home::resolve(Some(dir)).unwrap();
    let mut store = Store::open_home(&home).unwrap();
    let line = "x".repeat(200);
    let roots = write_retry(&mut store, |tx| {
        for i in 0..AGENTS {
            agents::insert(tx, &agent(&format!("a{i:04}"), &[]))?;
        }
        for name in ["lead", "m1", "m2"] {
            agents::insert(tx, &agent(name, &["acme/api"]))?;
        }
        for name in ["gone1", "gone2"] {
            agents::insert(tx, &agent(name, &[]))?;
        }
        for t in ["room", "room2", "room3"] {
            threads::create(
                tx,
                &SystemClock,
                NewThread {
                    name: t,
                    repo: "acme/api",
                    title: None,
                    created_by: "human",
                },
            )?;
        }
        let mut roots = Vec::new();
        for i in 0..JOBS {
            let id = engine::submit_root(tx, &SystemClock, root("a0000", format!("{i} {line}")))?;
            roots.push(id);
        }
        Ok::<_, gitmoot::chat::ChatError>(roots)
    })
    .unwrap();
    let big = store
        .write(|tx| engine::submit_root(tx, &SystemClock, root("a0001", line.repeat(600))))
        .unwrap();
    for i in 0..MESSAGES {
        let body = format!("@a0000 note {i}: {line}");
        send_message(
            &mut store,
            &SystemClock,
            "room",
            None,
            &body,
            &SendOptions::default(),
        )
        .unwrap();
    }
    let asking = roots[JOBS - 1].clone();
    settle(
        &mut store,
        &asking,
        r#"{"gitmoot_result": {"decision": "approved", "summary": "ask", "human_questions": [{"id": "q1", "prompt": "Which day?"}]}}"#,
    );
    let fanning = roots[JOBS - 2].clone();
    settle(
        &mut store,
        &fanning,
        r#"{"gitmoot_result": {"decision": "approved", "summary": "fan out", "delegations": [{"id": "risky", "agent": "a0002", "action": "ask", "prompt": "try it", "failure_policy": "escalate_human"}]}}"#,
    );
    let failed_leg = format!("{fanning}/risky");
    settle(
        &mut store,
        &failed_leg,
        r#"{"gitmoot_result": {"decision": "failed", "summary": "no"}}"#,
    );
    let promoted = gitmoot::chat::promote::task_message(
        &mut store,
        &SystemClock,
        "room3",
        None,
        "@lead which day?",
        Action::Ask,
    )
    .unwrap();
    settle(
        &mut store,
        &promoted.job_id,
        r#"{"gitmoot_result": {"decision": "approved", "summary": "ask", "human_questions": [{"id": "q1", "prompt": "Which day?"}]}}"#,
    );
    Seeded {
        roots,
        big,
        asking,
        failed_leg,
        question_thread: gitmoot::chat::slug::job_thread_slug(&promoted.job_id),
    }
}

/// The id of the memory observation `chat remember` records (printed by `--json`).
fn remembered(home: &Path, seq: &str) -> String {
    let v = support::json(
        home,
        &[
            "chat", "remember", "room", seq, "--agent", "a0000", "--tier", "general", "--json",
        ],
    );
    v["observation"]["id"].as_i64().unwrap().to_string()
}

/// Runs each case into a closed reader: exit 0, and stderr exactly `expected` (empty for
/// all but the verbs that print a hint whatever happens to stdout).
fn check(home: &Path, cases: &[(Vec<String>, &str)]) {
    let mut failed = Vec::new();
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stderr) = into_closed_reader(home, &args);
        let stderr_ok = if expected.is_empty() {
            stderr.is_empty()
        } else {
            stderr.starts_with(expected) && !stderr.contains("error")
        };
        if code != Some(0) || !stderr_ok {
            failed.push(format!("{args:?}: exit {code:?}, stderr {stderr:?}"));
        }
    }
    assert!(
        failed.is_empty(),
        "into a closed pipe:\n{}",
        failed.join("\n")
    );
}

fn case(args: &[&str]) -> (Vec<String>, &'static str) {
    (args.iter().map(|s| s.to_string()).collect(), "")
}

#[test]
fn every_printing_verb_ends_quietly_when_its_reader_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let s = seed(&home);
    let obs = [remembered(&home, "1"), remembered(&home, "2")];
    support::stdout(&home, &["memory", "confirm", &obs[1]]);
    let result = dir.path().join("result.txt");
    std::fs::write(
        &result,
        r#"{"gitmoot_result": {"decision": "approved", "summary": "ok"}}"#,
    )
    .unwrap();
    let copy_to = format!("sqlite:{}", dir.path().join("copy.db").display());
    let opened = support::stdout(&home, &["job", "open", "--type", "review", "looked"]);
    let opened = opened.trim();
    let verdict = ["--decision", "approved", "--summary", "fine"];
    let (r, big) = (&s.roots, s.big.as_str());
    let mut cases = vec![
        case(&["--help"]),
        case(&["--version"]),
        case(&["job", "--help"]),
        case(&["completions", "bash"]),
        case(&["completions", "zsh"]),
        case(&["completions", "fish"]),
        case(&["man"]),
        case(&["man", "job", "list"]),
        case(&[
            "agent",
            "add",
            "fresh",
            "--runtime",
            "shell",
            "--command",
            "true",
        ]),
        case(&["agent", "list"]),
        case(&["agent", "list", "--json"]),
        case(&["agent", "show", "a0000"]),
        case(&["agent", "show", "a0000", "--json"]),
        case(&["agent", "rm", "gone1"]),
        case(&["job", "list", "--all"]),
        case(&["job", "list", "--all", "--json"]),
        case(&["job", "list", "--all", "--jsonl"]),
        case(&["job", "show", big]),
        case(&["job", "show", big, "--json"]),
        case(&["job", "tree", big]),
        case(&["job", "tree", big, "--json"]),
        case(&["job", "events", &r[JOBS - 2]]),
        case(&["job", "events", &r[JOBS - 2], "--json"]),
        case(&["job", "logs", big]),
        case(&["job", "logs", big, "--json"]),
        case(&["job", "pending"]),
        case(&["job", "pending", "--json"]),
        case(&["job", "kill", &r[0]]),
        case(&["job", "kill", &r[1], "--json"]),
        case(&["job", "cancel", &r[2]]),
        case(&["job", "answer", &s.asking, "q1: monday"]),
        case(&["job", "resume", &s.failed_leg, "retry"]),
        case(&["job", "open", "--type", "review", "a look"]),
        case(&["job", "open", "--type", "review", "a look", "--json"]),
        case(&["job", "note", opened, "halfway"]),
        case(&[&["job", "close", opened][..], &verdict].concat()),
        case(&[&["job", "record", "a review"][..], &verdict].concat()),
        case(&[&["job", "record", "a review", "--json"][..], &verdict].concat()),
        case(&["job", "run", "--agent", "a0000", "--json", "more"]),
        case(&["result", "check", result.to_str().unwrap()]),
        case(&["config", "show"]),
        case(&["config", "show", "--json"]),
        case(&["config", "path"]),
        case(&["daemon", "status"]),
        case(&["daemon", "status", "--json"]),
        case(&["chat", "create", "fresh", "--repo", "acme/api"]),
        case(&["chat", "create", "fresh2", "--repo", "acme/api", "--json"]),
        case(&["chat", "list"]),
        case(&["chat", "list", "--json"]),
        case(&["chat", "show", "room"]),
        case(&["chat", "show", "room", "--json"]),
        case(&["chat", "send", "room2", "hello @a0001"]),
        case(&["chat", "send", "room2", "hello again", "--json"]),
        case(&["chat", "close", "room2"]),
        case(&["chat", "reopen", "room2", "--json"]),
        case(&["chat", "rename", "room2", "Room two"]),
        case(&["chat", "inbox", "a0000", "--all"]),
        case(&["chat", "inbox", "a0000", "--all", "--json"]),
        case(&["chat", "inbox", "a0000", "--all", "--jsonl"]),
        case(&["chat", "read", "a0001", "--all"]),
        case(&["chat", "seen", "room"]),
        case(&["chat", "task", "room2", "@a0001 look at it"]),
        case(&["chat", "answer", &s.question_thread, "q1: tuesday"]),
        case(&["chat", "remember", "room", "3", "--agent", "a0000"]),
        case(&["chat", "wait", "room", "--timeout", "1s"]),
        case(&["memory", "list"]),
        case(&["memory", "list", "--json"]),
        case(&["memory", "confirm", &obs[0]]),
        case(&["memory", "promote", &obs[1], "--to-shared"]),
        case(&[
            "moot",
            "plan",
            "what next",
            "--agents",
            "m1,m2",
            "--repo",
            "acme/api",
        ]),
        case(&["orchestrate", "review-panel", "check it", "--agent", "lead"]),
        case(&[
            "orchestrate",
            "verifier",
            "build it",
            "--agent",
            "lead",
            "--json",
        ]),
        case(&["store", "copy", "--to", &copy_to]),
    ];
    // `job run` names the queued job on stdout and, with no daemon, hints on stderr.
    cases.push((
        ["job", "run", "--agent", "a0000", "more"]
            .map(String::from)
            .to_vec(),
        "hint: ",
    ));
    check(&home, &cases);
}

#[test]
fn the_streaming_verbs_end_quietly_when_their_reader_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    support::shell_agent(&home, "quick", QUICK, &[]);
    for i in 0..30 {
        support::stdout(&home, &["job", "run", "--agent", "quick", &format!("t{i}")]);
    }
    let cases = vec![
        case(&["daemon", "run", "--until-idle", "--parallel", "2"]),
        case(&["job", "run", "--agent", "quick", "--wait", "now"]),
        case(&["job", "run", "--agent", "quick", "--wait", "--json", "now"]),
        case(&["demo-agent", "scout"]),
        case(&["bench", "--only", "parse"]),
    ];
    check(&home, &cases);
    let scene = dir.path().join("scene");
    check(&scene, &[case(&["demo", "--headless", "--speed", "0"])]);
}
