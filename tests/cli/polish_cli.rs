//! Operator polish through the real binary: clap errors that name what is wrong, unique id
//! prefixes, tables with headers, JSON numbers, exit 2 for bad input, hints, and the
//! control room at 80×24 in tmux (whole ids, `? help`, a long error read in the log).

use gitmoot_test_support as support;

use std::time::Duration;

use support::tmux::Tmux;
use support::{bin, gitmoot, json, shell_agent, stdout};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn clap_errors_name_the_missing_argument_and_suggest_the_verb() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let out = gitmoot(&home).args(["chat", "inbox"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("<AGENT>"),
        "{err}"
    );
    let out = gitmoot(&home).args(["jbo", "list"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("'job'"), "{}", stderr(&out));
    let out = gitmoot(&home).args(["job", "lsit"]).output().unwrap();
    assert!(stderr(&out).contains("'list'"), "{}", stderr(&out));
    assert!(!home.exists(), "a usage error created the home");
}

#[test]
fn enum_values_are_listed_in_help() {
    let dir = tempfile::tempdir().unwrap();
    let out = gitmoot(dir.path())
        .args(["job", "list", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("queued") && help.contains("cancelled"),
        "{help}"
    );
    assert!(
        help.contains("--json") && help.contains("Print JSON"),
        "{help}"
    );
}

#[test]
fn unique_id_prefixes_work_and_ambiguous_ones_list_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "a", "cat >/dev/null; echo '{}'", &[]);
    let mut ids = Vec::new();
    for i in 0..40 {
        let out = gitmoot(&home)
            .args(["job", "run", "--agent", "a", &format!("task {i}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        ids.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
        // No daemon: the id alone on stdout, a hint on stderr.
        assert!(
            stderr(&out).contains("no daemon is running"),
            "{}",
            stderr(&out)
        );
    }
    let id = &ids[0];
    // The shortest prefix of ids[0] no other id shares.
    let n = (5..id.len())
        .find(|n| ids.iter().filter(|o| o.starts_with(&id[..*n])).count() == 1)
        .unwrap();
    let shown = json(&home, &["job", "show", &id[..n], "--json"]);
    assert_eq!(shown["id"], id.as_str());
    let tree = json(&home, &["job", "tree", &id[..n], "--json"]);
    assert_eq!(tree["run"]["root_id"].as_str().unwrap_or(id), id.as_str());
    // `job-` prefixes every id: ambiguous, exit 2, candidates listed.
    let out = gitmoot(&home)
        .args(["job", "show", "job-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("ambiguous") && err.matches("job-").count() > 10,
        "{err}"
    );
    let out = gitmoot(&home)
        .args(["job", "cancel", "job-zzzzzzzzzz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not found"));
    let out = gitmoot(&home)
        .args(["job", "cancel", &id[..n]])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        json(&home, &["job", "show", id, "--json"])["state"],
        "cancelled"
    );
}

#[test]
fn lists_have_a_header_and_aligned_columns() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "short", "cat >/dev/null", &[]);
    shell_agent(&home, "a-much-longer-name", "cat >/dev/null", &[]);
    let out = gitmoot(&home).args(["agent", "list"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("RUNTIME"),
        "{text}"
    );
    let col = lines[0].find("RUNTIME").unwrap();
    for l in &lines[1..] {
        assert_eq!(&l[col..col + 5], "shell", "{text}");
    }
    stdout(&home, &["job", "run", "--agent", "short", "x"]);
    let out = gitmoot(&home).args(["job", "list"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let head = text.lines().next().unwrap();
    assert!(
        head.starts_with("ID") && head.contains("AGE") && head.contains("STATE"),
        "{text}"
    );
    // A state or an action pads to its column like any other value.
    for (name, value) in [("AGENT", "short"), ("ACTION", "ask")] {
        let col = head.find(name).unwrap();
        for l in text.lines().skip(1) {
            assert_eq!(&l[col..col + value.len()], value, "{name} column:\n{text}");
        }
    }
}

#[test]
fn bad_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    gitmoot(&home)
        .args(["chat", "create", "Release Planning!! 2026", "--repo", "o/r"])
        .assert()
        .success()
        .stdout(predicates::str::contains("name: Release Planning!! 2026\n"));
    gitmoot(&home)
        .args(["chat", "create", "release planning 2026", "--repo", "o/r"])
        .assert()
        .code(2);
    gitmoot(&home)
        .args(["chat", "inbox", "nobody"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no agent named \"nobody\""));
    gitmoot(&home)
        .args(["tui", "--theme", "no-such-theme"])
        .assert()
        .code(2);
}

#[test]
fn tui_without_a_terminal_says_so_and_creates_no_home() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let out = gitmoot(&home).arg("tui").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("needs a terminal"),
        "{}",
        stderr(&out)
    );
    assert!(!home.exists());
}

#[test]
fn agent_add_warns_when_the_runtime_is_not_on_path() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    gitmoot(&home)
        .env("PATH", dir.path())
        .args(["agent", "add", "rev", "--runtime", "claude"])
        .assert()
        .success()
        .stderr(predicates::str::contains("`claude` is not on PATH"));
}

