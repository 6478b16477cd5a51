//! `gitmoot bench --scale`: the same measures at growing history sizes (10k, 100k and
//! 1M jobs with two chat messages per job) — the control room's first frame and refresh,
//! one page of `job list` and `job list --json`, a 1,000-leg `job tree`, a `search` and
//! `usage --by day` through the real binary (wall time and peak RSS of the child), and the resident memory of a
//! running `gitmoot tui` — so a figure that grows with history shows as a growing row.
//!
//! Owns only the sizes, the child-process timing and the table; the seed, the loader and
//! the renderer are the ones `bench_tui` measures.

use std::path::Path;
use std::time::{Duration, Instant};

use gitmoot_ui::view::DaemonStatus;
use gitmoot_ui::{Event, Theme, update};

use super::tui::frame::{render_frame, view_state};
use super::tui::idle::Pane;
use super::tui::seed::{SeedSize, Seeded, seed, seed_root, settle_one};
use super::tui::{median, ms};
use crate::store::Store;
use crate::tui::load::Loader;

/// The sizes of the README's table.
pub(crate) const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
/// Jobs per seeded root, as in `bench_tui`.
const JOBS_PER_ROOT: usize = 20;
/// The legs of the one wide root `job tree` prints.
const WIDE_LEGS: usize = 1_000;
const FIRST_FRAMES: usize = 5;
/// The largest history seeded row by row; bigger ones are copies of it.
const BASE: usize = 100_000;
const REFRESHES: usize = 20;

/// One size's row of figures: (figure, value).
pub(crate) fn bench_scale(binary: &Path, sizes: &[usize]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for &jobs in sizes {
        match super::in_scratch("scale", |dir| measure(binary, dir, jobs)) {
            Ok(rows) => out.extend(rows),
            // One size failing leaves the other sizes' figures standing.
            Err(e) => out.push(super::Failure::new(format!("scale.{jobs}.error"), e).row()),
        }
    }
    out
}

