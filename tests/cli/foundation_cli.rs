//! The foundation through the real binary: homes, permissions, agents, `job run`/`show`,
//! config errors and concurrent writers.

use gitmoot_test_support as support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;
use support::{gitmoot, json, stdout, texts};

#[test]
fn home_and_database_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    stdout(&home, &["init"]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&home.join("logs")), 0o700);
    assert_eq!(mode(&home.join("gitmoot.db")), 0o600);
}

#[test]
fn gitmoot_home_env_is_used_without_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("envhome");
    Command::cargo_bin("gitmoot")
        .unwrap()
        .env("GITMOOT_HOME", &home)
        .args(["init"])
        .assert()
        .success();
    assert!(home.join("gitmoot.db").exists());
}

#[test]
fn every_agent_field_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    stdout(
        h,
        &[
            "agent",
            "add",
            "builder",
            "--runtime",
            "codex",
            "--model",
            "gpt-5-codex",
            "--effort",
            "high",
            "--capability",
            "implement",
            "--capability",
            "review",
            "--policy",
            "workspace-write",
            "--repo",
            "acme/api",
            "--repo",
            "acme/web",
            "--chat-autorespond",
        ],
    );
    let a = json(h, &["agent", "show", "builder", "--json"]);
    assert_eq!(a["name"], "builder");
    assert_eq!(a["runtime"], "codex");
    assert_eq!(a["model"], "gpt-5-codex");
    assert_eq!(a["effort"], "high");
    assert_eq!(
        a["capabilities"],
        serde_json::json!(["review", "implement"])
    );
    assert_eq!(a["policy"], "workspace-write");
    assert_eq!(a["repos"], serde_json::json!(["acme/api", "acme/web"]));
    assert_eq!(a["chat_autorespond"], true);
    assert_eq!(a["command"], Value::Null);

    stdout(
        h,
        &[
            "agent",
            "add",
            "sh1",
            "--runtime",
            "shell",
            "--command",
            "echo hi",
        ],
    );
    let s = json(h, &["agent", "show", "sh1", "--json"]);
    assert_eq!(s["command"], "echo hi");
    assert_eq!(s["capabilities"], serde_json::json!(["ask", "review"]));
    assert_eq!(s["policy"], "read-only");
    assert_eq!(s["repos"], serde_json::json!([]));
    let list = json(h, &["agent", "list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 2);

    stdout(h, &["agent", "rm", "sh1"]);
    gitmoot(h)
        .args(["agent", "rm", "sh1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not registered"));
    assert_eq!(
        json(h, &["agent", "list", "--json"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// Runs `args`, which must exit 2 with `needle` in its stderr; returns that stderr.
fn refused(h: &Path, args: &[&str], needle: &str) -> String {
    let out = gitmoot(h).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected {needle:?} in {err}"
    );
    err
}

#[test]
fn each_invalid_agent_is_refused_with_exit_2_and_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    stdout(h, &["agent", "add", "taken", "--runtime", "claude"]);
    let cases: &[(&[&str], &str)] = &[
        (
            &["agent", "add", "x", "--runtime", "gpt"],
            "unknown runtime \"gpt\"",
        ),
        (
            &["agent", "add", "x", "--runtime", "shell"],
            "runtime shell needs --command",
        ),
        (
            &[
                "agent",
                "add",
                "x",
                "--runtime",
                "codex",
                "--capability",
                "implement",
            ],
            "--policy workspace-write",
        ),
        (
            &[
                "agent",
                "add",
                "x",
                "--runtime",
                "codex",
                "--capability",
                "implement",
                "--policy",
                "auto",
            ],
            "the policy is auto",
        ),
        (
            &[
                "agent",
                "add",
                "x",
                "--runtime",
                "codex",
                "--capability",
                "deploy",
            ],
            "unknown capability \"deploy\"",
        ),
        (
            &[
                "agent",
                "add",
                "x",
                "--runtime",
                "codex",
                "--policy",
                "yolo",
            ],
            "unknown autonomy policy \"yolo\"",
        ),
        (
            &["agent", "add", "x", "--runtime", "codex", "--command", "ls"],
            "--command applies to the shell runtime only",
        ),
        (
            &[
                "agent",
                "add",
                "x",
                "--runtime",
                "codex",
                "--repo",
                "noslash",
            ],
            "must look like owner/name",
        ),
        (
            &["agent", "add", "bad name", "--runtime", "codex"],
            "agent name \"bad name\" is invalid",
        ),
        (
            &["agent", "add", "taken", "--runtime", "codex"],
            "agent \"taken\" already exists",
        ),
    ];
    for (args, needle) in cases {
        let err = refused(h, args, needle);
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    let list = json(h, &["agent", "list", "--json"]);
    assert_eq!(texts(&list, "name"), ["taken"]);
    assert_eq!(
        json(h, &["agent", "show", "taken", "--json"])["runtime"],
        "claude"
    );
}

#[test]
fn job_run_then_job_show_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    stdout(
        h,
        &["agent", "add", "rev", "--runtime", "codex", "--model", "o4"],
    );
    let id = stdout(
        h,
        &[
            "job",
            "run",
            "--agent",
            "rev",
            "--action",
            "review",
            "--repo",
            "acme/api",
            "--timeout",
            "10m",
            "Review the auth change\nsecond line",
        ],
    )
    .trim()
    .to_string();
    assert!(id.starts_with("job-") && id.len() == 12, "{id}");
    let job = json(h, &["job", "show", &id, "--json"]);
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["root_id"], id.as_str());
    assert_eq!(job["parent_id"], Value::Null);
    assert_eq!(job["delegation_id"], Value::Null);
    assert_eq!(job["kind"], "root");
    assert_eq!(job["agent"], "rev");
    assert_eq!(job["action"], "review");
    assert_eq!(job["state"], "queued");
    assert_eq!(job["depth"], 0);
    assert_eq!(job["attempt"], 1);
    assert_eq!(job["prompt"], "Review the auth change\nsecond line");
    assert_eq!(job["repo"], "acme/api");
    assert_eq!(job["model"], "o4");
    assert_eq!(job["timeout_ms"], 600_000);
    assert_eq!(job["result"], Value::Null);
    assert_eq!(job["tokens"]["total"], 0);
    assert!(job["created"].as_i64().unwrap() > 0);
    assert_eq!(job["started"], Value::Null);

    let tree = json(h, &["job", "tree", &id, "--json"]);
    assert_eq!(tree["run"]["state"], "running");
    assert_eq!(tree["run"]["title"], "Review the auth change");
    assert_eq!(tree["tree"]["id"], id.as_str());
    assert_eq!(tree["tree"]["children"], serde_json::json!([]));
    let listed = json(h, &["job", "list", "--state", "queued", "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(
        json(h, &["job", "list", "--agent", "nobody", "--json"]),
        serde_json::json!([])
    );
    let events = json(h, &["job", "events", &id, "--json"]);
    assert_eq!(events[0]["kind"], "queued");
}

#[test]
fn job_run_refuses_what_the_gate_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    stdout(
        h,
        &[
            "agent",
            "add",
            "asker",
            "--runtime",
            "claude",
            "--capability",
            "ask",
            "--repo",
            "acme/api",
        ],
    );
    let cases: &[(&[&str], &str)] = &[
        (
            &["job", "run", "--agent", "ghost", "hi"],
            "agent \"ghost\" is not registered",
        ),
        (
            &["job", "run", "--agent", "asker", "--action", "review", "hi"],
            "lacks the review capability",
        ),
        (
            &["job", "run", "--agent", "asker", "--repo", "acme/web", "hi"],
            "not allowed on repo acme/web",
        ),
        (
            &["job", "run", "--agent", "asker", "--timeout", "soon", "hi"],
            "invalid duration",
        ),
        (
            &["job", "run", "--agent", "asker", "  "],
            "the prompt is empty",
        ),
        (&["job", "show", "job-nope"], "job \"job-nope\" not found"),
    ];
    for (args, needle) in cases {
        refused(h, args, needle);
    }
    assert_eq!(json(h, &["job", "list", "--json"]), serde_json::json!([]));
}

#[test]
fn a_bad_config_names_the_key_and_the_file_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    gitmoot(h)
        .args(["config", "show"])
        .assert()
        .success()
        .stdout(predicates::str::contains("max_delegation_depth = 8"));
    std::fs::write(h.join("config.toml"), "[daemon]\nparallel = 0\n").unwrap();
    gitmoot(h)
        .args(["config", "show"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("[daemon].parallel"))
        .stderr(predicates::str::contains("config.toml"));
    std::fs::write(h.join("config.toml"), "[chat]\nauto_respond = true\n").unwrap();
    let c = json(h, &["config", "show", "--json"]);
    assert_eq!(c["chat"]["auto_respond"], true);
    assert_eq!(c["chat"]["auto_respond_cooldown"], "2m");
}

#[test]
fn two_processes_writing_at_once_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    stdout(
        h,
        &[
            "agent",
            "add",
            "w",
            "--runtime",
            "shell",
            "--command",
            "true",
        ],
    );
    let bin = assert_cmd::cargo::cargo_bin("gitmoot");
    let script = format!(
        "for i in $(seq 200); do {bin} --home {home} job run --agent w \"write $i from $0\" >/dev/null || exit 1; done",
        bin = bin.display(),
        home = h.display()
    );
    let spawn = |name: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .arg(name)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("a"), spawn("b"));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "a writer failed: {err}");
        assert!(!err.contains("database is locked"), "{err}");
    }
    // `job list` pages by default (issue 19); every job is `--all`.
    assert_eq!(
        json(h, &["job", "list", "--all", "--json"])
            .as_array()
            .unwrap()
            .len(),
        400
    );
}

#[test]
fn completions_are_generated() {
    let dir = tempfile::tempdir().unwrap();
    gitmoot(dir.path())
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicates::str::contains("gitmoot"));
    gitmoot(dir.path())
        .args(["completions", "tcsh"])
        .assert()
        .code(2);
}

#[test]
fn the_readme_keys_table_is_the_keymap() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let table = readme
        .split("<!-- keys:begin -->")
        .nth(1)
        .and_then(|r| r.split("<!-- keys:end -->").next())
        .expect("README has the keys markers");
    assert_eq!(
        table.trim(),
        gitmoot_ui::keys_markdown().trim(),
        "README keys table is stale: copy screenshots/keys.md"
    );
}
