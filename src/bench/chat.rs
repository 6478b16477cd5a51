//! `bench_chat`: in-process figures for `gitmoot bench` — send throughput over 100,000
//! messages with mentions (target over 5,000/s) and inbox query latency at 200,000
//! messages (the second 100,000 sends also measure a larger WAL checkpoint interval). Runs on a scratch home in the temp folder, removed afterwards.

use std::time::Instant;

use crate::chat::messages::{SendOptions, send_message};
use crate::chat::threads::{self, NewThread};
use crate::chat::{self, inbox, write_retry};
use crate::clock::SystemClock;
use crate::domain::{AutonomyPolicy, Capability, RuntimeKind};
use crate::store::Store;
use crate::store::agents::{self, Agent};

const SENDS: usize = 100_000;
const AGENTS: [&str; 4] = ["alice", "bob", "carol", "dave"];

fn agent(name: &str) -> Agent {
    Agent {
        name: name.into(),
        runtime: RuntimeKind::Shell,
        command: Some("true".into()),
        model: None,
        effort: None,
        capabilities: vec![Capability::Ask],
        policy: AutonomyPolicy::ReadOnly,
        repos: Vec::new(),
        chat_autorespond: false,
        created_ms: 0,
    }
}

fn median_us(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the benchmark; returns (figure, value) rows, or one `error` row.
pub fn bench_chat() -> Vec<(String, String)> {
    let dir =
        std::env::temp_dir().join(format!("gitmoot-bench-chat-{}", crate::ids::random_hex(6)));
    let out = run(&dir).unwrap_or_else(|e| vec![("error".into(), e.to_string())]);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn run(dir: &std::path::Path) -> chat::Result<Vec<(String, String)>> {
    std::fs::create_dir_all(dir).map_err(crate::store::StoreError::from)?;
    let mut store = Store::open(&dir.join("gitmoot.db"))?;
    let clock = SystemClock;
    let thread = write_retry(&mut store, |tx| {
        for a in AGENTS {
            agents::insert(tx, &agent(a))?;
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
    let default_rate = send_batch(&mut store, 0)?;
    // The same sends with a larger WAL before each checkpoint (fewer fsyncs): the figure
    // a store tuned with `PRAGMA wal_autocheckpoint = 10000` would reach.
    store
        .conn()
        .pragma_update(None, "wal_autocheckpoint", 10_000)?;
    let tuned_rate = send_batch(&mut store, SENDS)?;
    let mut unread = Vec::new();
    let mut page = Vec::new();
    for _ in 0..25 {
        let t = Instant::now();
        let rows = inbox::inbox(store.conn(), "alice", true, Some(50))?;
        page.push(t.elapsed().as_secs_f64() * 1e6);
        assert!(!rows.is_empty());
        let t = Instant::now();
        inbox::unread_counts(store.conn())?;
        unread.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let t = Instant::now();
    let all = inbox::inbox(store.conn(), "alice", false, None)?;
    let full_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok(vec![
        ("chat.send.messages".into(), SENDS.to_string()),
        (
            "chat.send.per_second".into(),
            format!("{default_rate:.0} (target > 5000)"),
        ),
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