fn measure(binary: &Path, dir: &Path, jobs: usize) -> Result<Vec<(String, String)>, String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let home = crate::home::Home::resolve(Some(dir)).map_err(|x| e(&x))?;
    let now = crate::clock::now_ms();
    let roots = (jobs / JOBS_PER_ROOT).max(1);
    let size = SeedSize {
        roots,
        jobs_per_root: JOBS_PER_ROOT,
        threads: 40,
        messages: 2 * jobs,
        live: true,
    };
    let started = Instant::now();
    let (seeded, wide) = {
        let mut store = Store::open_home(&home).map_err(|x| e(&x))?;
        // Histories past `BASE` are the base seed (written through the store's own write
        // paths) copied into older history with bulk INSERT … SELECT in one transaction.
        let copies = jobs.div_ceil(BASE).max(1);
        let base = SeedSize {
            roots: roots.div_ceil(copies),
            messages: (2 * jobs).div_ceil(copies),
            ..size
        };
        let mut seeded = seed(&mut store, base, now).map_err(|x| e(&x))?;
        if copies > 1 {
            replicate(&mut store, copies, base).map_err(|x| e(&x))?;
            seeded.jobs *= copies;
            seeded.messages *= copies;
        }
        // One wide root, older than every seeded root, for `job tree`.
        let mut wide = Seeded::default();
        let wide_size = SeedSize {
            roots: 1,
            jobs_per_root: WIDE_LEGS + 2,
            threads: 0,
            messages: 0,
            live: false,
        };
        store
            .write(|tx| seed_root(tx, roots, wide_size, now - 1_000_000_000, &mut wide))
            .map_err(|x| e(&x))?;
        store
            .conn()
            .sqlite()
            .map_err(|x| e(&x))?
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .map_err(|x| e(&x))?;
        (seeded, wide.roots[0].clone())
    };
    let seed_s = started.elapsed().as_secs_f64();
    let db_mb = std::fs::metadata(home.db_path())
        .map(|m| m.len() as f64 / 1e6)
        .unwrap_or(0.0);
    let theme = Theme::default_dark();
    let mut first = Vec::new();
    for _ in 0..FIRST_FRAMES {
        let t = Instant::now();
        let store = Store::open(&home.db_path()).map_err(|x| e(&x))?;
        let mut loader = Loader::new(store, DaemonStatus::Embedded);
        let snap = loader.load(now).map_err(|x| e(&x))?;
        std::hint::black_box(render_frame(&view_state(&snap), &snap, &theme));
        first.push(ms(t.elapsed()));
    }
    let mut loader = Loader::new(
        Store::open(&home.db_path()).map_err(|x| e(&x))?,
        DaemonStatus::Embedded,
    );
    let snap = loader.load(now).map_err(|x| e(&x))?;
    let mut state = view_state(&snap);
    let mut writer = Store::open(&home.db_path()).map_err(|x| e(&x))?;
    let mut refresh = Vec::new();
    for (n, id) in seeded.running.iter().take(REFRESHES).enumerate() {
        settle_one(&mut writer, id, now + n as i64).map_err(|x| e(&x))?;
        let t = Instant::now();
        let snap = loader.load(now + n as i64).map_err(|x| e(&x))?;
        update(&mut state, &snap, Event::SnapshotArrived);
        std::hint::black_box(render_frame(&state, &snap, &theme));
        refresh.push(ms(t.elapsed()));
    }
    drop((loader, writer));
    let home_arg = dir.display().to_string();
    let cli = |args: &[&str]| -> Result<String, String> {
        let mut full = vec!["--home", home_arg.as_str()];
        full.extend_from_slice(args);
        let (wall, rss_mb) = child(binary, &full)?;
        Ok(format!("{wall:.1} ms, {rss_mb:.1} MB"))
    };
    let list = cli(&["job", "list"])?;
    let list_json = cli(&["job", "list", "--json"])?;
    let tree = cli(&["job", "tree", &wide])?;
    // Every root's prompt holds both words (one job in 20): a search that ranks them all.
    let search = cli(&["search", "coordinate", "review"])?;
    // One change's records (its root, legs and continuation, in every copy of the seed).
    let search_one = cli(&["search", "change", "#1234"])?;
    let by_day = cli(&["usage", "--by", "day", "--since", "1970-01-01"])?;
    let rss = tui_rss_mb(binary, dir)?;
    let k = |name: &str| format!("scale.{jobs}.{name}");
    Ok(vec![
        (
            k("seed"),
            format!(
                "{} jobs, {} messages, {db_mb:.0} MB db ({seed_s:.0} s)",
                seeded.jobs + WIDE_LEGS + 2,
                seeded.messages
            ),
        ),
        (k("first_frame_ms"), format!("{:.1}", median(first))),
        (k("refresh_ms"), format!("{:.2}", median(refresh))),
        (k("job_list_page"), list),
        (k("job_list_json_page"), list_json),
        (k("job_tree_1000_legs"), tree),
        (k("search"), search),
        (k("search_one"), search_one),
        (k("usage_by_day"), by_day),
        (k("tui_rss_mb"), format!("{rss:.1}")),
    ])
}

/// Copies the seeded history `copies - 1` times into older time with fresh ids: every
/// job-like id gets its root's id suffixed (`job-b0000001-2/l3`), timestamps move back
/// by the history's span per copy, chat seqs continue after the base's, mention and
/// event ids are new. Unread counters follow through their triggers.
fn replicate(
    store: &mut Store,
    copies: usize,
    base: SeedSize,
) -> Result<(), crate::store::StoreError> {
    let span = (base.roots as i64 + base.messages as i64 + 1) * 10 + 1_000;
    store.write(|tx| {
        let tx = tx.sqlite()?;
        let max_seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM chat_messages",
            [],
            |r| r.get(0),
        )?;
        let tables = [
            "runs",
            "jobs",
            "delegations",
            "events",
            "escalations",
            "chat_messages",
            "chat_mentions",
        ];
        let mut bounds = Vec::new();
        for t in tables {
            let max: i64 =
                tx.query_row(&format!("SELECT COALESCE(MAX(rowid), 0) FROM {t}"), [], |r| {
                    r.get(0)
                })?;
            bounds.push((t, max));
        }
        for k in 1..copies as i64 {
            for (table, max) in &bounds {
                let cols: Vec<String> = tx
                    .prepare(&format!("PRAGMA table_info({table})"))?
                    .query_map([], |r| r.get::<_, String>(1))?
                    .collect::<rusqlite::Result<_>>()?;
                let fresh_id = matches!(*table, "events" | "escalations" | "chat_mentions");
                let cols: Vec<String> = cols
                    .into_iter()
                    .filter(|c| !(fresh_id && c == "id"))
                    .collect();
                let expr = |c: &str| -> String {
                    let job_like = matches!(
                        (*table, c),
                        (_, "root_id")
                            | ("jobs", "id" | "parent_id" | "continuation_id")
                            | ("delegations", "parent_id" | "job_id")
                            | ("events", "job_id")
                            | ("escalations", "job_id" | "failed_job_id")
                    );
                    if job_like {
                        return format!(
                            "CASE WHEN {c} IS NULL THEN NULL ELSE root_id || '-{k}' || substr({c}, length(root_id) + 1) END"
                        );
                    }
                    match (*table, c) {
                        ("chat_messages", "id") | ("chat_mentions", "message_id") => {
                            format!("{c} || '-{k}'")
                        }
                        ("chat_messages" | "chat_mentions", "seq") => {
                            format!("{c} + {}", k * max_seq)
                        }
                        ("chat_messages", "reply_to") => {
                            format!("CASE WHEN {c} IS NULL THEN NULL ELSE {c} + {} END", k * max_seq)
                        }
                        ("chat_messages", "content_hash") => "NULL".into(),
                        (_, "timeout_ms" | "paused_ms") => c.into(),
                        (_, c) if c.ends_with("_ms") => format!(
                            "CASE WHEN {c} IS NULL THEN NULL ELSE {c} - {} END",
                            k * span
                        ),
                        _ => c.into(),
                    }
                };
                let filter = if *table == "events" {
                    " AND root_id IS NOT NULL"
                } else {
                    ""
                };
                tx.execute_batch(&format!(
                    "INSERT INTO {table}({}) SELECT {} FROM {table} WHERE rowid <= {max}{filter};",
                    cols.join(", "),
                    cols.iter().map(|c| expr(c)).collect::<Vec<_>>().join(", ")
                ))?;
            }
        }
        Ok::<_, crate::store::StoreError>(())
    })?;
    store
        .conn()
        .sqlite()?
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    Ok(())
}

