//! `gitmoot store copy` through the real binary: a SQLite home with agents, jobs, runs,
//! events, an escalation, chat threads, messages and mentions (and a row in every other
//! table) copied into a fresh PostgreSQL database and back into a new SQLite file, row for
//! row; a target that holds data, the same store twice and a bad URL refused.
//!
//! The PostgreSQL side is read through the store (`Store::open_location`, `Tx`, store
//! functions), since the verbs do not run on PostgreSQL yet (`StoreError::NotPorted`).

use gitmoot_test_support as support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gitmoot::domain::{EventKind, UsageBy};
use gitmoot::store::copy::{DERIVED, FULL_TEXT, TABLES, schema_tables};
use gitmoot::store::events::{self, NewEvent};
use gitmoot::store::tx::{Value, params};
use gitmoot::store::{Location, Store, Tx, chat, meta, usage};
use serde_json::json;
use support::{gitmoot, json, shell_agent};

/// Tables whose `rowid` (SQLite's implicit one, PostgreSQL's column) orders ties and so
/// must survive a copy.
const ROWID_TABLES: [&str; 3] = ["runs", "jobs", "chat_messages"];

/// A home that used every part of the store: two agents, a chat thread with a promoted
/// task and an unread mention, a run paused at a human gate (escalation, job thread), a
/// finished run, and rows written straight into the tables no verb here fills.
fn busy_home(home: &Path) {
    let agent = |name: &str, script: &str| {
        shell_agent(home, name, script, &["--repo", "acme/api"]);
    };
    agent(
        "scout",
        r#"cat >/dev/null; echo 'Found it. {"gitmoot_result": {"decision": "approved", "summary": "limits live in gateway/limits.toml"}}'"#,
    );
    agent("lead", support::ASKER);
    let ok = |args: &[&str]| {
        gitmoot(home).args(args).assert().success();
    };
    ok(&["chat", "create", "planning", "--repo", "acme/api"]);
    ok(&[
        "chat",
        "task",
        "planning",
        "@scout where do the rate limits live?",
    ]);
    ok(&["chat", "send", "planning", "@lead have a look"]);
    ok(&[
        "job",
        "run",
        "--agent",
        "lead",
        "--repo",
        "acme/api",
        "Pick a rollout",
    ]);
    ok(&["daemon", "run", "--until-idle", "--parallel", "2"]);
    let mut store = Store::open_location(&sqlite(home, "gitmoot.db")).unwrap();
    store
        .write(|tx| {
            let (job, root): (String, String) =
                tx.query_row("SELECT id, root_id FROM jobs LIMIT 1", params![], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
            let thread: String = tx.one("SELECT id FROM chat_threads LIMIT 1", params![])?;
            tx.execute(
                "INSERT INTO delegations(parent_id, delegation_id, root_id, position, spec, state,
                     job_id, note, created_ms, updated_ms)
                 VALUES (?1, 'd1', ?2, 0, '{\"z\": [1, 2.5, null], \"a\": \"it''s\"}', 'pending',
                     NULL, NULL, 5, 6)",
                params![job, root],
            )?;
            tx.execute(
                "INSERT INTO job_payloads(job_id, result_checks, updated_ms)
                 VALUES (?1, '[\"fmt\"]', 7)
                 ON CONFLICT(job_id) DO UPDATE SET result_checks = excluded.result_checks",
                params![job],
            )?;
            tx.execute(
                "INSERT INTO job_worktrees(job_id, root_id, repo, state, base_ref, base_commit,
                     branch, checkout, path, landed_commit, review_rounds, review_tree,
                     created_ms, updated_ms)
                 VALUES (?1, ?2, 'acme/api', 'landed', 'main', 'abc', 'gitmoot/x', '/co',
                     NULL, 'def', 1, 'tree', 9, 10)",
                params![job, root],
            )?;
            // A land under way on another host (this host's starts leave it alone).
            tx.execute(
                "INSERT INTO job_lands(job_id, strategy, how, base, onto, new_commit, branch,
                     tip, dirty, checkout, path, host, pid, pid_started, created_ms)
                 VALUES (?1, 'merge', 'merge', 'main', 'abc', 'fed', 'gitmoot/x', 'cab', 1,
                     '/co', '/wt', 'another-host', 4321, 98765, 11)",
                params![job],
            )?;
            tx.execute(
                "INSERT INTO chat_thread_meta(thread_id, key, value, updated_ms)
                 VALUES (?1, 'topic', 'limits', 8)",
                params![thread],
            )?;
            // More events than one batch holds, so the copy writes (and on PostgreSQL
            // fetches) several.
            tx.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)
                 INSERT INTO events(ts_ms, kind, message, data)
                 SELECT i, 'bulk', 'row ' || i,
                     CASE WHEN i % 3 = 0 THEN NULL ELSE json_object('i', i, 'half', i / 2.0) END
                 FROM n",
                params![],
            )?;
            tx.execute(
                "INSERT INTO memory_observations(agent, tier, key, body, content_hash,
                     provenance, state, created_ms, updated_ms)
                 VALUES ('scout', 'private', 'limits', 'in gateway', 'h1', 'chat', 'pending', 9, 9)",
                params![],
            )
        })
        .unwrap();
}

