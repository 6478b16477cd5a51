//! The store on both backends: the throwaway PostgreSQL cluster the suites share, the
//! backend-neutral transaction, and the schema each backend migrates to.

use gitmoot_test_support as support;

use std::collections::BTreeSet;
use std::sync::Arc;

use gitmoot::domain::{Action, Delegation, EventKind, JobKind, JobState, RunState};
use gitmoot::store::activity::{self, LiveSpend, NewActivity, Then};
use gitmoot::store::agents::{self, Agent};
use gitmoot::store::delegations::{self, Leg, LegState};
use gitmoot::store::events::{self, NewEvent};
use gitmoot::store::jobs::{self, Job, JobFilter};
use gitmoot::store::runs::{self, Run};
use gitmoot::store::tx::params;
use gitmoot::store::{
    Backend, Location, PG_SCHEMA_VERSION, SCHEMA_VERSION, Store, StoreError, Tx, chat, daemons,
    meta, payloads,
};
use serde_json::json;
use support::pg::Cluster;

/// The cluster the PostgreSQL runs depend on comes up, serves a database over its socket
/// and over TCP, and is gone (server stopped, files removed) once its last handle drops.
#[test]
fn a_throwaway_cluster_serves_databases_and_leaves_nothing_behind() {
    let cluster = Arc::new(Cluster::start());
    let dir = cluster.dir().to_path_buf();
    let db = cluster.database();
    for url in [db.url(), db.tcp_url()] {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let row = c
            .query_one("SELECT current_database(), 1 + 1", &[])
            .unwrap();
        assert_eq!(row.get::<_, String>(0), db.name());
        assert_eq!(row.get::<_, i32>(1), 2);
    }
    let url = cluster.url("postgres");
    drop(db);
    drop(cluster);
    assert!(!dir.exists(), "{} is left behind", dir.display());
    assert!(
        postgres::Client::connect(&url, postgres::NoTls).is_err(),
        "the server still answers"
    );
}

/// A store of each backend, with what keeps it alive (its temp dir or its database).
fn stores() -> Vec<(Store, Box<dyn std::any::Any>)> {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open_location(&Location::Sqlite(dir.path().join("gitmoot.db"))).unwrap();
    let db = support::pg::database();
    let pg = Store::open_location(&Location::Postgres(db.url())).unwrap();
    vec![(sqlite, Box::new(dir)), (pg, Box::new(db))]
}

fn names(tx: &Tx<'_>, sql: &str) -> BTreeSet<String> {
    tx.query_map(sql, params![], |r| r.get(0))
        .unwrap()
        .into_iter()
        .collect()
}

const RUN: &str = "INSERT INTO runs(root_id, state, title, repo, killed, paused_ms, paused_since_ms, \
     cost_usd, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?6, ?6)";

/// Every kind of parameter binds, every kind of column reads back as the same Rust value,
/// and a placeholder used twice binds once, on both backends.
#[test]
fn values_cross_the_neutral_transaction_unchanged_on_both_backends() {
    for (mut store, _keep) in stores() {
        let backend = store.backend();
        store
            .write(|tx| {
                tx.execute(
                    RUN,
                    params![
                        "r1",
                        RunState::Running,
                        "it's ?1",
                        None::<String>,
                        true,
                        1_700_000_000_123i64,
                        Some(5i64),
                        0.25f64
                    ],
                )
            })
            .unwrap();
        let row = store
            .conn()
            .query_row(
                "SELECT state, title, repo, killed, paused_ms, paused_since_ms, cost_usd, \
                 created_ms = updated_ms, jobs FROM runs WHERE root_id = ?1",
                params!["r1"],
                |r| {
                    Ok((
                        r.get::<RunState>(0)?,
                        r.get::<String>(1)?,
                        r.get::<Option<String>>(2)?,
                        r.get::<bool>(3)?,
                        r.get::<i64>(4)?,
                        r.get::<Option<i64>>(5)?,
                        r.get::<f64>(6)?,
                        r.get::<bool>(7)?,
                        r.get::<u32>(8)?,
                    ))
                },
            )
            .unwrap();
        assert_eq!(
            row,
            (
                RunState::Running,
                "it's ?1".to_string(),
                None,
                true,
                1_700_000_000_123,
                Some(5),
                0.25,
                true,
                0
            ),
            "{backend:?}"
        );
        let err = store
            .conn()
            .query_row("SELECT title FROM runs", params![], |r| r.get::<i64>(0))
            .unwrap_err();
        assert!(err.to_string().contains("column 0"), "{backend:?}: {err}");
    }
}

