//! Real processes sending into one thread at once: every message lands and the thread's
//! seq is exactly 1..N, with no gap and no duplicate — eight writers on the home's SQLite
//! file, and four on a PostgreSQL store shared as several hosts would share it (issue 18).

use gitmoot_test_support as support;

use std::path::Path;
use std::process::{Command, Stdio};

/// `writers` shell processes each run `each` sequential `chat send`s into one thread of
/// `store` (a `GITMOOT_STORE` URL; the home's SQLite file when `None`); then the thread
/// must hold every message once, in seq order 1..=writers×each, each writer's own
/// messages in the order it sent them.
fn concurrent_sends(home: &Path, store: Option<&str>, writers: usize, each: usize) {
    let bin = assert_cmd::cargo::cargo_bin("gitmoot");
    let with_store = |c: &mut Command| {
        match store {
            Some(url) => c.env("GITMOOT_STORE", url),
            None => c.env_remove("GITMOOT_STORE"),
        };
    };
    let gitmoot = |extra: &[&str]| {
        let mut c = Command::new(&bin);
        c.arg("--home").arg(home).args(extra);
        with_store(&mut c);
        c
    };
    let status = gitmoot(&["chat", "create", "busy", "--repo", "owner/repo"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let procs: Vec<_> = (0..writers)
        .map(|w| {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!(
                    "i=0; while [ $i -lt {each} ]; do \"$0\" --home \"$1\" chat send busy \"w{w} m$i\" >/dev/null || exit 1; i=$((i+1)); done"
                ))
                .arg(&bin)
                .arg(home);
            with_store(&mut sh);
            sh.spawn().unwrap()
        })
        .collect();
    for mut p in procs {
        assert!(p.wait().unwrap().success(), "a writer failed");
    }
    let out = gitmoot(&["chat", "show", "busy", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let msgs = v["messages"].as_array().unwrap();
    let total = (writers * each) as i64;
    let seqs: Vec<i64> = msgs.iter().map(|m| m["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=total).collect::<Vec<i64>>());
    let mut bodies: Vec<&str> = msgs.iter().map(|m| m["body"].as_str().unwrap()).collect();
    bodies.sort();
    bodies.dedup();
    assert_eq!(
        bodies.len() as i64,
        total,
        "every message landed exactly once"
    );
    for w in 0..writers {
        let mine: Vec<usize> = msgs
            .iter()
            .filter_map(|m| m["body"].as_str()?.strip_prefix(&format!("w{w} m")))
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(mine, (0..each).collect::<Vec<_>>(), "writer {w}'s order");
    }
}

#[test]
fn eight_processes_times_250_sends_give_seq_1_to_2000() {
    let home = tempfile::tempdir().unwrap();
    concurrent_sends(home.path(), None, 8, 250);
}

#[test]
fn four_processes_times_500_sends_on_postgres_give_seq_1_to_2000() {
    let home = tempfile::tempdir().unwrap();
    let db = support::pg::database();
    concurrent_sends(home.path(), Some(&db.url()), 4, 500);
}
