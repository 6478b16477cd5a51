//! The seat relay against a real unix socket: the per-seat token, its binding to one agent
//! and one thread, the repo scope, socket permissions, and `chat send`/`chat wait` routed
//! through it from a child process that never opens the store; and a real moot's seats,
//! whose daemon-issued tokens post only to their thread, as their agent, while their job runs.

use gitmoot_test_support as support;

use std::os::unix::fs::PermissionsExt;

use assert_cmd::Command;
use gitmoot::chat::relay::{self, ENV_SOCKET, ENV_TOKEN, Relay, Request};
use gitmoot::home::Home;
use gitmoot::store::Store;
use predicates::prelude::*;
use support::agent_args::shell_agent_args;
use support::stdout;

struct Setup {
    dir: tempfile::TempDir,
    home: Home,
    thread_id: String,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    for (name, repo) in [
        ("alice", "owner/repo"),
        ("bob", "owner/repo"),
        ("outsider", "other/repo"),
    ] {
        stdout(
            dir.path(),
            &shell_agent_args(name, "cat", &["--repo", repo]),
        );
    }
    stdout(
        dir.path(),
        &["chat", "create", "room", "--repo", "owner/repo"],
    );
    stdout(
        dir.path(),
        &["chat", "create", "elsewhere", "--repo", "owner/repo"],
    );
    let list: serde_json::Value =
        serde_json::from_str(&stdout(dir.path(), &["chat", "list", "--json"])).unwrap();
    let thread_id = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["slug"] == "room")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let home = Home::resolve(Some(dir.path())).unwrap();
    Setup {
        dir,
        home,
        thread_id,
    }
}

fn send_req(token: &str, thread: &str, as_agent: Option<&str>, body: &str) -> Request {
    Request {
        op: "send".into(),
        token: token.into(),
        thread: thread.into(),
        as_agent: as_agent.map(String::from),
        body: Some(body.into()),
        ..Request::default()
    }
}

/// What the relay holds in "room" past `since`, without waiting.
fn peek(socket: &std::path::Path, token: &str, since: i64) -> relay::Response {
    relay::wait_remote(
        socket,
        token,
        "room",
        None,
        since,
        std::time::Duration::ZERO,
    )
    .unwrap()
}