fn sqlite(dir: &Path, name: &str) -> Location {
    Location::Sqlite(dir.join(name))
}

/// One table's rows in a form both backends read alike (JSON compared by value, since
/// jsonb keeps its own spacing and key order), sorted.
type Rows = Vec<Vec<String>>;

/// Every copied table of a store, plus the unread counters that count something. Column
/// names come from the SQLite schema both stores share; `rowid` joins where it orders.
fn snapshot(store: &Store, names: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, Rows> {
    let tx = store.conn();
    let mut out = BTreeMap::new();
    for (table, cols) in names {
        let mut list = cols.clone();
        if ROWID_TABLES.contains(&table.as_str()) {
            list.push("rowid".into());
        }
        let filter = if table == "chat_unread" {
            " WHERE n <> 0"
        } else {
            ""
        };
        let sql = format!("SELECT {} FROM {table}{filter}", list.join(", "));
        let mut rows: Rows = tx
            .query_map(&sql, params![], |r| {
                (0..list.len()).map(|i| Ok(cell(r.value(i)?))).collect()
            })
            .unwrap();
        rows.sort();
        out.insert(table.clone(), rows);
    }
    out
}

fn cell(v: Value<'_>) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => format!("int {i}"),
        Value::Real(f) => format!("real {f:?}"),
        Value::Text(t) => match serde_json::from_str::<serde_json::Value>(&t) {
            Ok(j) if t.starts_with(['{', '[']) => format!("json {}", canonical(&j)),
            _ => format!("text {t}"),
        },
    }
}

/// JSON text with object keys sorted at every level.
fn canonical(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let sorted: BTreeMap<&String, String> =
                m.iter().map(|(k, v)| (k, canonical(v))).collect();
            let parts: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap()))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        serde_json::Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(canonical).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// The columns of every table a snapshot reads, from a SQLite store.
fn column_names(store: &Store) -> BTreeMap<String, Vec<String>> {
    let tx = store.conn();
    TABLES
        .iter()
        .chain(&["chat_unread"])
        .map(|t| {
            let cols = tx
                .query_map(
                    "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
                    params![t],
                    |r| r.get(0),
                )
                .unwrap();
            (t.to_string(), cols)
        })
        .collect()
}

/// Registers a shell agent that only echoes its prompt.
fn cat_agent(home: &Path, name: &str) {
    gitmoot(home)
        .args(support::agent_args::shell_agent_args(name, "cat", &[]))
        .assert()
        .success();
}

fn copy_to(home: &Path, url: &str) -> assert_cmd::assert::Assert {
    gitmoot(home).args(["store", "copy", "--to", url]).assert()
}

