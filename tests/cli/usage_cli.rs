//! `gitmoot usage` through the binary on jobs run by the real daemon: two roots on a Claude
//! Code stand-in that reports input, output and both cache figures, one on a shell agent
//! that reports nothing; every grouping's rows and total checked by hand, the budget
//! headroom of each root, bad flags refused; and the daily caps holding new jobs queued
//! with their reason until the cap is raised.

use gitmoot_test_support::daemon::{TestHome, fake_claude, result};
use serde_json::Value;

/// What the fake Claude Code's envelope reports for every job (`tests/fixtures/fake-claude`).
const IN: u64 = 120;
const OUT: u64 = 55;
const CACHE_READ: u64 = 1000;
const CACHE_WRITE: u64 = 30;
const USD: f64 = 0.0421;

/// Two claude roots (one on repo `o/r`), one shell root, all run to the end; returns the
/// home and the roots in that order.
/// `store` is the config's `[store]` section, empty for the home's SQLite file.
fn fleet(store: &str) -> (TestHome, [String; 3]) {
    let h = TestHome::budgeted_claude(store);
    h.shell_agent(
        "sh",
        &format!("cat >/dev/null\necho '{}'\n", result("approved", "ok")),
    );
    let a = h.submit("cl", "first look", &["--repo", "o/r"]);
    let b = h.submit("cl", "second look", &[]);
    let c = h.submit("sh", "shell look", &[]);
    h.run_until_idle();
    (h, [a, b, c])
}

fn usage(h: &TestHome, by: &str) -> Value {
    serde_json::from_str(&h.ok(&["usage", "--by", by, "--json"])).unwrap()
}

/// `(key, jobs, input, output, cache read, cache write, usd)` of every group.
fn rows(doc: &Value) -> Vec<(String, u64, u64, u64, u64, u64, f64)> {
    doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let t = &g["tokens"];
            let n = |v: &Value| v.as_u64().unwrap();
            (
                g["key"].as_str().unwrap().to_string(),
                n(&g["jobs"]),
                n(&t["input"]),
                n(&t["output"]),
                n(&t["cache_read"]),
                n(&t["cache_write"]),
                (g["cost_usd"].as_f64().unwrap() * 1e4).round() / 1e4,
            )
        })
        .collect()
}

fn wall(h: &TestHome, id: &str) -> i64 {
    let j = show(h, id);
    j["finished"].as_i64().unwrap() - j["started"].as_i64().unwrap()
}

#[test]
fn usage_adds_up_by_every_grouping_with_cache_tokens_and_silent_runtimes() {
    adds_up_by_every_grouping("");
}

#[test]
fn usage_adds_up_by_every_grouping_on_postgres() {
    let db = gitmoot_test_support::pg::database();
    adds_up_by_every_grouping(&format!("[store]\nurl = \"{}\"\n", db.url()));
}

