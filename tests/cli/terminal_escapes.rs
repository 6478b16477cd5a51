//! The terminal is the user's (issue 25, item 11): agent-controlled text (a result's
//! summary, findings and questions, a prompt, a thread's title, a chat message, activity)
//! holding a clipboard write (OSC 52), a title change (OSC 0) and a screen clear (CSI 2J)
//! reaches every verb's human output without a control character but `\n` and `\t`, while
//! `--json` keeps the agent's text exactly.

use gitmoot_test_support as support;

use serde_json::Value;
use support::daemon::TestHome;

/// The three sequences of the audit, each around plain words that must survive them.
const CLIPBOARD: &str = "\u{1b}]52;c;ZXZpbA==\u{7}";
const TITLE: &str = "\u{1b}]0;pwned\u{7}";
const CLEAR: &str = "\u{1b}[2J";

/// The same three as a JSON string's escapes, for a shell agent to print.
const JSON_SEQS: &str = r"\u001b]52;c;ZXZpbA==\u0007 \u001b]0;pwned\u0007 \u001b[2J";

/// `word`, the three sequences, `end`: what the agents below print, once decoded.
fn hostile(word: &str) -> String {
    format!("{word} {CLIPBOARD} {TITLE} {CLEAR} end")
}

/// Fails unless `text` holds no control character but `\n`/`\t` and no sequence's body.
fn assert_clean(verb: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect();
    assert!(bad.is_empty(), "{verb} printed controls {bad:?}:\n{text:?}");
    // A sequence goes whole, not just its ESC (a result line in the activity may still
    // show the JSON's `\u001b` spelling, which is text).
    for rest in [" ]52;c;", " ]0;pwned", " [2J"] {
        assert!(
            !text.contains(rest),
            "{verb} printed an escape sequence's body:\n{text:?}"
        );
    }
}

fn json(h: &TestHome, args: &[&str]) -> Value {
    serde_json::from_str(&h.ok(args)).unwrap()
}

/// A shell agent whose activity, summary and findings carry the sequences (and, as
/// `asker`, a human question that does).
fn agents(h: &TestHome) {
    let result = format!(
        r#"{{"gitmoot_result":{{"decision":"approved","summary":"summary {JSON_SEQS} end","findings":["finding {JSON_SEQS} end"]}}}}"#
    );
    let script = format!(
        "cat >/dev/null\nprintf 'working \\033]0;pwned\\007 \\033[2J now\\n'\necho '{result}'"
    );
    support::shell_agent(&h.path(), "evil", &script, &["--repo", "acme/api"]);
    let asking = format!(
        r#"{{"gitmoot_result":{{"decision":"approved","summary":"asks","human_questions":[{{"id":"q1","prompt":"question {JSON_SEQS} end","choices":["a","b"]}}]}}}}"#
    );
    support::shell_agent(
        &h.path(),
        "asker",
        &format!("cat >/dev/null\necho '{asking}'"),
        &[],
    );
}

#[test]
fn agent_controlled_text_reaches_no_terminal_raw_and_json_keeps_it_exact() {
    let h = TestHome::new();
    agents(&h);
    let title = hostile("title");
    h.ok(&[
        "chat", "create", "room", "--repo", "acme/api", "--topic", &title,
    ]);
    let prompt = hostile("prompt");
    let promoted = h.ok(&["chat", "task", "room", &format!("@evil {prompt}")]);
    let evil = promoted
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("promoted job: "))
        .unwrap()
        .to_string();
    let message = hostile("message");
    h.ok(&[
        "chat",
        "send",
        "room",
        &format!("@asker {message}"),
        "--as",
        "evil",
    ]);
    let asker = h.submit("asker", &hostile("asked"), &[]);
    let daemon = h.ok(&["daemon", "run", "--until-idle", "--parallel", "2"]);
    assert_clean("daemon run", &daemon);

    let human: Vec<(&str, Vec<&str>)> = vec![
        ("job show", vec!["job", "show", &evil]),
        ("job show (asker)", vec!["job", "show", &asker]),
        ("job list", vec!["job", "list"]),
        ("job tree", vec!["job", "tree", &evil]),
        ("job logs", vec!["job", "logs", &evil]),
        ("job events", vec!["job", "events", &evil]),
        ("job pending", vec!["job", "pending"]),
        ("chat show", vec!["chat", "show", "room"]),
        ("chat list", vec!["chat", "list"]),
        ("chat inbox", vec!["chat", "inbox", "asker"]),
        ("chat read", vec!["chat", "read", "asker", "--all"]),
        ("chat seen", vec!["chat", "seen", "room"]),
    ];
    for (verb, args) in &human {
        let text = h.ok(args);
        assert!(!text.trim().is_empty(), "{verb} printed nothing");
        assert_clean(verb, &text);
    }
    // The words around the sequences are the agent's and stay.
    let shown = h.ok(&["job", "show", &evil]);
    assert!(shown.contains("summary"), "{shown}");
    assert!(shown.contains("end"), "{shown}");

    let job = json(&h, &["job", "show", &evil, "--json"]);
    assert!(job["prompt"].as_str().unwrap().contains(&prompt), "{job}");
    assert_eq!(job["result"]["summary"], hostile("summary"));
    assert_eq!(job["result"]["findings"][0], hostile("finding"));
    let listed = json(&h, &["job", "list", "--json"]);
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["prompt"].as_str().unwrap().contains(&prompt))
    );
    let rows = h.ok(&["job", "list", "--jsonl"]);
    assert!(
        rows.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .any(|j| j["result"]["summary"] == hostile("summary")),
        "{rows}"
    );
    let pending = json(&h, &["job", "pending", "--json"]);
    assert_eq!(pending[0]["questions"][0]["prompt"], hostile("question"));
    let thread = json(&h, &["chat", "show", "room", "--json"]);
    assert_eq!(thread["thread"]["title"], title);
    let bodies = support::bodies(&thread);
    assert!(
        bodies.contains(&format!("@asker {message}").as_str()),
        "{bodies:?}"
    );
    assert!(
        bodies.iter().any(|b| b.contains(&hostile("finding"))),
        "the job's result in the thread keeps its findings exactly: {bodies:?}"
    );
    let inbox = json(&h, &["chat", "inbox", "asker", "--json"]);
    let mention = format!("@asker {message}");
    assert!(
        inbox
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["body"] == mention),
        "{inbox}"
    );
}