/// SQLite → PostgreSQL → SQLite keeps every row of every table (ids, rowids, JSON, NULLs),
/// the target's counters agree with its mentions, its identities continue past the copied
/// ids, the home keeps its id, and the copy back reads the same through the verbs.
#[test]
fn a_home_moves_to_postgres_and_back_row_for_row() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    busy_home(&home);
    let original = Store::open_location(&sqlite(&home, "gitmoot.db")).unwrap();
    let names = column_names(&original);
    let before = snapshot(&original, &names);
    for table in TABLES {
        assert!(!before[*table].is_empty(), "the home has no {table} rows");
    }
    let home_id = meta::home_id(&original.conn()).unwrap();
    let db = support::pg::database();

    let out = copy_to(&home, &db.url()).success().get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let total: usize = TABLES.iter().map(|t| before[*t].len()).sum();
    assert!(
        text.contains(&format!("copied {total} rows into ")) && text.ends_with("(verified)\n"),
        "{text}"
    );
    let events = before["events"].len().to_string();
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["events", &events, "rows"]),
        "{text}"
    );

    let mut pg = Store::open_location(&Location::Postgres(db.url())).unwrap();
    assert_eq!(
        snapshot(&pg, &names),
        before,
        "PostgreSQL holds the same rows"
    );
    assert_eq!(meta::home_id(&pg.conn()).unwrap(), home_id);
    assert_eq!(
        chat::unread_counts(pg.conn(), &home_id).unwrap(),
        chat::unread_counts(original.conn(), &home_id).unwrap()
    );
    // The usage rollup is no copied table: the target's triggers build it from the jobs.
    assert_eq!(usage_rows(&pg), usage_rows(&original));
    assert!(!usage_rows(&original).is_empty());
    let pg_json: String = pg
        .conn()
        .one(
            "SELECT data_type::text FROM information_schema.columns
             WHERE table_name = 'delegations' AND column_name = 'spec'",
            params![],
        )
        .unwrap();
    assert_eq!(pg_json, "jsonb");
    // New rows take ids past the copied ones instead of colliding with them.
    let last = events::last_id(pg.conn()).unwrap();
    let next = pg
        .write(|tx| {
            events::append(
                tx,
                NewEvent::unrooted(1, EventKind::MemoryShared).data(json!({"k": 1})),
            )
        })
        .unwrap();
    assert_eq!(next, last + 1);
    pg.write(|tx| tx.execute("DELETE FROM events WHERE id = ?1", params![next]))
        .unwrap();
    drop(pg);
    // A second copy into the now populated database is refused and writes nothing.
    let err = copy_to(&home, &db.url())
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(err.contains("already holds data"), "{err}");
    let pg = Store::open_location(&Location::Postgres(db.url())).unwrap();
    assert_eq!(
        snapshot(&pg, &names),
        before,
        "the refused copy wrote nothing"
    );
    drop(pg);

    let back = dir.path().join("back");
    std::fs::create_dir_all(&back).unwrap();
    let back_url = format!("sqlite:{}", back.join("gitmoot.db").display());
    let copied: serde_json::Value = serde_json::from_slice(
        &gitmoot(&back)
            .args([
                "--store",
                &db.url(),
                "store",
                "copy",
                "--to",
                &back_url,
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(copied["rows"], total);
    let events_count = copied["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table"] == "events")
        .unwrap()["rows"]
        .clone();
    assert_eq!(events_count, before["events"].len());
    let returned = Store::open_location(&sqlite(&back, "gitmoot.db")).unwrap();
    let after = snapshot(&returned, &names);
    for table in names.keys() {
        assert_eq!(after[table], before[table], "{table} came back changed");
    }
    for verb in [
        &["job", "list", "--json"][..],
        &["chat", "list", "--json"],
        &["agent", "list", "--json"],
        &["chat", "show", "planning", "--json"],
    ] {
        assert_eq!(json(&back, verb), json(&home, verb), "{verb:?}");
    }
}

/// A target holding any row is refused (exit 2, one `error:` line, nothing written), as
/// are the source itself and a URL no backend reads.
#[test]
fn a_target_with_data_the_same_store_and_a_bad_url_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    cat_agent(&home, "echo");
    let target = dir.path().join("used.db");
    {
        let mut used = Store::open_location(&Location::Sqlite(target.clone())).unwrap();
        used.write(|tx| {
            tx.execute(
                "INSERT INTO events(ts_ms, kind) VALUES (1, 'already here')",
                params![],
            )
        })
        .unwrap();
    }
    let url = format!("sqlite:{}", target.display());
    let names = column_names(&Store::open_location(&Location::Sqlite(target.clone())).unwrap());
    let snap = || {
        snapshot(
            &Store::open_location(&Location::Sqlite(target.clone())).unwrap(),
            &names,
        )
    };
    let before = snap();
    let refused = |url: &str, text: &str| {
        let out = copy_to(&home, url).code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error:") && err.lines().count() == 1 && err.contains(text),
            "{url}: {err}"
        );
        assert!(out.stdout.is_empty());
    };
    refused(&url, "already holds data (table events has rows)");
    assert_eq!(snap(), before, "the used target is unchanged");
    let own = format!("sqlite:{}", home.join("gitmoot.db").display());
    refused(&own, "the same store");
    refused("mysql://u:pw@db/x", "store URL \"mysql://u:***@db/x\"");
    refused("postgres://h:notaport/x", "notaport");
    copy_to(
        &home,
        &format!("sqlite:{}", dir.path().join("fresh.db").display()),
    )
    .success();
    let fresh = Store::open_location(&sqlite(dir.path(), "fresh.db")).unwrap();
    assert_eq!(
        fresh
            .conn()
            .one::<i64>("SELECT COUNT(*) FROM agents", params![])
            .unwrap(),
        1
    );
}

