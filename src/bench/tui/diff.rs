//! `bench_diff`: the Diff tab on a 20,000-line diff — reading it from a real git worktree
//! through `worktree::diff_files` (what `job diff --json` and the control room's loader
//! call), laying it out and drawing the first frame of the tab, then scrolling it key by
//! key without reading it again.
//!
//! Owns these timings and the scratch repository they run on; measures the real reader,
//! `update` and renderer and must not reimplement any of them.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gitmoot_ui::live::DetailTab;
use gitmoot_ui::view::JobDetail;
use gitmoot_ui::work::DiffView;
use gitmoot_ui::{Event, Pane, Snapshot, Theme, update};

use super::frame::{render_frame, view_state};
use super::{median, ms};
use crate::domain::{JobKind, JobState};

/// Lines the diff adds.
const LINES: usize = 20_000;
const OPEN_RUNS: usize = 5;
const SCROLL_KEYS: usize = 200;
const JOB: &str = "job-benchdiff";

/// Runs the benchmark in a scratch git repository (removed afterwards).
pub fn bench_diff() -> crate::bench::Measured {
    crate::bench::in_scratch("diff", measure)
        .map_err(|e| crate::bench::Failure::new("diff.error", e))
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    crate::bench::scratch_git::line(dir, args)
}

/// A repository whose work changes 20,000 lines of one file against its first commit:
/// 8,000 removed and 12,000 added, so the diff has both sides.
fn repo(dir: &Path) -> Result<String, String> {
    git(dir, &["init", "-q", "-b", "main"])?;
    let old: String = (0..LINES * 2 / 5)
        .map(|i| format!("old line {i}\n"))
        .collect();
    std::fs::write(dir.join("big.txt"), old).map_err(|e| e.to_string())?;
    git(dir, &["add", "big.txt"])?;
    git(dir, &["commit", "-q", "-m", "base"])?;
    let base = git(dir, &["rev-parse", "HEAD"])?;
    let new: String = (0..LINES * 3 / 5)
        .map(|i| format!("new line {i} of the agent's work\n"))
        .collect();
    std::fs::write(dir.join("big.txt"), new).map_err(|e| e.to_string())?;
    Ok(base)
}

/// The drawer open on the Diff tab of `JOB`, as the loop has it after the diff arrived.
fn snapshot(diff: Arc<DiffView>) -> Snapshot {
    let mut snap = Snapshot::empty(crate::clock::now_ms());
    snap.detail = Some(JobDetail {
        job_id: JOB.into(),
        agent: "bench".into(),
        kind: JobKind::Root,
        action: "implement".into(),
        state: JobState::Succeeded,
        attempt: 1,
        prompt: "write it".into(),
        result: None,
        events: Vec::new(),
        error: None,
        raw_output: None,
        activity: Vec::new(),
    });
    snap.work.rows.insert(JOB.into(), Default::default());
    snap.work.diff = Some(diff);
    snap
}

fn measure(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let base = repo(dir)?;
    let theme = Theme::default_dark();
    let (mut read, mut open) = (Vec::new(), Vec::new());
    let mut rows = 0;
    for _ in 0..OPEN_RUNS {
        let t = Instant::now();
        let files = crate::worktree::diff_files(dir, &base).map_err(|e| e.to_string())?;
        read.push(ms(t.elapsed()));
        let diff = Arc::new(DiffView::new(JOB, files));
        rows = diff.rows().len();
        let snap = snapshot(diff);
        let mut state = view_state(&snap);
        state.detail_job = Some(JOB.into());
        state.focus = Pane::Detail;
        state.right = Pane::Detail;
        state.detail_tab = DetailTab::Diff;
        std::hint::black_box(render_frame(&state, &snap, &theme));
        open.push(ms(t.elapsed()));
    }
    let files = crate::worktree::diff_files(dir, &base).map_err(|e| e.to_string())?;
    let snap = snapshot(Arc::new(DiffView::new(JOB, files)));
    let mut state = view_state(&snap);
    state.detail_job = Some(JOB.into());
    state.focus = Pane::Detail;
    state.right = Pane::Detail;
    state.detail_tab = DetailTab::Diff;
    let mut scroll = Vec::with_capacity(SCROLL_KEYS);
    for i in 0..SCROLL_KEYS {
        // Pages down, with a line step now and then, as a reader moves.
        let code = if i % 4 == 3 {
            KeyCode::Char('j')
        } else {
            KeyCode::PageDown
        };
        let t = Instant::now();
        update(
            &mut state,
            &snap,
            Event::Key(KeyEvent::new(code, KeyModifiers::NONE)),
        );
        std::hint::black_box(render_frame(&state, &snap, &theme));
        scroll.push(ms(t.elapsed()));
    }
    Ok(vec![
        (
            "diff.rows".into(),
            format!("{rows} rows (a {LINES}-line change: one file, both sides)"),
        ),
        (
            "diff.read_ms".into(),
            format!(
                "{:.1} (median of {OPEN_RUNS}; git through worktree::diff_files)",
                median(read)
            ),
        ),
        (
            "diff.open_ms".into(),
            format!(
                "{:.1} (median of {OPEN_RUNS}; read, lay out, first frame at 120x36)",
                median(open.clone())
            ),
        ),
        (
            "diff.scroll_frame_ms".into(),
            format!(
                "{:.3} (median of {SCROLL_KEYS} keys: update and frame, no re-read)",
                median(scroll)
            ),
        ),
    ])
}
