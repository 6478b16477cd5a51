//! `gitmoot search` through the binary, on SQLite and on PostgreSQL: a word found in each
//! of a prompt, a result (its summary, a finding object, a test), an activity step and a
//! chat message, each hit placed; ranking; `--in`; stemming; the index kept in step when
//! those rows are updated and deleted; and a query with no word refused.

use gitmoot_test_support as support;

use gitmoot::store::tx::params;
use gitmoot::store::{Location, Store};
use serde_json::Value;
use support::daemon::TestHome;

/// The agent's output: a step on stdout, then a result with the words to find.
const SCRIPT: &str = r#"cat >/dev/null
echo 'tracing the flamingo parser'
echo '{"gitmoot_result":{"decision":"approved","summary":"the walrus module is sound","findings":[{"title":"narwhal leak in the cache","file":"src/a.rs"}],"tests_run":["cargo test okapi"]}}'
"#;

/// A home on `url` (SQLite's own file when None) with one job run and a chat thread.
fn scene(url: Option<&str>) -> (TestHome, String) {
    let h = TestHome::new();
    h.config(&url.map_or(String::new(), |u| format!("[store]\nurl = \"{u}\"\n")));
    h.shell_agent("scout", SCRIPT);
    let root = h.submit("scout", "review the pelican handler", &[]);
    h.daemon_until_idle(1);
    h.ok(&["chat", "create", "plan", "--repo", "o/r"]);
    for body in [
        "the axolotl plan is ready, and the pelican too",
        "one heron among many other words in a longer message about birds",
        "heron heron heron",
    ] {
        h.ok(&["chat", "send", "plan", body]);
    }
    (h, root)
}

fn search(h: &TestHome, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["search"];
    all.extend_from_slice(args);
    all.push("--json");
    let doc: Value = serde_json::from_str(&h.ok(&all)).unwrap();
    doc.as_array().unwrap().clone()
}

/// `(source, job or thread)` of every hit, best first.
fn places(hits: &[Value]) -> Vec<(String, String)> {
    hits.iter()
        .map(|h| {
            let at = h["job"].as_str().or(h["thread"].as_str()).unwrap_or("-");
            (h["source"].as_str().unwrap().to_string(), at.to_string())
        })
        .collect()
}

fn pair(source: &str, at: &str) -> (String, String) {
    (source.to_string(), at.to_string())
}

fn finds_each_kind_ranks_and_keeps_in_step(url: Option<&str>, store: impl Fn(&TestHome) -> Store) {
    let (h, root) = scene(url);
    // The result's words are in the step that printed it too.
    for word in ["walrus", "narwhal", "okapi"] {
        let mut found = places(&search(&h, &[word]));
        found.sort();
        assert_eq!(
            found,
            [pair("activity", &root), pair("results", &root)],
            "{word}"
        );
        let results = search(&h, &[word, "--in", "results"]);
        assert_eq!(places(&results), [pair("results", &root)], "{word}");
        assert!(
            results[0]["snippet"]
                .as_str()
                .unwrap()
                .contains(&format!("«{word}»"))
        );
    }
    let step = search(&h, &["flamingo"]);
    assert_eq!(places(&step), [pair("activity", &root)]);
    assert_eq!(step[0]["seq"], 0, "the job's first step");
    assert_eq!(step[0]["snippet"], "tracing the «flamingo» parser");
    let chat = search(&h, &["axolotl"]);
    assert_eq!(places(&chat), [pair("chat", "plan")]);
    assert_eq!(
        (chat[0]["seq"].as_u64(), chat[0]["author"].as_str()),
        (Some(1), Some("human"))
    );

    // A word in a prompt and a message; stemmed ("handlers" finds "handler"); `--in`.
    let mut both = places(&search(&h, &["pelican"]));
    both.sort();
    assert_eq!(both, [pair("chat", "plan"), pair("prompts", &root)]);
    assert_eq!(
        places(&search(&h, &["pelican", "handlers"])),
        [pair("prompts", &root)],
        "every word must appear"
    );
    assert_eq!(
        places(&search(&h, &["pelican", "--in", "chat"])),
        [pair("chat", "plan")]
    );
    assert!(search(&h, &["pelican", "--in", "results,activity"]).is_empty());

    // Ranked: the message that is all heron comes before the one that mentions it once.
    let herons = search(&h, &["heron"]);
    let seqs: Vec<u64> = herons.iter().map(|h| h["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [3, 2]);
    assert!(herons[0]["score"].as_f64() > herons[1]["score"].as_f64());
    let human = h.ok(&["search", "heron"]);
    assert!(
        human
            .lines()
            .next()
            .unwrap()
            .contains("«heron» «heron» «heron»"),
        "{human}"
    );

    // Updates and deletes reach the index in the writer's own transaction.
    let mut s = store(&h);
    s.write(|tx| {
        tx.execute(
            "UPDATE chat_messages SET body = 'now a capybara plan' WHERE seq = 1",
            params![],
        )?;
        tx.execute("DELETE FROM activity WHERE job_id = ?1", params![root])?;
        tx.execute("UPDATE jobs SET result = NULL WHERE id = ?1", params![root])?;
        tx.execute(
            "UPDATE jobs SET prompt = 'review the ibis handler' WHERE id = ?1",
            params![root],
        )
    })
    .unwrap();
    for gone in ["axolotl", "flamingo", "walrus", "narwhal"] {
        assert!(search(&h, &[gone]).is_empty(), "{gone} still found");
    }
    assert_eq!(places(&search(&h, &["capybara"])), [pair("chat", "plan")]);
    assert_eq!(places(&search(&h, &["ibis"])), [pair("prompts", &root)]);
    assert_eq!(
        places(&search(&h, &["pelican"])),
        [],
        "the old prompt and message are gone"
    );
    s.write(|tx| {
        tx.execute("DELETE FROM job_payloads WHERE job_id = ?1", params![root])?;
        tx.execute("DELETE FROM jobs WHERE id = ?1", params![root])
    })
    .unwrap();
    assert!(
        search(&h, &["ibis"]).is_empty(),
        "a deleted job's prompt is gone"
    );
}

#[test]
fn search_on_sqlite_finds_every_kind_ranked_and_follows_updates_and_deletes() {
    finds_each_kind_ranks_and_keeps_in_step(None, TestHome::store);
}

#[test]
fn search_on_postgres_finds_every_kind_ranked_and_follows_updates_and_deletes() {
    let db = support::pg::database();
    let url = db.url();
    finds_each_kind_ranks_and_keeps_in_step(Some(&url), |_| {
        Store::open_location(&Location::parse(&url).unwrap()).unwrap()
    });
}

#[test]
fn search_refuses_a_query_without_a_word_and_an_unknown_source() {
    let h = TestHome::new();
    h.ok(&["init"]);
    for (args, says) in [
        (
            &["search", " -- "][..],
            "search query \" -- \" has no word to look for",
        ),
        (
            &["search", "x", "--in", "mail"][..],
            "unknown search source \"mail\"",
        ),
    ] {
        crate::usage_cli::refused_in_one_line(&h, args, says);
    }
}