/// Runs the binary once; its wall time (ms) and peak resident memory (MB) from `wait4`.
fn child(binary: &Path, args: &[&str]) -> Result<(f64, f64), String> {
    let t = Instant::now();
    let child = std::process::Command::new(binary)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, whose pid std gave us; std never reaps it itself.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let wall = ms(t.elapsed());
    if pid < 0 || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{args:?} failed (status {status})"));
    }
    Ok((wall, usage.ru_maxrss as f64 / 1024.0))
}

/// Resident memory of `gitmoot tui --no-daemon` on the home, in a private tmux pane,
/// once its first frame is up.
fn tui_rss_mb(binary: &Path, home: &Path) -> Result<f64, String> {
    let pane = Pane::start(&[
        binary.display().to_string(),
        "--home".into(),
        home.display().to_string(),
        "tui".into(),
        "--no-daemon".into(),
    ])?;
    std::thread::sleep(Duration::from_secs(3));
    let pid = pane.pid()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("the control room (pid {pid}) is gone: {e}"))?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or("no VmRSS in /proc status")?;
    Ok(kb / 1024.0)
}

/// The scaling table: one row per measure, one column per size.
pub fn table(sizes: &[usize], figures: &[(String, String)]) -> String {
    let measures = [
        ("first_frame_ms", "control room first frame (ms)"),
        ("refresh_ms", "control room refresh after one change (ms)"),
        ("job_list_page", "`job list` page (wall, peak RSS)"),
        (
            "job_list_json_page",
            "`job list --json` page (wall, peak RSS)",
        ),
        ("job_tree_1000_legs", "`job tree` of a 1,000-leg root"),
        (
            "search",
            "`search` matching every root's prompt, top 20 (wall, peak RSS)",
        ),
        (
            "search_one",
            "`search` matching one change's records (wall, peak RSS)",
        ),
        (
            "usage_by_day",
            "`usage --by day` over the whole history (wall, peak RSS)",
        ),
        ("tui_rss_mb", "control room RSS (MB)"),
        ("seed", "history"),
    ];
    let mut out = String::from("| measure |");
    for s in sizes {
        out.push_str(&format!(" {} jobs |", label(*s)));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(sizes.len()));
    out.push('\n');
    for (key, name) in measures {
        out.push_str(&format!("| {name} |"));
        for s in sizes {
            let want = format!("scale.{s}.{key}");
            let err = format!("scale.{s}.error");
            let v = figures
                .iter()
                .find(|(f, _)| *f == want || *f == err)
                .map(|(_, v)| v.as_str())
                .unwrap_or("");
            out.push_str(&format!(" {v} |"));
        }
        out.push('\n');
    }
    out
}

fn label(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}
