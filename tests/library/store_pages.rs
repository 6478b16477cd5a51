//! Reads that must stay flat with history, on real SQLite files: the unread counters
//! stay exact under concurrent writers, the listing queries walk their indexes (checked
//! with `EXPLAIN QUERY PLAN`), and `job list` / `chat inbox` page and stream through the
//! real binary.

use gitmoot_test_support as support;

use gitmoot::chat::inbox::{self, ReadSelection};
use gitmoot::chat::messages::{SendOptions, send_message};
use gitmoot::chat::threads::{self, NewThread};
use gitmoot::chat::write_retry;
use gitmoot::clock::SystemClock;
use gitmoot::domain::{Action, JobState};
use gitmoot::engine::{SubmitRoot, submit_root};
use gitmoot::home::Home;
use gitmoot::store::Store;
use gitmoot::store::agents;
use gitmoot::store::chat as rows;
use gitmoot::store::jobs::{self, JobFilter, ListColumns};
use predicates::prelude::*;
use support::{ask_agent, gitmoot, stdout};

const AGENTS: [&str; 3] = ["ana", "ben", "cy"];

fn seed_home(dir: &std::path::Path, threads: &[&str]) -> Store {
    let home = Home::resolve(Some(dir)).unwrap();
    let mut store = Store::open_home(&home).unwrap();
    write_retry(&mut store, |tx| {
        for a in AGENTS {
            agents::insert(tx, &ask_agent(a))?;
        }
        for t in threads {
            threads::create(
                tx,
                &SystemClock,
                NewThread {
                    name: t,
                    repo: "owner/repo",
                    title: None,
                    created_by: "human",
                },
            )?;
        }
        Ok(())
    })
    .unwrap();
    store
}

/// (name, unread) pairs, ordered by name.
type Counts = Vec<(String, i64)>;

