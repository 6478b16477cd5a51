//! Eight real processes sending 250 messages each into one thread: every message lands and
//! the thread's seq is exactly 1..2000, with no gap and no duplicate.

use std::process::{Command, Stdio};

#[test]
fn eight_processes_times_250_sends_give_seq_1_to_2000() {
    let home = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("gitmoot");
    let status = Command::new(&bin)
        .arg("--home")
        .arg(home.path())
        .args(["chat", "create", "busy", "--repo", "owner/repo"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    // Each writer is one shell process running 250 sequential sends; the 8 run at once.
    let writers: Vec<_> = (0..8)
        .map(|w| {
            Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "i=0; while [ $i -lt 250 ]; do \"$0\" --home \"$1\" chat send busy \"w{w} m$i\" >/dev/null || exit 1; i=$((i+1)); done"
                ))
                .arg(&bin)
                .arg(home.path())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut w in writers {
        assert!(w.wait().unwrap().success(), "a writer failed");
    }
    let out = Command::new(&bin)
        .arg("--home")
        .arg(home.path())
        .args(["chat", "show", "busy", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let msgs = v["messages"].as_array().unwrap();
    let seqs: Vec<i64> = msgs.iter().map(|m| m["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=2000).collect::<Vec<i64>>());
    let mut bodies: Vec<&str> = msgs.iter().map(|m| m["body"].as_str().unwrap()).collect();
    bodies.sort();
    bodies.dedup();
    assert_eq!(bodies.len(), 2000, "every message landed exactly once");
    for w in 0..8 {
        // Each writer's own messages keep their order.
        let mine: Vec<i64> = msgs
            .iter()
            .filter(|m| m["body"].as_str().unwrap().starts_with(&format!("w{w} ")))
            .map(|m| {
                m["body"]
                    .as_str()
                    .unwrap()
                    .split(" m")
                    .nth(1)
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert_eq!(mine, (0..250).collect::<Vec<i64>>());
    }
}
