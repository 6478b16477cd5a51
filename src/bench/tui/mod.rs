//! `bench_tui`: the control room's figures for `gitmoot bench` on a real SQLite file — the
//! first frame (open, first load, update, render at 120×36) and the refresh after one job
//! changes — over a seeded store of 100,000 jobs in 5,000 roots and 200,000 chat messages.
//!
//! Owns the timing and the rows it prints; the seed lives in `seed.rs`, the frame in
//! `frame.rs` and the idle CPU figure in `idle.rs`. Measures the real loader and renderer
//! and must not reimplement either.

use std::path::Path;
use std::time::{Duration, Instant};

use gitmoot_ui::view::DaemonStatus;
use gitmoot_ui::{Event, Theme, update};

pub mod diff;
pub mod frame;
pub mod idle;
pub mod seed;

use crate::store::Store;
use crate::tui::load::{LoadError, Loader};
use frame::{bare_frame_ms, render_frame, view_state};
use seed::{SeedSize, seed, settle_one};

const FIRST_FRAME_RUNS: usize = 7;
const REFRESH_CHANGES: usize = 50;

/// Runs the benchmark on a scratch file in the temp folder (removed afterwards).
pub fn bench_tui() -> super::Measured {
    super::in_scratch("tui", |dir| {
        measure(&dir.join("gitmoot.db"), SeedSize::SPEC)
    })
    .map_err(|e| super::Failure::new("tui.error", e))
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn measure(path: &Path, size: SeedSize) -> Result<Vec<(String, String)>, String> {
    let err = |e: LoadError| e.to_string();
    let now = crate::clock::now_ms();
    let started = Instant::now();
    let seeded = {
        let mut store = Store::open(path).map_err(|e| e.to_string())?;
        seed(&mut store, size, now).map_err(err)?
    };
    let seed_s = started.elapsed().as_secs_f64();
    let theme = Theme::default_dark();
    let mut first = Vec::new();
    let mut first_load = Vec::new();
    for _ in 0..FIRST_FRAME_RUNS {
        let t = Instant::now();
        let store = Store::open(path).map_err(|e| e.to_string())?;
        let mut loader = Loader::new(store, DaemonStatus::Embedded);
        let snap = loader.load(now).map_err(err)?;
        first_load.push(ms(t.elapsed()));
        let state = view_state(&snap);
        std::hint::black_box(render_frame(&state, &snap, &theme));
        first.push(ms(t.elapsed()));
    }
    let mut loader = Loader::new(
        Store::open(path).map_err(|e| e.to_string())?,
        DaemonStatus::Embedded,
    );
    let snap = loader.load(now).map_err(err)?;
    let mut state = view_state(&snap);
    let mut writer = Store::open(path).map_err(|e| e.to_string())?;
    let mut store_work = Vec::new();
    let mut view_work = Vec::new();
    let mut render_work = Vec::new();
    let mut full = Vec::new();
    for (n, id) in seeded.running.iter().take(REFRESH_CHANGES).enumerate() {
        settle_one(&mut writer, id, now + n as i64).map_err(|e| e.to_string())?;
        let t = Instant::now();
        let mut snap = loader.read_store(now + n as i64).map_err(err)?;
        let stored = t.elapsed();
        snap.roots = loader.roots_view();
        update(&mut state, &snap, Event::SnapshotArrived);
        let viewed = t.elapsed();
        std::hint::black_box(render_frame(&state, &snap, &theme));
        let rendered = t.elapsed();
        store_work.push(ms(stored));
        view_work.push(ms(viewed - stored));
        render_work.push(ms(rendered - viewed));
        full.push(ms(rendered));
    }
    let bare = bare_frame_ms();
    Ok(vec![
        (
            "tui.seed".into(),
            format!(
                "{} jobs in {} roots, {} messages ({seed_s:.1} s)",
                seeded.jobs,
                seeded.roots.len(),
                seeded.messages
            ),
        ),
        (
            "tui.first_frame_ms".into(),
            format!("{:.1} (median of {FIRST_FRAME_RUNS})", median(first)),
        ),
        (
            "tui.first_load_ms".into(),
            format!("{:.1}", median(first_load)),
        ),
        (
            "tui.refresh_store_ms".into(),
            format!(
                "{:.2} (median of {})",
                median(store_work.clone()),
                store_work.len()
            ),
        ),
        (
            "tui.refresh_store_max_ms".into(),
            format!("{:.2}", store_work.iter().copied().fold(0.0, f64::max)),
        ),
        (
            "tui.refresh_view_model_ms".into(),
            format!("{:.2}", median(view_work)),
        ),
        (
            "tui.refresh_render_ms".into(),
            format!("{:.2}", median(render_work)),
        ),
        ("tui.anchor.bare_frame_ms".into(), format!("{bare:.3}")),
        (
            "tui.refresh_with_render_ms".into(),
            format!("{:.2}", median(full)),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::inbox::{self, ReadSelection};
    use crate::chat::messages::{self, Post};
    use crate::clock::ManualClock;

    #[test]
    fn the_loader_sees_every_seeded_root_and_the_snapshot_renders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gitmoot.db");
        let size = SeedSize {
            roots: 10,
            jobs_per_root: 20,
            threads: 3,
            messages: 300,
            live: true,
        };
        let now = 1_800_000_000_000;
        let seeded = {
            let mut store = Store::open(&path).unwrap();
            seed(&mut store, size, now).unwrap()
        };
        assert_eq!(seeded.jobs, 200);
        let mut loader = Loader::new(Store::open(&path).unwrap(), DaemonStatus::Embedded);
        let snap = loader.load(now).unwrap();
        let mut loaded: Vec<&str> = snap.roots.iter().map(|r| r.id.as_str()).collect();
        loaded.sort();
        assert_eq!(
            loaded,
            seeded.roots.iter().map(String::as_str).collect::<Vec<_>>()
        );
        let jobs: usize = snap.roots.iter().map(|r| count(&r.tree)).sum();
        assert_eq!(jobs, 200);
        assert_eq!(snap.attention.len(), 1, "tree 7 awaits a human");
        assert_eq!(snap.threads.len(), 3);
        // Only the newest 6 of 300 messages stay unread: 8 mentions (two carry a cc).
        assert_eq!(snap.inboxes.iter().map(|i| i.unread).sum::<u32>(), 8);
        // The human's count: the agents' posts among those newest 6 (every fourth is the
        // human's own).
        assert_eq!(snap.threads.iter().map(|t| t.unread).sum::<u32>(), 5);
        let screen = render_frame(&view_state(&snap), &snap, &Theme::default_dark());
        assert!(screen.contains("Review change #"), "{screen}");

        let mut writer = Store::open(&path).unwrap();
        settle_one(&mut writer, &seeded.running[0], now + 1).unwrap();
        let snap = loader.load(now + 1).unwrap();
        let settled = snap
            .roots
            .iter()
            .flat_map(|r| r.tree.children.iter())
            .find(|n| n.id == seeded.running[0])
            .unwrap();
        assert_eq!(settled.state, gitmoot_ui::view::JobState::Succeeded);

        // The loader reuses its chat panes only while chat is unchanged: a mark-read (which
        // appends no event) and a new message both show on the next load.
        let agent = snap.inboxes[0].agent.clone();
        let before = snap.inboxes[0].unread;
        writer
            .write(|tx| inbox::mark_read(tx, &agent, None, &ReadSelection::All))
            .unwrap();
        let snap = loader.load(now + 2).unwrap();
        let total: u32 = snap.inboxes.iter().map(|i| i.unread).sum();
        assert_eq!(total, 8 - before);
        assert!(snap.inboxes.iter().all(|i| i.agent != agent));
        let open = snap.transcript.as_ref().unwrap();
        let (thread_id, seqs) = (open.thread_id.clone(), open.messages.len());
        let thread = crate::store::chat::thread(writer.conn(), &thread_id)
            .unwrap()
            .unwrap();
        writer
            .write(|tx| {
                messages::append(
                    tx,
                    &ManualClock::new(now + 3),
                    &thread,
                    Post::system("a fresh notice"),
                )
            })
            .unwrap();
        let snap = loader.load(now + 3).unwrap();
        let open = snap.transcript.as_ref().unwrap();
        assert_eq!(open.messages.len(), seqs + 1);
        assert_eq!(open.messages.last().unwrap().body, "a fresh notice");
    }

    fn count(n: &gitmoot_ui::view::JobNode) -> usize {
        1 + n.children.iter().map(count).sum::<usize>()
    }
}