fn adds_up_by_every_grouping(store: &str) {
    let (h, [a, b, c]) = fleet(store);
    let claude = |key: &str, jobs: u64| {
        let k = jobs;
        (
            key.to_string(),
            k,
            IN * k,
            OUT * k,
            CACHE_READ * k,
            CACHE_WRITE * k,
            USD * k as f64,
        )
    };
    let silent = |key: &str| (key.to_string(), 1, 0, 0, 0, 0, 0.0);

    // Most dollars first; ties by key.
    let by_agent = usage(&h, "agent");
    assert_eq!(rows(&by_agent), [claude("cl", 2), silent("sh")]);
    let total = &by_agent["total"];
    assert_eq!(total["jobs"], 3);
    assert_eq!(total["tokens"]["input"], 2 * IN);
    assert_eq!(total["tokens"]["cache_read"], 2 * CACHE_READ);
    assert_eq!(total["tokens"]["cache_write"], 2 * CACHE_WRITE);
    assert_eq!(
        (total["cost_usd"].as_f64().unwrap() * 1e4).round(),
        2.0 * USD * 1e4
    );
    let walls: i64 = [&a, &b, &c].iter().map(|id| wall(&h, id)).sum();
    assert_eq!(total["wall_ms"], walls);

    // The shell agent names no model and no repo: its group's key is empty.
    assert_eq!(rows(&usage(&h, "model")), [claude("opus", 2), silent("")]);
    let (_, _, i, o, r, w, u) = claude("", 1);
    assert_eq!(
        rows(&usage(&h, "repo")),
        [("".to_string(), 2, i, o, r, w, u), claude("o/r", 1)]
    );

    // Each root its own group, with its title and its spend against the $5 budget.
    let by_root = usage(&h, "root");
    let mut want = vec![claude(&a, 1), claude(&b, 1)];
    want.sort_by(|x, y| x.0.cmp(&y.0));
    want.push(silent(&c));
    assert_eq!(rows(&by_root), want);
    let group = |id: &str| {
        by_root["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["key"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(group(&a)["root"]["title"], "first look");
    assert_eq!(group(&a)["budget"]["usd"]["limit"], 5.0);
    assert_eq!(group(&a)["budget"]["usd"]["spent"], USD);
    assert!(
        group(&c)["budget"]["tokens"].is_null(),
        "no token budget set"
    );
    let human = h.ok(&["usage", "--by", "root"]);
    let line = human.lines().find(|l| l.starts_with(a.as_str())).unwrap();
    assert!(line.contains("$0.04 of $5.00"), "{line}");
    assert!(line.contains("first look"), "{line}");

    // Every job was made today (UTC).
    let today = gitmoot::clock::utc_date(gitmoot::clock::now_ms());
    let by_day = usage(&h, "day");
    assert_eq!(rows(&by_day).len(), 1);
    assert_eq!(by_day["groups"][0]["key"], today.as_str());
    assert_eq!(by_day["groups"][0]["jobs"], 3);
    assert_eq!(by_day["total"], total.clone());

    // A window of no time holds nothing; one from the epoch's date holds everything.
    assert_eq!(usage_since(&h, "0s")["total"]["jobs"], 0);
    assert_eq!(usage_since(&h, "1970-01-01")["total"], total.clone());
}

fn usage_since(h: &TestHome, since: &str) -> Value {
    serde_json::from_str(&h.ok(&["usage", "--since", since, "--json"])).unwrap()
}

#[test]
fn usage_refuses_bad_flags_with_one_line_and_exit_2() {
    let h = TestHome::new();
    h.ok(&["init"]);
    for (args, says) in [
        (
            &["usage", "--by", "week"][..],
            "unknown usage grouping \"week\"",
        ),
        (
            &["usage", "--since", "yesterday"][..],
            "invalid --since \"yesterday\"",
        ),
        (
            &["usage", "--since", "2026-02-30"][..],
            "invalid --since \"2026-02-30\"",
        ),
    ] {
        refused_in_one_line(&h, args, says);
    }
    for (toml, key) in [
        (
            "[budget]\ndaily_usd = -1.0\n",
            "[budget].daily_usd: must be a number >= 0",
        ),
        (
            "[agents.cl]\ndaily_usd = -2.0\n",
            "[agents.cl].daily_usd: must be a number >= 0",
        ),
    ] {
        h.config(toml);
        refused_in_one_line(&h, &["usage"], key);
    }
}

/// Runs `args`, which must exit 2 with one stderr line holding `says`.
pub(crate) fn refused_in_one_line(h: &TestHome, args: &[&str], says: &str) {
    let out = h.cmd(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(says), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

fn show(h: &TestHome, id: &str) -> Value {
    serde_json::from_str(&h.ok(&["job", "show", id, "--json"])).unwrap()
}

fn state(h: &TestHome, id: &str) -> String {
    show(h, id)["state"].as_str().unwrap().to_string()
}

fn waiting(h: &TestHome, id: &str) -> Value {
    show(h, id)["waiting"]["reason"].clone()
}

#[test]
fn a_daily_cap_holds_new_jobs_queued_with_the_reason_until_it_is_raised() {
    caps_hold_and_release("");
}

#[test]
fn a_daily_cap_holds_and_releases_on_postgres() {
    let db = gitmoot_test_support::pg::database();
    caps_hold_and_release(&format!("[store]\nurl = \"{}\"\n", db.url()));
}

/// `store` as `fleet`'s.
fn caps_hold_and_release(store: &str) {
    let h = TestHome::new();
    let caps = |fleet: f64, agent: f64| {
        h.config(&format!(
            "[runtimes.claude]\npath = \"{}\"\n[budget]\ndaily_usd = {fleet}\n\
             [agents.cl]\ndaily_usd = {agent}\n{store}",
            fake_claude().display()
        ))
    };
    caps(0.01, 0.0);
    h.ok(&["agent", "add", "cl", "--runtime", "claude"]);
    h.shell_agent(
        "sh",
        &format!("cat >/dev/null\necho '{}'\n", result("approved", "ok")),
    );
    // Nothing spent yet: the first job starts, and its $0.0421 passes the fleet's cap.
    let first = h.submit("cl", "first", &[]);
    h.run_until_idle();
    assert_eq!(state(&h, &first), "succeeded");
    assert!(waiting(&h, &first).is_null(), "only a queued job waits");

    // Every agent's new job waits; the daemon stops beside them as idle.
    let second = h.submit("cl", "second", &[]);
    let free = h.submit("sh", "free", &[]);
    h.run_until_idle();
    assert_eq!(
        (state(&h, &second), state(&h, &free)),
        ("queued".into(), "queued".into())
    );
    let fleet = "the fleet's daily cap of $0.01 is reached ($0.04 spent today, UTC); \
                 it starts tomorrow or once the cap is raised";
    assert_eq!(waiting(&h, &second), fleet);
    let human = h.ok(&["job", "show", &second]);
    assert!(human.contains(&format!("waiting:   {fleet}")), "{human}");

    // Raised: both start. The agent's own cap then holds its next job alone.
    caps(1.0, 0.05);
    h.run_until_idle();
    assert_eq!(
        (state(&h, &second), state(&h, &free)),
        ("succeeded".into(), "succeeded".into())
    );
    let third = h.submit("cl", "third", &[]);
    let other = h.submit("sh", "other", &[]);
    h.run_until_idle();
    assert_eq!(
        (state(&h, &third), state(&h, &other)),
        ("queued".into(), "succeeded".into())
    );
    let today = h.ok(&["usage"]);
    assert!(
        today.contains("daily cap of the fleet: $0.08 of $1.00 spent today (UTC)\n")
            && today.contains(
                "daily cap of agent cl: $0.08 of $0.05 spent today (UTC), reached: its queued jobs wait"
            ),
        "{today}"
    );
    assert_eq!(
        waiting(&h, &third),
        "agent cl's daily cap of $0.05 is reached ($0.08 spent today, UTC); \
         it starts tomorrow or once the cap is raised"
    );
    caps(1.0, 0.0);
    h.run_until_idle();
    assert_eq!(state(&h, &third), "succeeded");
}