#[test]
fn a_seat_posts_as_its_agent_and_waits_through_the_socket() {
    let s = setup();
    let relay = Relay::start(&s.home).unwrap();
    let token = relay.issue_token("alice", &s.thread_id);
    let r = relay::call(
        relay.socket_path(),
        &send_req(&token, "room", None, "hello @bob and @ghost"),
    )
    .unwrap();
    let m = r.message.unwrap();
    assert_eq!(m.author, "alice", "the author is forced to the bound agent");
    assert_eq!(m.seq, 1);
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("@ghost"));
    let w = peek(relay.socket_path(), &token, 0);
    assert_eq!(w.messages.len(), 1);
    assert_eq!(w.last_seq, 1);
    let w = peek(relay.socket_path(), &token, 1);
    assert!(w.messages.is_empty());
    // bob's inbox got the mention through the relay's write.
    let store = Store::open(&s.home.db_path()).unwrap();
    assert_eq!(
        gitmoot::chat::inbox::inbox(&store.conn(), "bob", true, None)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn wrong_released_and_empty_tokens_are_refused() {
    let s = setup();
    let relay = Relay::start(&s.home).unwrap();
    for bad in ["", "0123456789abcdef"] {
        let e = relay::call(relay.socket_path(), &send_req(bad, "room", None, "x")).unwrap_err();
        assert_eq!(e.to_string(), "chat relay: invalid or expired token");
    }
    let token = relay.issue_token("alice", &s.thread_id);
    relay::call(
        relay.socket_path(),
        &send_req(&token, "room", None, "first"),
    )
    .unwrap();
    relay.release(&token);
    let e = relay::call(
        relay.socket_path(),
        &send_req(&token, "room", None, "after release"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("token"), "{e}");
    let store = Store::open(&s.home.db_path()).unwrap();
    let t = gitmoot::chat::threads::resolve(&store.conn(), "room", None).unwrap();
    assert_eq!(
        gitmoot::store::chat::last_seq(store.conn(), &t.id).unwrap(),
        1,
        "nothing written"
    );
}

#[test]
fn a_seat_cannot_post_as_another_agent_or_into_another_thread() {
    let s = setup();
    let relay = Relay::start(&s.home).unwrap();
    let token = relay.issue_token("alice", &s.thread_id);
    let e = relay::call(
        relay.socket_path(),
        &send_req(&token, "room", Some("bob"), "I am bob"),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "chat relay: token bound to \"alice\" cannot send as \"bob\""
    );
    let e = relay::call(
        relay.socket_path(),
        &send_req(&token, "elsewhere", None, "x"),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "chat relay: token not valid for this thread");
    let e = relay::call(relay.socket_path(), &send_req(&token, "nowhere", None, "x")).unwrap_err();
    assert!(
        e.to_string().starts_with("chat relay: no chat thread"),
        "{e}"
    );
    let outsider = relay.issue_token("outsider", &s.thread_id);
    let e = relay::call(relay.socket_path(), &send_req(&outsider, "room", None, "x")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "chat relay: agent \"outsider\" is not allowed on \"owner/repo\""
    );
    let mut bad_op = send_req(&token, "room", None, "x");
    bad_op.op = "delete".into();
    let e = relay::call(relay.socket_path(), &bad_op).unwrap_err();
    assert_eq!(e.to_string(), "chat relay: unknown op \"delete\"");
    let store = Store::open(&s.home.db_path()).unwrap();
    let t = gitmoot::chat::threads::resolve(&store.conn(), "room", None).unwrap();
    assert_eq!(
        gitmoot::store::chat::last_seq(store.conn(), &t.id).unwrap(),
        0
    );
}

#[test]
fn the_socket_is_private_and_removed_on_shutdown() {
    let s = setup();
    let relay = Relay::start(&s.home).unwrap();
    let path = relay.socket_path().to_path_buf();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(path.parent().unwrap(), relay::socket_dir(&s.home));
    drop(relay);
    assert!(!path.exists());
}

#[test]
fn the_cli_routes_send_and_wait_through_the_relay_without_the_store() {
    let s = setup();
    let relay = Relay::start(&s.home).unwrap();
    let token = relay.issue_token("alice", &s.thread_id);
    let socket = relay.socket_path().display().to_string();
    // A home that does not exist proves the seat never opens the store itself.
    let ghost_home = s.dir.path().join("does/not/exist");
    let seat = |args: &[&str]| {
        let mut c = Command::cargo_bin("gitmoot").unwrap();
        c.arg("--home")
            .arg(&ghost_home)
            .args(args)
            .env(ENV_SOCKET, &socket)
            .env(ENV_TOKEN, &token);
        c
    };
    seat(&[
        "chat",
        "send",
        "room",
        "from the seat @ghost",
        "--as",
        "alice",
    ])
    .assert()
    .success()
    .stdout("sent #1 as alice\nmentions: ghost\n")
    .stderr(predicate::str::contains("@ghost is not a registered agent"));
    seat(&["chat", "send", "room", "pretending", "--as", "bob"])
        .assert()
        .code(1)
        .stderr("error: chat relay: token bound to \"alice\" cannot send as \"bob\"\n");
    seat(&[
        "chat",
        "wait",
        "room",
        "--since-seq",
        "0",
        "--timeout",
        "1s",
    ])
    .assert()
    .success()
    .stdout("#1 [chat] alice: from the seat @ghost\n    mentions: ghost\nlast-seq: 1\n");
    assert!(!ghost_home.exists());
    // A dead socket fails; there is no fallback to the direct path.
    let mut c = Command::cargo_bin("gitmoot").unwrap();
    c.arg("--home")
        .arg(s.dir.path())
        .args(["chat", "send", "room", "x"])
        .env(ENV_SOCKET, s.dir.path().join("missing.sock"))
        .env(ENV_TOKEN, &token)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: dial chat relay:"));
}

/// `moot duo topic` with seats alice and bob on owner/repo, and `extra`; its stdout.
fn convene_duo(home: &std::path::Path, extra: &[&str]) -> String {
    let mut args = vec![
        "moot",
        "duo",
        "topic",
        "--agents",
        "alice,bob",
        "--repo",
        "owner/repo",
    ];
    args.extend_from_slice(extra);
    stdout(home, &args)
}

#[test]
fn the_moot_cap_holds_through_the_relay() {
    let s = setup();
    convene_duo(s.dir.path(), &["--max-messages", "1"]);
    let store = Store::open(&s.home.db_path()).unwrap();
    let t = gitmoot::chat::threads::resolve(&store.conn(), "duo", None).unwrap();
    let relay = Relay::start(&s.home).unwrap();
    let token = relay.issue_token("bob", &t.id);
    relay::call(
        relay.socket_path(),
        &send_req(&token, "duo", None, "only turn"),
    )
    .unwrap();
    let e = relay::call(
        relay.socket_path(),
        &send_req(&token, "duo", None, "one more"),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("moot cap reached"), "{e}");
    let w = relay::wait_remote(
        relay.socket_path(),
        &token,
        "duo",
        None,
        99,
        std::time::Duration::from_secs(30),
    )
    .unwrap();
    assert!(w.cap_reached);
}

/// `chat show THREAD --json`'s messages as (kind, author, body).
fn messages(home: &std::path::Path, thread: &str) -> Vec<(String, String, String)> {
    let shown: serde_json::Value =
        serde_json::from_str(&stdout(home, &["chat", "show", thread, "--json"])).unwrap();
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = |k: &str| m[k].as_str().unwrap_or_default().to_string();
            (text("kind"), text("author"), text("body"))
        })
        .collect()
}

