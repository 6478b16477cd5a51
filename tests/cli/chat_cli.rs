//! `gitmoot chat|moot|memory` through the real binary: every verb, its flags, its texts,
//! its `--json` shape and its exit code (0 ok, 1 refused, 2 bad input).

use assert_cmd::Command;
use gitmoot_test_support::agent_args::shell_agent_args;
use predicates::prelude::*;
use serde_json::Value;

struct Home(tempfile::TempDir);

impl Home {
    fn new() -> Self {
        let h = Self(tempfile::tempdir().unwrap());
        h.cat_agent("codex-b", &["--repo", "owner/repo"]);
        h.cat_agent("researcher", &[]);
        h
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("gitmoot").unwrap();
        c.arg("--home").arg(self.0.path()).args(args);
        c.env_remove("GITMOOT_RELAY_SOCKET")
            .env_remove("GITMOOT_RELAY_TOKEN");
        c
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self
            .cmd(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }

    fn fails(&self, args: &[&str], code: i32, text: &str) {
        self.cmd(args)
            .assert()
            .code(code)
            .stderr(predicate::str::starts_with("error:").and(predicate::str::contains(text)));
    }

    /// Registers a shell agent running `cat`, with `extra` flags.
    fn cat_agent(&self, name: &str, extra: &[&str]) {
        self.ok(&shell_agent_args(name, "cat", extra));
    }

    /// Each (args, exit code, stderr text) must fail as `fails` checks.
    fn fails_each(&self, cases: &[(&[&str], i32, &str)]) {
        for (args, code, text) in cases {
            self.fails(args, *code, text);
        }
    }

    fn room(&self) -> &Self {
        self.ok(&[
            "chat",
            "create",
            "Release Room!",
            "--repo",
            "owner/repo",
            "--topic",
            "Release coordination",
        ]);
        self
    }
}

#[test]
fn create_slugifies_and_validates() {
    let h = Home::new();
    let out = h.ok(&["chat", "create", "Release Room!", "--repo", "owner/repo"]);
    assert!(out.starts_with("thread: release-room\nid: chat-"), "{out}");
    // Issue 16: the title keeps the name verbatim; only the slug is normalised.
    assert!(
        out.contains("name: Release Room!\n"),
        "the title is the name as typed: {out}"
    );
    assert!(out.contains("state: open\n"));
    h.fails_each(&[
        (
            &["chat", "create", "***", "--repo", "owner/repo"],
            2,
            "invalid chat name \"***\": a thread slug must be topic-path-safe",
        ),
        (
            &["chat", "create", "x", "--repo", "noslash"],
            2,
            "must look like owner/name",
        ),
    ]);
    h.cmd(&["chat", "create", "x"]).assert().code(2);
    // A duplicate name is bad input: exit 2 like every validation error.
    h.fails(
        &["chat", "create", "release room", "--repo", "owner/repo"],
        2,
        "a chat thread \"release-room\" already exists in owner/repo",
    );
    // The same slug is fine in another repo.
    let v = h.json(&[
        "chat",
        "create",
        "release-room",
        "--repo",
        "other/repo",
        "--json",
    ]);
    assert_eq!(v["slug"], "release-room");
    assert_eq!(v["repo"], "other/repo");
}

#[test]
fn list_shows_open_threads_most_recent_first_and_json_is_exact() {
    let h = Home::new();
    assert_eq!(h.ok(&["chat", "list"]), "no chat threads\n");
    assert_eq!(h.json(&["chat", "list", "--json"]), serde_json::json!([]));
    h.room();
    h.ok(&["chat", "create", "second", "--repo", "owner/other"]);
    h.ok(&["chat", "send", "release-room", "bump"]);
    let v = h.json(&["chat", "list", "--json"]);
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(
        list[0]["slug"], "release-room",
        "most recent activity first"
    );
    let mut keys: Vec<&str> = list[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "id",
            "last_activity",
            "repo",
            "slug",
            "state",
            "title",
            "unread"
        ]
    );
    assert_eq!(list[0]["title"], "Release coordination");
    assert_eq!(list[0]["unread"], 0, "the human's own post is not unread");
    let v = h.json(&["chat", "list", "--repo", "owner/other", "--json"]);
    assert_eq!(v.as_array().unwrap().len(), 1);
    h.ok(&["chat", "close", "second"]);
    assert_eq!(
        h.json(&["chat", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let all = h.ok(&["chat", "list", "--all"]);
    assert!(
        all.contains("second") && all.contains("[archived]"),
        "{all}"
    );
}

#[test]
fn send_delivers_mentions_and_warns_on_unknown_names() {
    let h = Home::new();
    h.room();
    h.cmd(&[
        "chat",
        "send",
        "release-room",
        "@codex-b look at this, @ghost too. mail a@b.com",
    ])
    .assert()
    .success()
    .stdout("sent #1 as human\nmentions: codex-b, ghost\n")
    .stderr("warning: @ghost is not a registered agent; mention recorded but not delivered\n");
    let inbox = h.json(&["chat", "inbox", "codex-b", "--unread", "--json"]);
    assert_eq!(
        inbox,
        serde_json::json!([{"thread": "release-room", "seq": 1, "author": "human", "body": "@codex-b look at this, @ghost too. mail a@b.com", "read": false}])
    );
    // Nobody by that name: an error naming it, not an empty inbox.
    h.fails(&["chat", "inbox", "ghost"], 2, "no agent named \"ghost\"");
    let text = h.ok(&["chat", "inbox", "codex-b"]);
    assert!(text.starts_with("* release-room"), "{text}");
    // --as, --reply-to, --ref and --json.
    let v = h.json(&[
        "chat",
        "send",
        "release-room",
        "on it",
        "--as",
        "codex-b",
        "--reply-to",
        "1",
        "--ref",
        "pr:42",
        "--json",
    ]);
    assert_eq!(v["seq"], 2);
    assert_eq!(v["author"], "codex-b");
    assert_eq!(v["reply_to"], 1);
    assert_eq!(v["kind"], "chat");
    h.fails_each(&[
        (
            &["chat", "send", "release-room", "x", "--reply-to", "99"],
            2,
            "no message #99",
        ),
        (
            &["chat", "send", "release-room", "x", "--as", "nobody"],
            2,
            "agent \"nobody\" is not registered",
        ),
        (
            &["chat", "send", "release-room", "   "],
            2,
            "chat send requires a non-empty message",
        ),
        (
            &["chat", "send", "nowhere", "x"],
            2,
            "no chat thread \"nowhere\"",
        ),
    ]);
    h.cmd(&["chat", "send", "release-room", "x", "--ref", "nocolon"])
        .assert()
        .code(2);
    h.cmd(&["chat", "send", "release-room"]).assert().code(2);
}

#[test]
fn a_slug_in_several_repos_needs_repo() {
    let h = Home::new();
    h.ok(&["chat", "create", "room", "--repo", "a/one"]);
    h.ok(&["chat", "create", "room", "--repo", "b/two"]);
    h.fails(
        &["chat", "send", "room", "hi"],
        2,
        "exists in several repos (a/one, b/two); pass --repo",
    );
    assert_eq!(
        h.ok(&["chat", "send", "room", "hi", "--repo", "b/two"]),
        "sent #1 as human\n"
    );
    h.fails(
        &["chat", "show", "room", "--repo", "c/three"],
        2,
        "no chat thread \"room\" in c/three",
    );
    let id = h.json(&["chat", "list", "--repo", "a/one", "--json"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(h.ok(&["chat", "show", &id]).contains("repo: a/one"));
}

#[test]
fn show_prints_the_transcript_and_json() {
    let h = Home::new();
    h.room();
    assert!(
        h.ok(&["chat", "show", "release-room"])
            .contains("(no messages)")
    );
    h.ok(&["chat", "send", "release-room", "@codex-b hello"]);
    h.ok(&["chat", "send", "release-room", "second"]);
    let text = h.ok(&["chat", "show", "release-room"]);
    assert!(text.starts_with("thread: release-room (open)\n"), "{text}");
    assert!(
        text.contains("#1 [chat] human: @codex-b hello\n    mentions: codex-b\n"),
        "{text}"
    );
    assert!(
        text.contains("participants: codex-b (ask,review; read-only), human"),
        "{text}"
    );
    let v = h.json(&["chat", "show", "release-room", "--json"]);
    assert_eq!(v["thread"]["slug"], "release-room");
    let m = &v["messages"][0];
    let mut keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "author",
            "body",
            "kind",
            "mentions",
            "promoted_job_id",
            "reply_to",
            "seq",
            "ts"
        ]
    );
    assert_eq!(m["mentions"], serde_json::json!(["codex-b"]));
    let v = h.json(&["chat", "show", "release-room", "--limit", "1", "--json"]);
    assert_eq!(v["messages"].as_array().unwrap().len(), 1);
    assert_eq!(v["messages"][0]["seq"], 2);
}

#[test]
fn close_reopen_rename() {
    let h = Home::new();
    h.room();
    assert_eq!(
        h.ok(&["chat", "close", "release-room"]),
        "thread: release-room\nstate: archived\n"
    );
    h.fails_each(&[
        (
            &["chat", "send", "release-room", "hi"],
            1,
            "thread \"release-room\" is archived; reopen it before sending",
        ),
        (
            &["chat", "task", "release-room", "@codex-b go"],
            1,
            "archived; reopen it before promoting",
        ),
    ]);
    assert!(
        h.ok(&["chat", "show", "release-room"])
            .contains("(archived)"),
        "archived threads stay viewable"
    );
    assert_eq!(
        h.ok(&["chat", "close", "release-room"]),
        "thread: release-room\nstate: archived\n"
    );
    assert_eq!(
        h.json(&["chat", "reopen", "release-room", "--json"])["state"],
        "open"
    );
    h.ok(&["chat", "send", "release-room", "hi"]);
    assert_eq!(
        h.ok(&["chat", "rename", "release-room", "  New Title "]),
        "thread: release-room\nname: New Title\n"
    );
    let v = h.json(&["chat", "show", "release-room", "--json"]);
    assert_eq!(v["thread"]["slug"], "release-room");
    assert_eq!(v["thread"]["title"], "New Title");
    h.fails(
        &["chat", "rename", "release-room", " "],
        2,
        "non-empty new name",
    );
}

#[test]
fn read_marks_mentions() {
    let h = Home::new();
    h.room();
    h.ok(&["chat", "send", "release-room", "@codex-b one"]);
    h.ok(&["chat", "send", "release-room", "@codex-b two"]);
    h.ok(&["chat", "send", "release-room", "@codex-b three"]);
    h.fails_each(&[
        (&["chat", "read", "codex-b"], 2, "needs SEQ"),
        (&["chat", "read", "codex-b", "1"], 2, "needs --thread"),
    ]);
    assert_eq!(
        h.ok(&[
            "chat",
            "read",
            "codex-b",
            "--thread",
            "release-room",
            "1",
            "3"
        ]),
        "marked 2 mention(s) read for codex-b\n"
    );
    let unread = h.json(&["chat", "inbox", "codex-b", "--unread", "--json"]);
    assert_eq!(unread.as_array().unwrap().len(), 1);
    assert_eq!(unread[0]["seq"], 2);
    let all = h.json(&["chat", "inbox", "codex-b", "--json"]);
    assert_eq!(all[0]["seq"], 3, "newest first");
    assert_eq!(all[0]["read"], true);
    assert_eq!(
        h.ok(&["chat", "read", "codex-b", "--all"]),
        "marked 1 mention(s) read for codex-b\n"
    );
    assert_eq!(
        h.json(&["chat", "inbox", "codex-b", "--unread", "--json"]),
        serde_json::json!([])
    );
}

#[test]
fn task_promotes_exactly_one_registered_agent() {
    let h = Home::new();
    h.room();
    let out = h.ok(&[
        "chat",
        "task",
        "release-room",
        "@codex-b inspect the adapter @ghost",
    ]);
    let id = out
        .lines()
        .next()
        .unwrap()
        .strip_prefix("promoted job: ")
        .unwrap()
        .to_string();
    assert_eq!(
        out,
        format!("promoted job: {id}\nstate: queued\nagent: codex-b\naction: ask\n")
    );
    let job = h.json(&["job", "show", &id, "--json"]);
    assert_eq!(job["state"], "queued");
    assert_eq!(job["agent"], "codex-b");
    assert_eq!(job["kind"], "root");
    let thread_id = h.json(&["chat", "list", "--json"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(job["dispatched_by"], format!("chat:{thread_id}"));
    let shown = h.json(&["chat", "show", "release-room", "--json"]);
    assert_eq!(shown["messages"][0]["kind"], "promotion_request");
    assert_eq!(shown["messages"][0]["promoted_job_id"], id.as_str());
    h.fails(&["chat", "task", "release-room", "@codex-b inspect the adapter @ghost"], 1, "an identical promotion was already requested in this thread within the last 60s; not re-dispatching");
    h.fails_each(&[
        (
            &["chat", "task", "release-room", "nobody named"],
            2,
            "chat task requires exactly one @agent mention that names a registered agent",
        ),
        (
            &["chat", "task", "release-room", "@codex-b and @researcher"],
            2,
            "chat task requires exactly one registered @agent, found 2: codex-b, researcher",
        ),
        (
            &[
                "chat",
                "task",
                "release-room",
                "@codex-b x",
                "--action",
                "deploy",
            ],
            2,
            "unknown action \"deploy\"",
        ),
        (
            &[
                "chat",
                "task",
                "release-room",
                "@codex-b build",
                "--action",
                "implement",
            ],
            2,
            "implement",
        ),
    ]);
    let v = h.json(&[
        "chat",
        "task",
        "release-room",
        "@codex-b review it",
        "--action",
        "review",
        "--json",
    ]);
    assert_eq!(v["action"], "review");
    assert_eq!(v["state"], "queued");
    // Only `task` made jobs: sends never do.
    h.ok(&["chat", "send", "release-room", "@codex-b ping"]);
    assert_eq!(
        h.json(&["job", "list", "--json"]).as_array().unwrap().len(),
        2
    );
}

#[test]
fn answer_needs_a_linked_paused_job() {
    let h = Home::new();
    h.room();
    h.fails_each(&[
        (
            &["chat", "answer", "release-room", "q1: 8080"],
            1,
            "thread \"release-room\" is not linked to a paused job",
        ),
        (
            &["chat", "answer", "release-room", " "],
            2,
            "chat answer requires a non-empty answer",
        ),
    ]);
}

#[test]
fn remember_captures_one_message_with_provenance() {
    let h = Home::new();
    h.room();
    h.ok(&[
        "chat",
        "send",
        "release-room",
        "The adapter retries three times with jitter.",
    ]);
    h.ok(&[
        "chat",
        "send",
        "release-room",
        "You must always run the linter first.",
    ]);
    h.ok(&["chat", "send", "release-room", "see src/runtime/codex.rs"]);
    assert_eq!(
        h.ok(&["chat", "remember", "release-room", "1"]),
        "remembered message #1 as a pending observation\n"
    );
    assert_eq!(
        h.ok(&["chat", "remember", "release-room", "1"]),
        "message #1 already remembered\n"
    );
    assert_eq!(
        h.ok(&["chat", "remember", "release-room", "2"]),
        "message #2 rejected for memory: directive_phrasing\n"
    );
    assert_eq!(
        h.ok(&["chat", "remember", "release-room", "3", "--tier", "general"]),
        "message #3 rejected for memory: not_repo_agnostic\n"
    );
    let v = h.json(&[
        "chat",
        "remember",
        "release-room",
        "1",
        "--tier",
        "general",
        "--agent",
        "builder",
        "--json",
    ]);
    assert_eq!(v["status"], "inserted");
    assert_eq!(v["repo"], "");
    let list = h.json(&["memory", "list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 2);
    let thread_id = h.json(&["chat", "list", "--json"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let lead = &list[1];
    assert_eq!(lead["agent"], "lead");
    assert_eq!(lead["provenance"], format!("chat:{thread_id}#1"));
    assert_eq!(lead["trust"], "low");
    assert_eq!(lead["state"], "pending");
    assert_eq!(lead["repo"], "owner/repo");
    h.fails_each(&[
        (
            &["chat", "remember", "release-room", "0"],
            2,
            "chat remember: invalid message sequence \"0\"",
        ),
        (
            &["chat", "remember", "release-room", "x1"],
            2,
            "invalid message sequence",
        ),
        (
            &["chat", "remember", "release-room", "1", "--tier", "global"],
            2,
            "chat remember: invalid --tier \"global\" (want repo|general)",
        ),
        (
            &["chat", "remember", "release-room", "1", "--agent", " "],
            2,
            "--agent cannot be empty",
        ),
        (
            &["chat", "remember", "release-room", "9"],
            2,
            "chat remember: no message #9 in thread \"release-room\"",
        ),
    ]);
    // Confirm and share are explicit.
    let id = lead["id"].as_i64().unwrap().to_string();
    h.fails(
        &["memory", "promote", &id, "--to-shared"],
        1,
        "still pending; confirm it first",
    );
    h.cmd(&["memory", "promote", &id]).assert().code(2);
    assert_eq!(
        h.ok(&["memory", "confirm", &id]),
        format!("confirmed memory {id} into lead's private pool\n")
    );
    assert_eq!(
        h.ok(&["memory", "promote", &id, "--to-shared"]),
        format!("promoted memory {id} to the shared pool\n")
    );
    assert_eq!(
        h.json(&["memory", "list", "--agent", "lead", "--json"])[0]["shared"],
        true
    );
    h.fails(
        &["memory", "confirm", "999"],
        2,
        "memory observation 999 not found",
    );
}

#[test]
fn auto_confirm_goes_to_the_private_pool_only() {
    let h = Home::new();
    std::fs::write(
        h.0.path().join("config.toml"),
        "[memory]\ningest_auto_confirm = true\n",
    )
    .unwrap();
    h.room();
    h.ok(&[
        "chat",
        "send",
        "release-room",
        "Builds are cached per commit.",
    ]);
    assert_eq!(
        h.ok(&[
            "chat",
            "remember",
            "release-room",
            "1",
            "--agent",
            "builder"
        ]),
        "remembered message #1 and confirmed it into builder's private memory\n"
    );
    let o = &h.json(&["memory", "list", "--json"])[0];
    assert_eq!(o["state"], "confirmed");
    assert_eq!(o["shared"], false);
    assert_eq!(o["agent"], "builder");
}

#[test]
fn wait_prints_new_messages_then_last_seq() {
    let h = Home::new();
    h.room();
    for b in ["a", "b", "c"] {
        h.ok(&["chat", "send", "release-room", b]);
    }
    assert_eq!(
        h.ok(&["chat", "wait", "release-room", "--since-seq", "1"]),
        "#2 [chat] human: b\n#3 [chat] human: c\nlast-seq: 3\n"
    );
    let started = std::time::Instant::now();
    let out = h
        .cmd(&[
            "chat",
            "wait",
            "release-room",
            "--since-seq",
            "3",
            "--timeout",
            "300ms",
        ])
        .assert()
        .code(3)
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "(timed out: no new messages)\nlast-seq: 3\n"
    );
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("error: chat wait timed out after 300ms")
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    let v = h.json(&["chat", "wait", "release-room", "--since-seq", "2", "--json"]);
    assert_eq!(v["last_seq"], 3);
    assert_eq!(v["cap_reached"], false);
    assert_eq!(v["messages"][0]["seq"], 3);
    h.cmd(&["chat", "wait", "release-room", "--timeout", "soon"])
        .assert()
        .code(2);
}

/// A timeout is told apart from a message by its exit code (3) and `timed_out`, and
/// `last-seq` is the thread's newest seq even when `--since-seq` points past its end.
#[test]
fn wait_times_out_distinctly_with_the_threads_real_last_seq() {
    let h = Home::new();
    h.room();
    h.ok(&["chat", "send", "release-room", "only one"]);
    let out = h
        .cmd(&[
            "chat",
            "wait",
            "release-room",
            "--since-seq",
            "9",
            "--timeout",
            "0",
            "--json",
        ])
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["last_seq"], 1, "{v}");
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["messages"].as_array().map(Vec::len), Some(0));
    let v = h.json(&["chat", "wait", "release-room", "--timeout", "0", "--json"]);
    assert_eq!(v["timed_out"], false);
}

#[test]
fn wait_wakes_when_another_process_sends() {
    let h = Home::new();
    h.room();
    let waiter = std::process::Command::new(assert_cmd::cargo::cargo_bin("gitmoot"))
        .arg("--home")
        .arg(h.0.path())
        .args([
            "chat",
            "wait",
            "release-room",
            "--since-seq",
            "0",
            "--timeout",
            "20s",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let started = std::time::Instant::now();
    h.ok(&["chat", "send", "release-room", "wake up"]);
    let out = waiter.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "#1 [chat] human: wake up\nlast-seq: 1\n"
    );
}

#[test]
fn moot_validates_seats_and_caps_agent_turns() {
    let h = Home::new();
    h.cat_agent("alice", &[]);
    h.cat_agent("bob", &[]);
    h.cat_agent("writer", &["--capability", "review"]);
    // (moot name, topic, --agents, --repo, the refusal); each exits 2.
    let refuses_moots = |cases: &[(&str, &str, &str, &str, &str)]| {
        for (name, topic, agents, repo, text) in cases {
            h.fails(
                &["moot", name, topic, "--agents", agents, "--repo", repo],
                2,
                text,
            );
        }
    };
    refuses_moots(&[
        (
            "triage",
            "which bug first?",
            "alice,ghost",
            "owner/repo",
            "agent \"ghost\" is not registered",
        ),
        (
            "triage",
            "which bug first?",
            "alice,codex-b",
            "acme/web",
            "not allowed on repo acme/web",
        ),
        (
            "triage",
            "which bug first?",
            "writer",
            "owner/repo",
            "lacks the ask capability",
        ),
        (
            "triage",
            "  ",
            "alice",
            "owner/repo",
            "moot requires a non-empty \"topic\"",
        ),
        ("***", "t", "alice", "owner/repo", "invalid moot name"),
        ("triage", "t", " , ", "owner/repo", "moot requires --agents"),
    ]);
    std::fs::write(
        h.0.path().join("config.toml"),
        "[chat]\nmoot_max_seats = 2\n",
    )
    .unwrap();
    refuses_moots(&[(
        "triage",
        "t",
        "alice,bob,researcher",
        "owner/repo",
        "moot: 3 seats requested but the seat limit is 2",
    )]);
    assert_eq!(
        h.json(&["chat", "list", "--json"]),
        serde_json::json!([]),
        "nothing created"
    );
    assert_eq!(h.json(&["job", "list", "--json"]), serde_json::json!([]));
    std::fs::write(h.0.path().join("config.toml"), "[daemon]\nparallel = 1\n").unwrap();
    let out = h
        .cmd(&[
            "moot",
            "triage",
            "which bug first?",
            "--agents",
            "alice, bob,alice",
            "--repo",
            "owner/repo",
            "--max-messages",
            "2",
        ])
        .assert()
        .success();
    let o = out.get_output();
    let stdout = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        String::from_utf8(o.stderr.clone())
            .unwrap()
            .contains("runs a single worker (workers=1)")
    );
    assert!(
        stdout.starts_with("moot: triage\nthread: chat-"),
        "{stdout}"
    );
    assert!(
        stdout.contains("message cap: 2\nseat alice: job-") && stdout.contains("seat bob: job-"),
        "{stdout}"
    );
    assert_eq!(
        h.json(&["job", "list", "--json"]).as_array().unwrap().len(),
        2
    );
    let shown = h.ok(&["chat", "show", "triage"]);
    assert!(
        shown.contains(
            "[system] system: MOOT convened: which bug first?. Seats: @alice, @bob. Message cap: 2"
        ),
        "{shown}"
    );
    h.ok(&["chat", "send", "triage", "turn one", "--as", "alice"]);
    h.ok(&["chat", "send", "triage", "turn two", "--as", "bob"]);
    for _ in 0..2 {
        h.fails(
            &["chat", "send", "triage", "turn three", "--as", "alice"],
            1,
            "moot cap reached: thread \"triage\" hit its 2-message cap; agent messages are closed",
        );
    }
    let shown = h.ok(&["chat", "show", "triage"]);
    assert_eq!(shown.matches("MOOT CAP REACHED").count(), 1, "{shown}");
    h.ok(&["chat", "send", "triage", "humans are not capped"]);
    let wait = h.ok(&[
        "chat",
        "wait",
        "triage",
        "--since-seq",
        "99",
        "--timeout",
        "30s",
    ]);
    // `last-seq` is the thread's newest seq, not the one passed past its end.
    let newest = h.json(&["chat", "show", "triage", "--json"])["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .max()
        .unwrap();
    assert_eq!(
        wait,
        format!("(no new messages)\nMOOT CAP REACHED — wrap up now\nlast-seq: {newest}\n")
    );
    let v = h.json(&[
        "moot",
        "triage",
        "again",
        "--agents",
        "alice",
        "--repo",
        "owner/repo",
        "--json",
    ]);
    assert_eq!(v["thread_slug"], "triage", "an open moot thread is reused");
    assert_eq!(v["message_cap"], 30);
    assert_eq!(v["seats"][0]["state"], "queued");
}

#[test]
fn the_humans_unread_column_counts_others_posts_until_chat_seen() {
    let h = Home::new();
    h.room();
    h.ok(&["chat", "send", "release-room", "@codex-b status?"]);
    h.ok(&["chat", "send", "release-room", "green", "--as", "codex-b"]);
    h.ok(&[
        "chat",
        "send",
        "release-room",
        "all merged",
        "--as",
        "codex-b",
    ]);
    let list = h.ok(&["chat", "list"]);
    let mut lines = list.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["THREAD", "REPO", "UNREAD", "TITLE"], "{list}");
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(&row[..3], ["release-room", "owner/repo", "2"], "{list}");
    assert_eq!(
        h.ok(&["chat", "seen", "release-room", "--upto", "2"]),
        "Release coordination: 1 unread after #2\n"
    );
    assert_eq!(
        h.ok(&["chat", "seen", "release-room"]),
        "Release coordination: all read\n"
    );
    assert_eq!(h.json(&["chat", "list", "--json"])[0]["unread"], 0);
    h.fails(&["chat", "seen", "nowhere"], 2, "nowhere");
}