/// A failed transaction leaves nothing, a failed savepoint undoes only its own writes,
/// and SQLite's two-argument MAX, JSON paths and planner hints run on PostgreSQL too.
#[test]
fn transactions_savepoints_and_dialect_rewrites_behave_alike() {
    for (mut store, _keep) in stores() {
        let backend = store.backend();
        let failed: Result<(), StoreError> = store.write(|tx| {
            tx.execute(
                RUN,
                params![
                    "gone",
                    "running",
                    "t",
                    None::<String>,
                    false,
                    1i64,
                    None::<i64>,
                    0.0
                ],
            )?;
            Err(StoreError::Invalid(gitmoot::Invalid::new("on purpose")))
        });
        assert!(failed.is_err());
        store
            .write(|tx| {
                tx.execute(RUN, params!["kept", "running", "t", None::<String>, false, 7i64, None::<i64>, 0.0])?;
                let inner = tx.savepoint(|| {
                    tx.execute(RUN, params!["undone", "running", "t", None::<String>, false, 1i64, None::<i64>, 0.0])?;
                    Err::<(), _>(StoreError::Invalid(gitmoot::Invalid::new("on purpose")))
                })?;
                assert!(inner.is_err());
                tx.execute(
                    "INSERT INTO jobs(id, root_id, kind, agent, action, prompt, state, result, created_ms, updated_ms)
                     VALUES ('j', 'kept', 'root', 'a', 'review', 'p', 'succeeded', ?1, 3, 3)",
                    params![r#"{"decision": "approved", "summary": "fine"}"#],
                )
            })
            .unwrap();
        let tx = store.conn();
        assert_eq!(
            names(&tx, "SELECT root_id FROM runs"),
            BTreeSet::from(["kept".to_string()]),
            "{backend:?}"
        );
        let (greater, decision, valid, result): (i64, String, bool, String) = tx
            .query_row(
                "SELECT MAX(j.created_ms, r.created_ms), json_extract(j.result, '$.decision'),
                        json_valid(j.result), j.result
                 FROM jobs j JOIN runs r ON r.root_id = j.root_id WHERE +j.state = ?1",
                params!["succeeded"],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            (greater, decision.as_str(), valid),
            (7, "approved", true),
            "{backend:?}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&result).unwrap();
        assert_eq!(parsed["summary"], "fine", "{backend:?}");
        let total: i64 = tx
            .one("SELECT SUM(created_ms) FROM jobs", params![])
            .unwrap();
        assert_eq!(total, 3, "{backend:?}");
    }
}

/// The PostgreSQL schema has SQLite's tables, columns and named indexes (plus the `rowid`
/// that orders ties), in real types, and both stores get a home id that reopening keeps;
/// the natives list's objects apart.
#[test]
fn both_backends_migrate_to_the_same_tables_columns_and_indexes() {
    let mut shapes = Vec::new();
    for (store, _keep) in stores() {
        let tx = store.conn();
        let (tables, indexes, version) = match tx.backend() {
            Backend::Sqlite => (
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
                "PRAGMA user_version",
            ),
            Backend::Postgres => (
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = 'public' AND table_name <> 'schema_version'",
                "SELECT indexname::text FROM pg_indexes WHERE schemaname = 'public'
                 AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key'",
                "SELECT version FROM schema_version",
            ),
        };
        let expected = match tx.backend() {
            Backend::Sqlite => SCHEMA_VERSION,
            Backend::Postgres => PG_SCHEMA_VERSION,
        };
        assert_eq!(tx.one::<i64>(version, params![]).unwrap(), expected);
        let mut columns = BTreeSet::new();
        for t in names(&tx, tables) {
            let sql = match tx.backend() {
                Backend::Sqlite => format!("SELECT name FROM pragma_table_info('{t}')"),
                Backend::Postgres => format!(
                    "SELECT column_name::text FROM information_schema.columns
                     WHERE table_name = '{t}' AND column_name <> 'rowid'"
                ),
            };
            columns.extend(names(&tx, &sql).into_iter().map(|c| format!("{t}.{c}")));
        }
        assert_eq!(meta::home_id(&tx).unwrap().len(), 32);
        // The search index is built in each backend's own kind (an FTS5 table; a tsvector
        // under a GIN index): `tests/cli/search_cli.rs` runs it on both instead.
        let native = |n: &String| !n.starts_with("search_");
        let columns = columns.into_iter().filter(native).collect::<BTreeSet<_>>();
        let tables: BTreeSet<String> = names(&tx, tables).into_iter().filter(native).collect();
        let indexes: BTreeSet<String> = names(&tx, indexes).into_iter().filter(native).collect();
        shapes.push((tables, columns, indexes));
    }
    assert_eq!(shapes[0].0, shapes[1].0, "tables");
    assert_eq!(shapes[0].1, shapes[1].1, "columns");
    assert_eq!(shapes[0].2, shapes[1].2, "indexes");
}

/// PostgreSQL columns carry real types, and a store migrated by a newer gitmoot is
/// refused by name, as a SQLite file is.
#[test]
fn the_postgres_schema_has_real_types_and_refuses_a_newer_version() {
    let db = support::pg::database();
    let location = Location::Postgres(db.url());
    let store = Store::open_location(&location).unwrap();
    let home = meta::home_id(&store.conn()).unwrap();
    let types: Vec<String> = [
        "jobs.result",
        "jobs.created_ms",
        "events.id",
        "events.data",
        "runs.cost_usd",
        "delegations.spec",
    ]
    .iter()
    .map(|c| {
        let (t, col) = c.split_once('.').unwrap();
        store
            .conn()
            .one(
                "SELECT data_type::text FROM information_schema.columns
                 WHERE table_name = ?1 AND column_name = ?2",
                params![t, col],
            )
            .unwrap()
    })
    .collect();
    assert_eq!(
        types,
        [
            "jsonb",
            "bigint",
            "bigint",
            "jsonb",
            "double precision",
            "jsonb"
        ]
    );
    drop(store);
    let mut again = Store::open_location(&location).unwrap();
    assert_eq!(
        meta::home_id(&again.conn()).unwrap(),
        home,
        "reopening keeps the home id"
    );
    again
        .write(|tx| tx.execute("UPDATE schema_version SET version = 99", params![]))
        .unwrap();
    drop(again);
    let err = Store::open_location(&location).err().unwrap();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err}"
    );
}