/// A shell agent whose script runs `gitmoot` as a seat does: through the relay its
/// environment names, on a home that does not exist.
fn seat_agent(home: &std::path::Path, name: &str, body: &str) {
    let ghost = home.join("no/such/home");
    let script = format!(
        "cat >/dev/null\nG=\"{} --home {}\"\n{body}\n",
        support::bin(),
        ghost.display()
    );
    let path = home.join(format!("{name}.sh"));
    std::fs::write(&path, script).unwrap();
    stdout(
        home,
        &shell_agent_args(
            name,
            &format!("sh {}", path.display()),
            &["--repo", "owner/repo", "--policy", "workspace-write"],
        ),
    );
}

/// Each refusal through a real moot's seats: the daemon issues each seat its token. The
/// first seat posts once (its token, so the next seat can try it) and then tries another
/// thread and another agent's name; the second, once the first has finished, tries the
/// finished seat's token and a forged one. Every refusal names its reason, nothing but the
/// first seat's one post is written, and the other thread stays empty.
#[test]
fn a_moot_seat_s_token_posts_only_to_its_thread_as_its_agent_while_its_job_runs() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    std::fs::create_dir_all(&home).unwrap();
    let refused = |var: &str, cmd: &str, why: &str| {
        format!(
            "out=$({cmd} 2>&1); case \"$out\" in *\"{why}\"*) {var}=refused ;; *) {var}=\"written:$?\" ;; esac"
        )
    };
    seat_agent(
        &home,
        "alice",
        &[
            "$G chat send duo \"token:$GITMOOT_RELAY_TOKEN\" >/dev/null 2>&1 && sent=yes || sent=no"
                .to_string(),
            refused(
                "other",
                "$G chat send elsewhere 'wrong thread'",
                "token not valid for this thread",
            ),
            refused(
                "as",
                "$G chat send duo 'pretending' --as bob",
                "cannot send as",
            ),
            r#"echo "{\"gitmoot_result\":{\"decision\":\"approved\",\"summary\":\"sent=$sent other=$other as=$as\"}}""#
                .to_string(),
        ]
        .join("\n"),
    );
    seat_agent(
        &home,
        "bob",
        &[
            "tok=$($G chat wait duo --since-seq 0 --timeout 5s | sed -n 's/.*token:\\([0-9a-f][0-9a-f]*\\).*/\\1/p' | head -n 1)"
                .to_string(),
            "[ -n \"$tok\" ] || tok=missing".to_string(),
            refused(
                "finished",
                "GITMOOT_RELAY_TOKEN=$tok $G chat send duo 'after the seat ended'",
                "invalid or expired token",
            ),
            refused(
                "forged",
                &format!(
                    "GITMOOT_RELAY_TOKEN={} $G chat send duo 'forged'",
                    "ab".repeat(32)
                ),
                "invalid or expired token",
            ),
            r#"[ "$tok" = missing ] && finished=no-token"#.to_string(),
            r#"echo "{\"gitmoot_result\":{\"decision\":\"approved\",\"summary\":\"finished=$finished forged=$forged\"}}""#
                .to_string(),
        ]
        .join("\n"),
    );
    stdout(
        &home,
        &["chat", "create", "elsewhere", "--repo", "owner/repo"],
    );
    std::fs::write(home.join("config.toml"), "[daemon]\nparallel = 1\n").unwrap();
    let convened = convene_duo(&home, &[]);
    stdout(&home, &["daemon", "run", "--until-idle"]);

    let seat = |name: &str| {
        let id = convened
            .lines()
            .find_map(|l| l.strip_prefix(&format!("seat {name}: ")))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no seat {name}: {convened}"))
            .to_string();
        let job: serde_json::Value =
            serde_json::from_str(&stdout(&home, &["job", "show", &id, "--json"])).unwrap();
        job["result"]["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(seat("alice"), "sent=yes other=refused as=refused");
    assert_eq!(seat("bob"), "finished=refused forged=refused");
    let duo = messages(&home, "duo");
    // The seats' results are linked in by the daemon (`job_result`); posts are `chat`.
    let posts: Vec<_> = duo.iter().filter(|(kind, ..)| kind == "chat").collect();
    assert_eq!(posts.len(), 1, "only alice's one post: {duo:?}");
    assert_eq!(posts[0].1, "alice");
    assert!(posts[0].2.starts_with("token:"), "{duo:?}");
    assert!(
        duo.iter().all(|(.., body)| {
            !["pretending", "after the seat ended", "forged"].contains(&body.as_str())
        }),
        "{duo:?}"
    );
    assert_eq!(messages(&home, "elsewhere"), [], "the other thread");
    assert!(!home.join("no").exists(), "the seats never opened a store");
}