#[test]
fn daemon_status_json_has_a_numeric_pid() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    stdout(&home, &["init"]);
    let mut d = std::process::Command::new(bin())
        .arg("--home")
        .arg(&home)
        .args(["daemon", "run"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        let s = json(&home, &["daemon", "status", "--json"]);
        if s["running"] == true {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{s}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = d.kill();
    let _ = d.wait();
    assert_eq!(status["pid"].as_u64(), Some(d.id() as u64), "{status}");
}

#[test]
fn at_80x24_ids_are_whole_help_shows_and_a_long_error_reads_in_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "a", "cat >/dev/null; sleep 30", &[]);
    let roots: Vec<String> = [
        "Refactor the payments API onto the new ledger",
        "Migrate the sessions table to the new schema",
        "Audit every dependency for licence problems",
    ]
    .iter()
    .map(|prompt| {
        let out = gitmoot(&home)
            .args(["job", "run", "--agent", "a", prompt])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    })
    .collect();
    let root = &roots[2];
    let cmd = format!(
        "sh -c '{} --home {} tui --no-daemon; echo TUI-EXITED; sleep 30'",
        bin(),
        home.display()
    );
    let t = Tmux::start_sized("polish80", &cmd, &[], (80, 24));
    let wait = Duration::from_secs(60);
    let screen = t.wait_for(root, wait);
    // Each root's id is whole on its own tree row, next to its title (not merely somewhere
    // on the screen, such as a pane title).
    for (id, title) in roots.iter().zip(["Refa", "Migr", "Audi"]) {
        assert!(
            screen
                .lines()
                .any(|l| l.contains(&format!("{id} ")) && l.contains(title)),
            "{id} is not whole on its row:\n{screen}"
        );
    }
    assert!(screen.contains("? help"), "{screen}");
    let footer = screen.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(
        footer.contains("? help") && footer.contains("quit"),
        "{screen}"
    );
    // An error longer than the screen: `job show` of an id nobody has.
    let long = format!("job-{}", "x".repeat(90));
    t.keys(&[":"]);
    t.keys(&["-l", &format!("job show {long}-END")]);
    t.keys(&["Enter"]);
    // The bar shows the start of the error and where the rest is.
    let bar = t.wait_for("L messages", wait);
    assert!(bar.contains("error: job"), "{bar}");
    assert!(!bar.contains("-END"), "{bar}");
    t.keys(&["L"]);
    let log = t.wait_for("END", wait);
    assert!(log.contains("not found"), "{log}");
    t.keys(&["Escape"]);
    t.wait_gone("END", wait);
    t.quit(wait);
}

#[test]
fn daemon_run_says_what_it_started_and_each_job_state_change() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(
        &home,
        "a",
        r#"cat >/dev/null; echo '{"gitmoot_result": {"decision": "approved", "summary": "ok"}}'"#,
        &[],
    );
    let out = gitmoot(&home)
        .args(["job", "run", "--agent", "a", "hello"])
        .output()
        .unwrap();
    let root = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = gitmoot(&home)
        .args(["daemon", "run", "--until-idle"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("daemon started: pid "), "{text}");
    let mine: Vec<&str> = text.lines().filter(|l| l.contains(&root)).collect();
    assert!(mine.iter().any(|l| l.contains(" running ")), "{text}");
    assert!(mine.iter().any(|l| l.contains(" succeeded ")), "{text}");
    assert!(mine.iter().all(|l| l.contains(" UTC ")), "{text}");
}