/// A count that does not add up fails the copy naming the table (exit 1) and leaves the
/// target as empty as it was: here a trigger in the target swallows every agent row.
#[test]
fn a_count_mismatch_names_the_table_and_leaves_the_target_empty() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for name in ["a", "b"] {
        cat_agent(&home, name);
    }
    let target = Location::Sqlite(dir.path().join("target.db"));
    Store::open_location(&target)
        .unwrap()
        .write(|tx| {
            tx.batch(
                "CREATE TRIGGER swallow AFTER INSERT ON agents
                 BEGIN DELETE FROM agents WHERE name = NEW.name; END",
            )
        })
        .unwrap();
    let out = copy_to(&home, &format!("sqlite:{}", target.display()))
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("agents: the source holds 2 rows but the target received 0"),
        "{err}"
    );
    let store = Store::open_location(&target).unwrap();
    for table in TABLES.iter().filter(|t| **t != "meta") {
        let n: i64 = store
            .conn()
            .one(&format!("SELECT COUNT(*) FROM {table}"), params![])
            .unwrap();
        assert_eq!(n, 0, "{table} was written");
    }
}

/// The copy's table list is every table either backend's migrations make, less the
/// derived ones (SQLite's FTS5 tables among them): a new table cannot be left behind
/// unnoticed.
#[test]
fn the_copy_lists_every_table_of_both_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let db = support::pg::database();
    let listed: BTreeSet<String> = TABLES.iter().map(|t| t.to_string()).collect();
    for location in [sqlite(dir.path(), "s.db"), Location::Postgres(db.url())] {
        let store = Store::open_location(&location).unwrap();
        let tx: Tx<'_> = store.conn();
        let mut have = schema_tables(&tx).unwrap();
        for derived in DERIVED.iter().chain(FULL_TEXT) {
            have.remove(*derived);
        }
        assert_eq!(have, listed, "{:?}", tx.backend());
    }
}

/// `usage` by day and by agent over the whole history (dollars to the micro-dollar), as the
/// rollup answers it.
fn usage_rows(store: &Store) -> Vec<String> {
    [UsageBy::Day, UsageBy::Agent]
        .into_iter()
        .flat_map(|by| {
            usage::usage(store.conn(), by, 0, i64::MAX / 2)
                .unwrap()
                .groups
        })
        .map(|g| {
            let f = g.figures;
            format!(
                "{} {} {:?} {:.6} {}",
                g.key, f.jobs, f.tokens, f.cost_usd, f.wall_ms
            )
        })
        .collect()
}