/// Full counts straight from the mentions, the way the counters must agree.
fn full_counts(store: &Store) -> (Counts, Counts) {
    let conn = store.conn().sqlite().unwrap();
    let origin = rows::origin(conn).unwrap();
    let by_agent = conn
        .prepare(
            "SELECT agent, COUNT(*) FROM chat_mentions WHERE unread = 1 AND resolved = 1
             AND agent_origin = ?1 GROUP BY agent ORDER BY agent",
        )
        .unwrap()
        .query_map([origin], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let by_thread = conn
        .prepare(
            "SELECT thread_id, COUNT(*) FROM chat_mentions WHERE unread = 1 AND resolved = 1
             GROUP BY thread_id ORDER BY thread_id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (by_agent, by_thread)
}

#[test]
fn unread_counters_equal_a_full_count_after_concurrent_writers() {
    let dir = tempfile::tempdir().unwrap();
    let store = seed_home(dir.path(), &["one", "two"]);
    let db = store.path().to_path_buf();
    // Four writers on their own connections: sends that mention one or two agents, and
    // mark-reads (whole inbox, one thread, single seqs) interleaved with them.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut store = Store::open(&db).unwrap();
                for i in 0..120 {
                    let thread = ["one", "two"][(w + i) % 2];
                    let body = if i % 3 == 0 {
                        format!(
                            "@{} and @{} item {w}/{i}",
                            AGENTS[i % 3],
                            AGENTS[(i + 1) % 3]
                        )
                    } else {
                        format!("@{} item {w}/{i}", AGENTS[(w + i) % 3])
                    };
                    let sent = send_message(
                        &mut store,
                        &SystemClock,
                        thread,
                        None,
                        &body,
                        &SendOptions::default(),
                    )
                    .unwrap();
                    let reader = AGENTS[(w + i) % 3];
                    match i % 10 {
                        4 => {
                            write_retry(&mut store, |tx| {
                                inbox::mark_read(tx, reader, None, &ReadSelection::All)
                            })
                            .unwrap();
                        }
                        7 => {
                            write_retry(&mut store, |tx| {
                                let t = threads::resolve(tx, thread, None)?;
                                inbox::mark_read(
                                    tx,
                                    reader,
                                    Some(&t),
                                    &ReadSelection::Seqs(vec![sent.message.seq]),
                                )
                            })
                            .unwrap();
                        }
                        9 => {
                            write_retry(&mut store, |tx| {
                                let t = threads::resolve(tx, thread, None)?;
                                inbox::mark_read(tx, reader, Some(&t), &ReadSelection::All)
                            })
                            .unwrap();
                        }
                        _ => {}
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let (by_agent, by_thread) = full_counts(&store);
    assert!(
        by_agent.iter().map(|(_, n)| n).sum::<i64>() > 0,
        "some stay unread"
    );
    assert_eq!(inbox::unread_counts(&store.conn()).unwrap(), by_agent);
    let mut counted = rows::unread_by_thread(store.conn()).unwrap();
    counted.sort();
    assert_eq!(counted, by_thread);
    assert_eq!(
        rows::unread_total(store.conn()).unwrap(),
        by_thread.iter().map(|(_, n)| n).sum::<i64>()
    );
}

/// The plan of `sql`, one detail line per step.
fn plan(store: &Store, sql: &str, args: &[rusqlite::types::Value]) -> String {
    store
        .conn()
        .sqlite()
        .unwrap()
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .query_map(rusqlite::params_from_iter(args.iter()), |r| {
            r.get::<_, String>(3)
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
        .join("\n")
}

#[test]
fn listing_queries_walk_their_indexes_without_a_sort() {
    let dir = tempfile::tempdir().unwrap();
    let store = seed_home(dir.path(), &[]);
    let text = |v: &str| Some(v.to_string());
    let cases: [(JobFilter, &str); 6] = [
        (JobFilter::default(), "jobs_created"),
        (
            JobFilter {
                state: Some(JobState::Failed),
                ..JobFilter::default()
            },
            "jobs_state",
        ),
        (
            JobFilter {
                agent: text("ana"),
                ..JobFilter::default()
            },
            "jobs_agent",
        ),
        (
            JobFilter {
                repo: text("owner/repo"),
                ..JobFilter::default()
            },
            "jobs_repo",
        ),
        (
            JobFilter {
                root: text("job-x"),
                ..JobFilter::default()
            },
            "jobs_root",
        ),
        (
            JobFilter {
                before: text("job-x"),
                ..JobFilter::default()
            },
            "jobs_created",
        ),
    ];
    for (mut filter, index) in cases {
        filter.limit = Some(50);
        for cols in [ListColumns::Table, ListColumns::Json] {
            let (sql, args) = jobs::list_query(&filter, cols);
            let args: Vec<_> = args.into_iter().map(rusqlite::types::Value::Text).collect();
            let p = plan(&store, &sql, &args);
            assert!(
                p.contains(&format!("USING INDEX {index}")),
                "{filter:?}:\n{p}"
            );
            assert!(!p.contains("TEMP B-TREE"), "{filter:?} sorts:\n{p}");
        }
    }
    for (unread, index) in [
        (true, "chat_mentions_unread"),
        (false, "chat_mentions_inbox"),
    ] {
        let args = [
            rusqlite::types::Value::Text("ana".into()),
            rusqlite::types::Value::Text("origin".into()),
            rusqlite::types::Value::Integer(50),
            rusqlite::types::Value::Integer(i64::MAX),
        ];
        let p = plan(&store, &rows::inbox_query(unread), &args);
        assert!(p.contains(index), "{p}");
        assert!(!p.contains("TEMP B-TREE"), "{p}");
    }
    let p = plan(
        &store,
        "SELECT agent, SUM(n) FROM chat_unread WHERE agent_origin = ?1 GROUP BY agent",
        &[rusqlite::types::Value::Text("origin".into())],
    );
    assert!(
        !p.contains("chat_mentions"),
        "badges never read the history:\n{p}"
    );
}

fn submit(store: &mut Store, n: usize) -> Vec<String> {
    store
        .write(|tx| {
            (0..n)
                .map(|i| {
                    submit_root(
                        tx,
                        &SystemClock,
                        SubmitRoot::new(
                            "ana",
                            Action::Ask,
                            format!("job number {i}\nsecond line"),
                            "test",
                        ),
                    )
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap()
}

fn ids(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn job_list_pages_newest_first_and_streams_json() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = seed_home(dir.path(), &[]);
    let mut submitted = submit(&mut store, 60);
    submitted.reverse();
    let home = dir.path();
    let page = support::json(home, &["job", "list", "--json"]);
    assert_eq!(ids(&page), submitted[..50], "one page of the newest 50");
    assert_eq!(page[0]["prompt"], "job number 59\nsecond line");
    let all = support::json(home, &["job", "list", "--all", "--json"]);
    assert_eq!(ids(&all), submitted);
    let five = support::json(home, &["job", "list", "--limit", "5", "--json"]);
    assert_eq!(ids(&five), submitted[..5]);
    let next = support::json(
        home,
        &[
            "job",
            "list",
            "--limit",
            "5",
            "--before",
            &submitted[4],
            "--json",
        ],
    );
    assert_eq!(
        ids(&next),
        submitted[5..10],
        "the cursor continues the order"
    );
    let lines = stdout(home, &["job", "list", "--limit", "3", "--jsonl"]);
    let rows: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0], page[0], "a JSON Lines row is the array's row");
    let text = stdout(home, &["job", "list", "--limit", "2"]);
    assert_eq!(text.lines().count(), 3, "a header and two rows: {text}");
    assert!(text.starts_with("ID "), "{text}");
    assert!(
        text.lines().nth(1).unwrap().ends_with("job number 59"),
        "{text}"
    );
    assert_eq!(
        support::json(home, &["job", "list", "--state", "failed", "--json"]),
        serde_json::json!([])
    );
    gitmoot(home)
        .args(["job", "list", "--before", "job-nope"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::starts_with("error:").and(predicate::str::contains("job-nope")));
}

#[test]
fn chat_inbox_pages_with_a_mention_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = seed_home(dir.path(), &["room"]);
    for i in 0..60 {
        send_message(
            &mut store,
            &SystemClock,
            "room",
            None,
            &format!("@ana note {i}"),
            &SendOptions::default(),
        )
        .unwrap();
    }
    let home = dir.path();
    let page = support::json(home, &["chat", "inbox", "ana", "--json"]);
    let seqs = |v: &serde_json::Value| -> Vec<i64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|m| m["seq"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(seqs(&page), (11..=60).rev().collect::<Vec<_>>());
    assert_eq!(
        seqs(&support::json(
            home,
            &["chat", "inbox", "ana", "--all", "--json"]
        ))
        .len(),
        60
    );
    let lines = stdout(home, &["chat", "inbox", "ana", "--limit", "2", "--jsonl"]);
    let rows: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seqs(&serde_json::json!(rows)), [60, 59]);
    let cursor = rows[1]["id"].as_i64().unwrap().to_string();
    let next = support::json(
        home,
        &[
            "chat", "inbox", "ana", "--limit", "3", "--before", &cursor, "--json",
        ],
    );
    assert_eq!(seqs(&next), [58, 57, 56]);
    gitmoot(home)
        .args(["chat", "inbox", "ana", "--limit", "2", "--all"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::starts_with("error:"));
}