#[test]
fn chat_show_prints_posts_as_the_transcript_renders_them() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    stdout(&home, &["chat", "create", "room", "--repo", "o/r"]);
    stdout(
        &home,
        &[
            "chat",
            "send",
            "room",
            "> Agent: `scout`\n\n**Decision:** `approved`\n- one\n\n```\n    indented code\n```",
        ],
    );
    let out = gitmoot(&home)
        .args(["chat", "show", "room"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("▏ Agent: scout"), "{text}");
    assert!(text.contains("Decision: approved\n• one"), "{text}");
    // A code block is set two columns in and keeps its own indentation.
    assert!(text.contains("\n      indented code"), "{text}");
    assert!(!text.contains("**") && !text.contains('`'), "{text}");
}

/// A coordinator that fans out to legs `a` and `b` of the agent `w`, then merges.
const FAN_OUT: &str = r#"cat >/dev/null
if [ "$GITMOOT_JOB_KIND" = root ]; then
echo '{"gitmoot_result": {"decision": "approved", "summary": "fan out", "delegations": [{"id": "a", "agent": "w", "action": "ask", "prompt": "x"}, {"id": "b", "agent": "w", "action": "ask", "prompt": "y"}]}}'
else
echo '{"gitmoot_result": {"decision": "approved", "summary": "merged"}}'
fi"#;

#[test]
fn a_roots_prefix_names_the_root_not_its_legs_and_a_leg_is_named_root_slash_leg() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "lead", FAN_OUT, &[]);
    shell_agent(
        &home,
        "w",
        r#"cat >/dev/null; echo '{"gitmoot_result": {"decision": "approved", "summary": "leg"}}'"#,
        &[],
    );
    let root = stdout(&home, &["job", "run", "--agent", "lead", "split the work"])
        .trim()
        .to_string();
    stdout(&home, &["daemon", "run", "--until-idle"]);
    let short = &root[..root.len() - 2];
    let shown = json(&home, &["job", "show", short, "--json"]);
    assert_eq!(shown["id"], root.as_str(), "the root, not one of its legs");
    let tree = json(&home, &["job", "tree", short, "--json"]);
    assert_eq!(tree["run"]["root_id"], root.as_str(), "{tree}");
    let leg = json(&home, &["job", "show", &format!("{short}/a"), "--json"]);
    assert_eq!(leg["id"], format!("{root}/a"));
    // Among legs alone a prefix is still ambiguous, and says so.
    let out = gitmoot(&home)
        .args(["job", "show", &format!("{root}/")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ambiguous"), "{}", stderr(&out));
}

#[test]
fn a_read_verb_on_a_named_home_that_is_not_there_creates_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join(".gitmot");
    for verb in [
        &["job", "list"][..],
        &["job", "pending"],
        &["chat", "list"],
        &["daemon", "status"],
        &["daemon", "run", "--until-idle"],
    ] {
        let out = gitmoot(&typo).args(verb).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{verb:?}");
        assert_eq!(
            stderr(&out).trim(),
            format!(
                "error: no gitmoot home at {} (create one with gitmoot init, or check --home)",
                typo.display()
            ),
            "{verb:?}"
        );
        assert!(!typo.exists(), "{verb:?} made the home");
    }
    // `init`, or a verb that registers something, makes it.
    let out = gitmoot(&typo).arg("init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(typo.join("gitmoot.db").exists());
    let listed = gitmoot(&typo).args(["job", "list"]).output().unwrap();
    assert!(listed.status.success(), "{}", stderr(&listed));
    let other = dir.path().join("other");
    shell_agent(&other, "a", "cat >/dev/null; echo '{}'", &[]);
    assert!(other.join("gitmoot.db").exists());
}

#[test]
fn an_empty_listing_says_so_at_a_terminal_and_prints_nothing_into_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    stdout(&home, &["init"]);
    // `script` gives the command a terminal of its own.
    let at_terminal = |args: &str| {
        let line = format!("{} --home {} {args}", bin(), home.display());
        let out = std::process::Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .env_remove("GITMOOT_HOME")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).replace('\r', "")
    };
    assert_eq!(at_terminal("job list").trim(), "no jobs");
    assert_eq!(at_terminal("job pending").trim(), "nothing waits for you");
    assert_eq!(at_terminal("job list --json").trim(), "[]");
    assert_eq!(stdout(&home, &["job", "list"]), "");
    assert_eq!(stdout(&home, &["job", "pending"]), "");
    assert_eq!(stdout(&home, &["job", "pending", "--json"]).trim(), "[]");
}
