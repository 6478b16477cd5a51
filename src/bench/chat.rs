//! `bench_chat`: in-process figures for `gitmoot bench` — send throughput over 100,000
//! messages with mentions, next to its anchor (the same message row inserted bare, one
//! per transaction, into a fresh store of the same schema and pragmas, in the same run),
//! and inbox query latency at 200,000 messages (the second 100,000 sends also measure a
//! larger WAL checkpoint interval). Runs on a scratch home in the temp folder, removed
//! afterwards.

use std::time::Instant;

use crate::chat::messages::{SendOptions, send_message};
use crate::chat::threads::{self, NewThread};
use crate::chat::{self, inbox, write_retry};
use crate::clock::{Clock, SystemClock};
use crate::store::agents;
use crate::store::{Store, StoreError};

const SENDS: usize = 100_000;
const AGENTS: [&str; 4] = ["alice", "bob", "carol", "dave"];

fn median_us(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the benchmark; its (figure, value) rows, or the failure (shown as an `error` row).
pub fn bench_chat() -> super::Measured {
    super::in_scratch("chat", run).map_err(|e| super::Failure::new("error", e.to_string()))
}

fn run(dir: &std::path::Path) -> chat::Result<Vec<(String, String)>> {
    std::fs::create_dir_all(dir).map_err(crate::store::StoreError::from)?;
    let mut store = Store::open(&dir.join("gitmoot.db"))?;
    let clock = SystemClock;
    let thread = write_retry(&mut store, |tx| {
        for a in AGENTS {
            agents::insert(tx, &super::shell_agent(a, "true"))?;
        }
        threads::create(
            tx,
            &clock,
            NewThread {
                name: "bench",
                repo: "bench/chat",
                title: None,
                created_by: "human",
            },
        )
    })?;
    let opts = SendOptions::default();
    let send_batch = |store: &mut Store, from: usize| -> chat::Result<f64> {
        let started = Instant::now();
        for i in from..from + SENDS {
            let body = format!(
                "@{} please look at item {i}, cc @{}",
                AGENTS[i % 4],
                AGENTS[(i + 1) % 4]
            );
            send_message(store, &clock, &thread.id, None, &body, &opts)?;
        }
        Ok(SENDS as f64 / started.elapsed().as_secs_f64())
    };
    let anchor_rate = raw_insert_rate(&dir.join("anchor.db"))?;
    let default_rate = send_batch(&mut store, 0)?;
    // The same sends with a larger WAL before each checkpoint (fewer fsyncs): the figure
    // a store tuned with `PRAGMA wal_autocheckpoint = 10000` would reach.
    store
        .conn()
        .sqlite()?
        .pragma_update(None, "wal_autocheckpoint", 10_000)
        .map_err(StoreError::from)?;
    let tuned_rate = send_batch(&mut store, SENDS)?;
    let mut unread = Vec::new();
    let mut page = Vec::new();
    for _ in 0..25 {
        let t = Instant::now();
        let rows = inbox::inbox(&store.conn(), "alice", true, Some(50))?;
        page.push(t.elapsed().as_secs_f64() * 1e6);
        assert!(!rows.is_empty());
        let t = Instant::now();
        inbox::unread_counts(&store.conn())?;
        unread.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let t = Instant::now();
    let all = inbox::inbox(&store.conn(), "alice", false, None)?;
    let full_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok(vec![
        ("chat.send.messages".into(), SENDS.to_string()),
        (
            "chat.anchor.raw_wal_insert_per_second".into(),
            format!("{anchor_rate:.0}"),
        ),
        ("chat.send.per_second".into(), format!("{default_rate:.0}")),
        (
            "chat.send.per_second_wal_autocheckpoint_10000".into(),
            format!("{tuned_rate:.0}"),
        ),
        ("chat.inbox.messages".into(), (2 * SENDS).to_string()),
        (
            "chat.inbox.unread_page50_median_us".into(),
            format!("{:.0}", median_us(page)),
        ),
        (
            "chat.inbox.unread_counts_median_us".into(),
            format!("{:.0}", median_us(unread)),
        ),
        (
            format!("chat.inbox.full_{}_rows_ms", all.len()),
            format!("{full_ms:.1}"),
        ),
    ])
}

/// The machine's own limit for a send: the same message row (same body shape, envelope
/// and indexes, in a store the product made) inserted with one prepared statement on a bare
/// connection in WAL mode with `synchronous = NORMAL`, one `BEGIN IMMEDIATE … COMMIT`
/// each: the cheapest honest version of a send's write. No mention rows, no lookups, none
/// of the store's wrapping.
fn raw_insert_rate(path: &std::path::Path) -> chat::Result<f64> {
    let clock = SystemClock;
    let (thread, origin) = {
        let mut store = Store::open(path)?;
        let thread = write_retry(&mut store, |tx| {
            threads::create(
                tx,
                &clock,
                NewThread {
                    name: "anchor",
                    repo: "bench/chat",
                    title: None,
                    created_by: "human",
                },
            )
        })?;
        (thread, crate::store::chat::origin(store.conn())?)
    };
    let raw = |e: rusqlite::Error| crate::store::StoreError::from(e);
    let conn = rusqlite::Connection::open(path).map_err(raw)?;
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
        .map_err(raw)?;
    let started = Instant::now();
    for i in 0..SENDS {
        let body = format!(
            "@{} please look at item {i}, cc @{}",
            AGENTS[i % 4],
            AGENTS[(i + 1) % 4]
        );
        let now = clock.now_ms();
        let envelope = crate::chat::envelope::encode(
            crate::store::chat::MessageKind::Chat,
            &body,
            &[AGENTS[i % 4].to_string(), AGENTS[(i + 1) % 4].to_string()],
            &[],
            None,
        );
        conn.prepare_cached("BEGIN IMMEDIATE")
            .and_then(|mut b| b.execute([]))
            .map_err(raw)?;
        conn.prepare_cached(
            "INSERT INTO chat_messages(id, thread_id, seq, ts_ms, author_kind, author_name, author_origin,
             kind, body, envelope_json, refs_json, origin)
             VALUES (?1, ?2, ?3, ?4, 'human', 'human', ?5, 'chat', ?6, ?7, '[]', ?5)",
        )
        .and_then(|mut insert| {
            insert.execute(rusqlite::params![
                format!("msg-{:012x}{:012x}", now, i),
                thread.id,
                i as i64 + 1,
                now,
                origin,
                body,
                envelope
            ])
        })
        .map_err(raw)?;
        conn.prepare_cached("COMMIT")
            .and_then(|mut c| c.execute([]))
            .map_err(raw)?;
    }
    Ok(SENDS as f64 / started.elapsed().as_secs_f64())
}
