//! "2 = usage or validation error, nothing is changed": every validation error of the CLI,
//! walked against one populated home, exits 2 with one `error:` line and leaves the store
//! exactly as it was (a dump of every row of every table, compared before and after).

use gitmoot_test_support as support;

use std::path::Path;

use support::{gitmoot, shell_agent};

/// Every row of every table, in a stable order, as text.
fn dump(home: &Path) -> String {
    support::unchanged::store_rows(home)
}

fn run(home: &Path, args: &[&str]) -> (i32, String) {
    let out = gitmoot(home).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(home: &Path, args: &[&str]) -> String {
    support::stdout(home, args).trim().to_string()
}

#[test]
fn every_validation_error_exits_2_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    shell_agent(&home, "echoer", "cat", &["--capability", "ask"]);
    shell_agent(&home, "rev", "cat", &[]);
    let root = ok(&home, &["job", "run", "--agent", "echoer", "first"]);
    ok(&home, &["chat", "create", "room", "--repo", "acme/api"]);
    ok(&home, &["chat", "send", "room", "hello @echoer"]);
    ok(&home, &["chat", "create", "shut", "--repo", "acme/api"]);
    ok(&home, &["chat", "close", "shut"]);

    let cases: Vec<Vec<&str>> = vec![
        // Issue 14, failure 6: the refused promotion used to be posted anyway.
        vec![
            "chat",
            "task",
            "room",
            "@echoer review this",
            "--action",
            "review",
        ],
        vec!["chat", "task", "room", "nobody named"],
        vec!["chat", "task", "room", "   "],
        vec!["chat", "task", "room", "@echoer @rev both"],
        vec!["chat", "task", "nosuch", "@echoer hi"],
        vec!["chat", "send", "nosuch", "hi"],
        vec!["chat", "send", "room", ""],
        vec!["chat", "create", "!!!", "--repo", "acme/api"],
        vec!["chat", "rename", "nosuch", "New title"],
        vec!["chat", "close", "nosuch"],
        vec!["chat", "remember", "room", "99"],
        vec!["chat", "show", "nosuch"],
        vec!["job", "run", "--agent", "ghost", "hi"],
        vec!["job", "run", "--agent", "echoer", ""],
        vec![
            "job", "run", "--agent", "echoer", "--action", "review", "hi",
        ],
        vec!["job", "run", "--agent", "echoer", "--timeout", "soon", "hi"],
        vec!["job", "show", "job-nosuch"],
        vec!["job", "tree", "job-nosuch"],
        vec!["job", "kill", "job-nosuch"],
        vec!["job", "cancel", "job-nosuch"],
        vec!["job", "answer", &root, "q1: yes"],
        vec!["job", "answer", "job-nosuch", "q1: yes"],
        vec!["job", "resume", &root, "retry"],
        vec!["job", "resume", &root, "sideways"],
        vec!["job", "list", "--state", "sleeping"],
        vec![
            "agent",
            "add",
            "echoer",
            "--runtime",
            "shell",
            "--command",
            "cat",
        ],
        vec!["agent", "add", "newbie", "--runtime", "nosuch"],
        vec!["agent", "add", "newbie", "--runtime", "shell"],
        vec![
            "agent",
            "add",
            "Bad Name",
            "--runtime",
            "shell",
            "--command",
            "cat",
        ],
        vec![
            "agent",
            "add",
            "newbie",
            "--runtime",
            "shell",
            "--command",
            "cat",
            "--capability",
            "fly",
        ],
        vec!["agent", "show", "ghost"],
        vec!["agent", "rm", "ghost"],
        vec!["memory", "confirm", "999"],
        vec!["memory", "promote", "999"],
        vec!["daemon", "run", "--parallel", "0"],
        vec!["job", "frobnicate"],
    ];
    let mut before = dump(&home);
    let mut wrong = Vec::new();
    for args in &cases {
        let (code, stderr) = run(&home, args);
        let after = dump(&home);
        let one_line = stderr.trim().lines().count() == 1 && stderr.starts_with("error:");
        if code != 2 || after != before {
            wrong.push(format!(
                "{args:?}: exit {code}, store {}: {stderr}",
                if after == before {
                    "unchanged"
                } else {
                    "CHANGED"
                }
            ));
            before = after;
        } else if !one_line && !args.contains(&"frobnicate") && !args.contains(&"--runtime") {
            wrong.push(format!("{args:?}: not one error line: {stderr}"));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