/// The unread badge counters follow mentions through inserts, updates and deletes on
/// both backends (SQLite's triggers, PostgreSQL's trigger function).
#[test]
fn unread_counters_follow_mentions_on_both_backends() {
    for (mut store, _keep) in stores() {
        let backend = store.backend();
        store
            .write(|tx| {
                tx.batch(
                    "INSERT INTO chat_threads(id, slug, title, repo, origin, created_ms, updated_ms)
                         VALUES ('t1', 'plan', 'Plan', 'o/r', 'home', 1, 1);
                     INSERT INTO chat_messages(id, origin, thread_id, seq, ts_ms, author_kind,
                         author_name, author_origin, body, envelope_json)
                         VALUES ('m1', 'home', 't1', 1, 1, 'human', 'human', 'home', '@a', '{}');",
                )?;
                for unread in [1i64, 1, 0] {
                    tx.execute(
                        "INSERT INTO chat_mentions(message_id, thread_id, seq, kind, agent,
                             agent_origin, unread, created_ms)
                         VALUES ('m1', 't1', 1, 'chat', 'a', 'home', ?1, 1)",
                        params![unread],
                    )?;
                }
                let first: i64 = tx.one("SELECT MIN(id) FROM chat_mentions", params![])?;
                tx.execute(
                    "UPDATE chat_mentions SET unread = 0 WHERE id = ?1",
                    params![first],
                )?;
                tx.execute(
                    "UPDATE chat_mentions SET unread = 1 WHERE id = ?1 + 2",
                    params![first],
                )?;
                tx.execute(
                    "DELETE FROM chat_mentions WHERE id = ?1 + 1",
                    params![first],
                )
            })
            .unwrap();
        let n: i64 = store
            .conn()
            .one("SELECT n FROM chat_unread WHERE agent = 'a'", params![])
            .unwrap();
        assert_eq!(n, 1, "{backend:?}");
    }
}

/// `--store` beats `$GITMOOT_STORE`, which beats `[store] url`, which beats the home's own
/// file; a bad URL is one `error:` line naming it, exit 2, and nothing is created.
#[test]
fn the_store_url_comes_from_the_flag_the_environment_or_the_config_in_that_order() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let at = |name: &str| format!("sqlite:{}", dir.path().join(name).display());
    for args in [
        &["--store", "mysql://u:hunter2@db/x"][..],
        &["--store", "postgres://h:notaport/x"],
    ] {
        let out = support::gitmoot(&home)
            .args(args)
            .args(["agent", "list"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: store URL \""), "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
        assert!(!home.exists(), "a bad URL created the home");
    }
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!("[store]\nurl = {:?}\n", at("config.db")),
    )
    .unwrap();
    let run = |flag: Option<&str>, env: Option<&str>| {
        let mut c = support::gitmoot(&home);
        if let Some(f) = flag {
            c.args(["--store", f]);
        }
        if let Some(e) = env {
            c.env("GITMOOT_STORE", e);
        }
        let out = c.args(["agent", "list"]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(Some(&at("flag.db")), Some("mysql://ignored"));
    assert!(dir.path().join("flag.db").exists());
    run(None, Some(&at("env.db")));
    assert!(dir.path().join("env.db").exists());
    run(None, None);
    assert!(dir.path().join("config.db").exists());
    assert!(
        !home.join("gitmoot.db").exists(),
        "the home's own file was used"
    );
}

/// The ported aggregates write and read the same rows on both backends: agents, runs
/// updated in place, jobs with JSON columns and their listings, events, legs written
/// twice, escalation rounds, payloads and memory.
#[test]
fn the_aggregates_round_trip_on_both_backends() {
    for (mut store, _keep) in stores() {
        let b = store.backend();
        store
            .write(|tx| {
                agents::insert(tx, &Agent::shell("ana", "true"))?;
                let mut run = Run::new("job-r".into(), "title".into(), None, 10);
                runs::put(tx, &run)?;
                run.tokens = 42;
                run.killed = true;
                runs::put(tx, &run)?;
                for (id, at) in [("job-r", 10), ("job-r/a", 11), ("job-r/b", 11)] {
                    let mut j = Job::queued(
                        id.into(),
                        "job-r".into(),
                        JobKind::Root,
                        "ana".into(),
                        Action::Ask,
                        "p".into(),
                        at,
                    );
                    if id != "job-r" {
                        j.parent_id = Some("job-r".into());
                        j.kind = JobKind::Leg;
                    }
                    jobs::put(tx, &j)?;
                }
                let mut j = jobs::require(tx, "job-r/a")?;
                j.state = JobState::Succeeded;
                j.result = Some(json!({"decision": "approved", "summary": "ok", "n": [1, 2]}));
                jobs::put(tx, &j)?;
                events::append(
                    tx,
                    NewEvent::job(12, "job-r", "job-r/a", EventKind::DelegationPreflightFailed),
                )?;
                events::append(
                    tx,
                    NewEvent::job(13, "job-r", "job-r/a", EventKind::DelegationPreflightFailed)
                        .message("again".into())
                        .data(json!({"k": "v"})),
                )?;
                let spec: Delegation = serde_json::from_value(
                    json!({"id": "a", "agent": "ana", "action": "ask", "prompt": "p"}),
                )
                .unwrap();
                let mut leg = Leg::waiting("job-r".into(), "job-r".into(), 0, spec, 11);
                delegations::put(tx, &leg)?;
                leg.state = LegState::Dispatched;
                leg.job_id = Some("job-r/a".into());
                delegations::put(tx, &leg)?;
                payloads::set_checks(tx, "job-r/a", &json!([{"id": "c"}]), 14)?;
                payloads::set_resolution(tx, "job-r/a", "approved_with_notes", 15)?;
                for (tokens, kind) in [(5, Some("tool")), (3, None)] {
                    let step = kind.map(|kind| NewActivity {
                        kind,
                        summary: "ran",
                        detail: None,
                    });
                    activity::append(
                        tx,
                        "job-r/a",
                        "job-r",
                        16,
                        step.as_slice(),
                        Then::Running(LiveSpend {
                            tokens,
                            cost_usd: 0.5,
                        }),
                    )?;
                }
                Ok::<_, StoreError>(())
            })
            .unwrap();
        let tx = store.conn();
        assert_eq!(agents::list(tx).unwrap()[0].name, "ana", "{b:?}");
        let run = runs::get(tx, "job-r").unwrap().unwrap();
        assert_eq!((run.tokens, run.killed), (42, true), "{b:?}");
        assert_eq!(runs::live(tx).unwrap().len(), 1, "{b:?}");
        let a = jobs::get(tx, "job-r/a").unwrap().unwrap();
        assert_eq!(a.result.as_ref().unwrap()["n"], json!([1, 2]), "{b:?}");
        let ids = |js: Vec<Job>| js.into_iter().map(|j| j.id).collect::<Vec<_>>();
        assert_eq!(
            ids(jobs::by_root(tx, "job-r").unwrap()),
            ["job-r", "job-r/a", "job-r/b"],
            "{b:?}: ties in created_ms keep insertion order"
        );
        assert_eq!(
            ids(jobs::list(
                tx,
                &JobFilter {
                    before: Some("job-r/b".into()),
                    ..JobFilter::default()
                }
            )
            .unwrap()),
            ["job-r/a", "job-r"],
            "{b:?}"
        );
        assert_eq!(
            daemons::queued_page(tx, Some("job-r"), 1, 5)
                .unwrap()
                .into_iter()
                .map(|q| (q.id, q.on_label))
                .collect::<Vec<_>>(),
            [("job-r/b".to_string(), None)],
            "{b:?}"
        );
        assert_eq!(
            daemons::queued_page(tx, None, 0, 5).unwrap().len(),
            2,
            "{b:?}"
        );
        assert_eq!(jobs::count_state(tx, JobState::Succeeded).unwrap(), 1);
        let ambiguous = jobs::resolve_id(tx, "job-r/").unwrap_err().to_string();
        assert!(ambiguous.contains("ambiguous"), "{b:?}: {ambiguous}");
        assert_eq!(jobs::resolve_id(tx, "job-r/b").unwrap(), "job-r/b");
        let evs = events::for_job(tx, "job-r/a").unwrap();
        assert_eq!(evs.len(), 2, "{b:?}");
        assert!(evs[1].id > evs[0].id);
        assert_eq!(evs[1].data, Some(json!({"k": "v"})), "{b:?}");
        assert_eq!(
            events::latest_preflight_by_job(tx).unwrap()["job-r/a"],
            "again"
        );
        assert_eq!(events::count_preflight(tx).unwrap(), 2, "{b:?}");
        let legs = delegations::for_parent(tx, "job-r").unwrap();
        assert_eq!(legs.len(), 1, "{b:?}");
        assert_eq!(legs[0].state, LegState::Dispatched, "{b:?}");
        assert_eq!(delegations::count_waiting(tx, "job-r").unwrap(), 0);
        let act = activity::of_job(tx, "job-r/a").unwrap().unwrap();
        assert_eq!(
            (act.records, act.last_kind.as_deref(), act.live.tokens),
            (1, Some("tool"), 5),
            "{b:?}: a batch without steps keeps the last one and the larger live spend"
        );
        let p = payloads::get(tx, "job-r/a").unwrap();
        assert_eq!(p.result_checks, Some(json!([{"id": "c"}])), "{b:?}");
        assert_eq!(p.resolution.as_deref(), Some("approved_with_notes"));
    }
}

/// The chat rows on both backends: threads read with their newest activity, messages and
/// their envelope mentions, inbox pages with and without a limit, read marks feeding the
/// badge counters, auto-respond candidates (enrolled by config), the human's read
/// position, job links and thread metadata.
#[test]
fn chat_rows_behave_alike_on_both_backends() {
    for (mut store, _keep) in stores() {
        let b = store.backend();
        store
            .write(|tx| {
                agents::insert(tx, &Agent::shell("ana", "true"))?;
                agents::insert(tx, &Agent::shell("bob", "true"))?;
                let thread = chat::Thread {
                    id: "t1".into(),
                    slug: "plan".into(),
                    title: "Plan".into(),
                    repo: "o/r".into(),
                    origin: "home".into(),
                    state: chat::ThreadState::Open,
                    created_by: "human".into(),
                    created_ms: 1,
                    updated_ms: 1,
                };
                chat::insert_thread(tx, &thread)?;
                for seq in 1..=3i64 {
                    let seq_next = chat::next_seq(tx, "t1")?;
                    assert_eq!(seq_next, seq);
                    chat::insert_message(
                        tx,
                        &chat::Message {
                            id: format!("m{seq}"),
                            thread_id: "t1".into(),
                            seq,
                            ts_ms: 10 + seq,
                            author_kind: chat::AuthorKind::Agent,
                            author_name: "carl".into(),
                            author_origin: "home".into(),
                            kind: chat::MessageKind::Chat,
                            body: "@ana @bob".into(),
                            mentions: vec!["ana".into(), "bob".into()],
                            refs: vec![],
                            reply_to: None,
                            promoted_job_id: None,
                            job_id: None,
                            origin: "home".into(),
                            envelope_json: r#"{"mentions": ["ana", "bob"]}"#.into(),
                        },
                    )?;
                    chat::count_unseen(tx, "t1")?;
                    for agent in ["ana", "bob"] {
                        chat::insert_mention(
                            tx,
                            &chat::Mention {
                                id: 0,
                                message_id: format!("m{seq}"),
                                thread_id: "t1".into(),
                                seq,
                                kind: chat::MessageKind::Chat,
                                agent: agent.into(),
                                agent_origin: "home".into(),
                                resolved: true,
                                unread: true,
                                created_ms: 10 + seq,
                            },
                        )?;
                    }
                }
                chat::mark_read(tx, "ana", "home", Some("t1"), Some(&[1, 2]), None)?;
                chat::meta_set(tx, "t1", "k", "v1", 20)?;
                chat::meta_set(tx, "t1", "k", "v2", 21)?;
                let link = chat::JobLink {
                    root_id: "job-x".into(),
                    thread_id: "t1".into(),
                    reply_to: 1,
                    purpose: chat::LinkPurpose::AutoRespond,
                    agent: "bob".into(),
                    created_ms: 30,
                };
                assert!(chat::insert_link(tx, &link)?);
                assert!(!chat::insert_link(tx, &link)?, "the first link wins");
                assert_eq!(chat::mark_seen(tx, "t1", 2)?, 1);
                assert_eq!(chat::mark_seen(tx, "t1", 1)?, 2);
                Ok::<_, StoreError>(())
            })
            .unwrap();
        let tx = store.conn();
        let threads = chat::list_threads(tx, None, false).unwrap();
        assert_eq!(
            threads[0].updated_ms, 13,
            "{b:?}: activity is the newest message"
        );
        assert_eq!(
            chat::threads_by_slug(tx, "plan", Some("o/r"))
                .unwrap()
                .len(),
            1
        );
        assert_eq!(chat::messages(tx, "t1", 0, None).unwrap().len(), 3, "{b:?}");
        assert_eq!(
            chat::messages(tx, "t1", 0, Some(1)).unwrap()[0].seq,
            3,
            "{b:?}"
        );
        assert_eq!(
            chat::mentioned_agents(tx, "t1").unwrap(),
            ["ana", "bob"],
            "{b:?}"
        );
        assert_eq!(
            chat::inbox(tx, "ana", "home", true, None).unwrap().len(),
            1,
            "{b:?}"
        );
        assert_eq!(
            chat::inbox(tx, "ana", "home", false, Some(2))
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            chat::unread_counts(tx, "home").unwrap(),
            [("ana".to_string(), 1), ("bob".to_string(), 3)],
            "{b:?}"
        );
        assert_eq!(chat::unread_total(tx).unwrap(), 4, "{b:?}");
        let enrolled = chat::autorespond_candidates(tx, "home", &["bob".to_string()]).unwrap();
        assert_eq!(enrolled.len(), 1, "{b:?}");
        assert_eq!((enrolled[0].agent.as_str(), enrolled[0].seq), ("bob", 3));
        assert_eq!(
            chat::unseen_by_thread(tx).unwrap(),
            [("t1".to_string(), 1)],
            "{b:?}"
        );
        assert_eq!(
            chat::meta_get(tx, "t1", "k").unwrap().as_deref(),
            Some("v2")
        );
        assert_eq!(
            chat::last_link_ms(tx, "t1", "bob", chat::LinkPurpose::AutoRespond).unwrap(),
            Some(30)
        );
    }
}

/// The daemon registry on both backends: a lease is renewed until another daemon takes
/// it over, exactly once, and a stopped daemon can beat no more.
#[test]
fn the_daemon_registry_takes_over_a_lapsed_lease_once_on_both_backends() {
    for (mut store, _keep) in stores() {
        let b = store.backend();
        let row = daemons::DaemonRow {
            id: "d1".into(),
            host: "h".into(),
            pid: 7,
            parallel: 4,
            labels: vec!["gpu".into(), "x".into()],
            started_ms: 1,
            heartbeat_ms: 1,
            stopped_ms: None,
        };
        store.write(|tx| daemons::register(tx, &row)).unwrap();
        let tx = store.conn();
        assert!(daemons::beat(tx, "d1", 50).unwrap(), "{b:?}");
        assert!(
            !daemons::take_over(tx, "d1", 40, 60).unwrap(),
            "{b:?}: lease still held"
        );
        assert_eq!(
            daemons::unstopped(tx, None).unwrap()[0].labels,
            ["gpu", "x"]
        );
        assert_eq!(daemons::expired(tx, 51).unwrap().len(), 1, "{b:?}");
        assert!(daemons::take_over(tx, "d1", 51, 60).unwrap(), "{b:?}");
        assert!(
            !daemons::take_over(tx, "d1", 51, 61).unwrap(),
            "{b:?}: only once"
        );
        assert!(!daemons::beat(tx, "d1", 70).unwrap(), "{b:?}");
        assert_eq!(
            daemons::get(tx, "d1").unwrap().unwrap().stopped_ms,
            Some(60)
        );
    }
}

/// The real binary on a PostgreSQL store (`GITMOOT_STORE`): an agent registered there, a
/// job run to its end by the in-process daemon, and the same listing as on SQLite, while
/// the home keeps no database file.
#[test]
fn the_binary_runs_a_job_on_a_postgres_store() {
    let db = support::pg::database();
    let mut listings = Vec::new();
    for url in [None, Some(db.url())] {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let run = |args: &[&str]| {
            let mut c = support::gitmoot(&home);
            if let Some(u) = &url {
                c.env("GITMOOT_STORE", u);
            }
            let out = c.args(args).output().unwrap();
            assert!(
                out.status.success(),
                "{args:?} on {url:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        std::fs::create_dir_all(&home).unwrap();
        let script = home.join("ok.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\ncat >/dev/null\necho '{\"gitmoot_result\": {\"decision\": \"approved\", \"summary\": \"fine\"}}'\n",
        )
        .unwrap();
        let command = format!("sh {}", script.display());
        run(&support::agent_args::shell_agent_args(
            "ok",
            &command,
            &["--policy", "workspace-write"],
        ));
        run(&["job", "run", "--agent", "ok", "--wait", "check it"]);
        let list: serde_json::Value =
            serde_json::from_str(&run(&["job", "list", "--json"])).unwrap();
        let job = &list.as_array().unwrap()[0];
        assert_eq!(job["state"], "succeeded", "{url:?}: {job}");
        listings.push((
            job["agent"].clone(),
            job["state"].clone(),
            job["result"]["summary"].clone(),
        ));
        assert_eq!(home.join("gitmoot.db").exists(), url.is_none(), "{url:?}");
    }
    assert_eq!(listings[0], listings[1]);
}

/// The land journal on both backends: one intent a job, read back as written, taken back
/// by one caller only.
#[test]
fn a_land_intent_is_begun_once_and_taken_back_once_on_both_backends() {
    use gitmoot::domain::LandStrategy;
    use gitmoot::store::lands::{self, Intent};
    for (mut store, _keep) in stores() {
        let b = store.backend();
        let i = Intent {
            job_id: "job-l".into(),
            strategy: LandStrategy::Merge,
            how: "merge".into(),
            base: "main".into(),
            onto: "a".repeat(40),
            commit: "b".repeat(40),
            branch: "gitmoot/job-l/work".into(),
            tip: "c".repeat(40),
            dirty: true,
            checkout: "/repo".into(),
            path: "/wt/job-l".into(),
            host: "h1".into(),
            pid: 4_000_000_000,
            pid_started: 5_000_000_000,
            created_ms: 7,
        };
        let (first, again) = store
            .write(|tx| {
                agents::insert(tx, &Agent::shell("ana", "true"))?;
                runs::put(tx, &Run::new("job-l".into(), "t".into(), None, 1))?;
                jobs::put(
                    tx,
                    &Job::queued(
                        "job-l".into(),
                        "job-l".into(),
                        JobKind::Root,
                        "ana".into(),
                        Action::Implement,
                        "p".into(),
                        1,
                    ),
                )?;
                Ok::<_, StoreError>((lands::begin(tx, &i)?, lands::begin(tx, &i)?))
            })
            .unwrap();
        assert!(first && !again, "{b:?}");
        assert_eq!(lands::get(store.conn(), "job-l").unwrap(), Some(i.clone()));
        assert_eq!(lands::on_host(store.conn(), "h1").unwrap(), vec![i.clone()]);
        assert!(lands::on_host(store.conn(), "h2").unwrap().is_empty());
        let taken = store
            .write(|tx| Ok::<_, StoreError>((lands::take(tx, "job-l")?, lands::take(tx, "job-l")?)))
            .unwrap();
        assert_eq!(taken, (true, false), "{b:?}");
        assert_eq!(lands::get(store.conn(), "job-l").unwrap(), None);
    }
}
