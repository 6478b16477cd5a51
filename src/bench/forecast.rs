//! `bench_forecast`: the merge forecasts of 8 open write jobs of one repository (28 pairs
//! and each job against its base's tip) through `worktree::forecast`, what `job pending`,
//! `worktree list` and the control room call, held against the bare `git merge-tree
//! --write-tree` of the same 28 pairs in the same run, and against those plus the `git
//! status` of each worktree (the read of each job's uncommitted work).
//!
//! Owns these timings and the scratch repository, worktrees and store they run on;
//! measures the real forecast and must not reimplement it.

use std::path::Path;
use std::time::Instant;

use super::{Failure, Measured, Rows};
use crate::clock::{Clock, SystemClock};
use crate::domain::WorktreeState;
use crate::store::Store;
use crate::store::worktrees::{self, WriteTree};

const JOBS: usize = 8;
/// Files of the generated repository besides the one every job changes.
const FILES: usize = 3_000;
const RUNS: usize = 5;

pub fn bench_forecast() -> Measured {
    super::in_scratch("forecast", measure).map_err(|e| Failure::new("forecast.error", e))
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = super::scratch_git::output(dir, args)?;
    // `merge-tree` answers 1 for a conflict, which is a result here, not a failure.
    let conflict = args[0] == "merge-tree" && out.status.code() == Some(1);
    if !(out.status.success() || conflict) {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A repository of `FILES` small files plus `shared.txt`, and `JOBS` worktrees each
/// committing a change to its own stretch of `shared.txt` (jobs 0 and 1 the same line, so
/// one pair conflicts); the branches.
fn repo(dir: &Path) -> Result<(String, Vec<String>), String> {
    let repo = dir.join("repo");
    for i in 0..FILES {
        let sub = repo.join(format!("src/m{}", i / 100));
        std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
        std::fs::write(sub.join(format!("f{i}.rs")), format!("// file {i}\n"))
            .map_err(|e| e.to_string())?;
    }
    let shared: String = (0..JOBS * 10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(repo.join("shared.txt"), &shared).map_err(|e| e.to_string())?;
    git(&repo, &["init", "-q", "-b", "main"])?;
    git(&repo, &["add", "."])?;
    git(&repo, &["commit", "-qm", "base"])?;
    let base = git(&repo, &["rev-parse", "HEAD"])?;
    let mut branches = Vec::new();
    for j in 0..JOBS {
        let branch = format!("gitmoot/job-bench{j}");
        let wt = dir.join(format!("wt{j}"));
        let at = wt.display().to_string();
        git(&repo, &["worktree", "add", "-q", "-b", &branch, &at, &base])?;
        let line = if j == 1 { 0 } else { j * 10 };
        let text = shared.replace(&format!("line {line}\n"), &format!("job {j}\n"));
        std::fs::write(wt.join("shared.txt"), text).map_err(|e| e.to_string())?;
        git(&wt, &["commit", "-qam", &format!("job {j}")])?;
        branches.push(branch);
    }
    Ok((base, branches))
}

/// The store's rows for the worktrees: `JOBS` open write jobs of `bench/repo` on `main`.
fn rows(dir: &Path, store: &mut Store, base: &str, branches: &[String]) -> Result<(), String> {
    let ids = super::daemon::submit(store, JOBS)?;
    let now = SystemClock.now_ms();
    let co = dir.join("repo").display().to_string();
    store
        .write(|tx| {
            for (j, (id, branch)) in ids.iter().zip(branches).enumerate() {
                let mut w = WriteTree::requested(id, id, "bench/repo", Some("main"), now);
                w.state = WorktreeState::Open;
                w.base_commit = Some(base.to_string());
                w.branch = Some(branch.clone());
                w.checkout = Some(co.clone());
                w.path = Some(dir.join(format!("wt{j}")).display().to_string());
                worktrees::put(tx, &w)?;
            }
            Ok::<_, crate::store::StoreError>(())
        })
        .map_err(|e| e.to_string())
}

fn measure(dir: &Path) -> Result<Rows, String> {
    let (base, branches) = repo(dir)?;
    let (_home, mut store) = super::home_with_agent(&dir.join("home"), "bench", "true")?;
    rows(dir, &mut store, &base, &branches)?;
    let co = dir.join("repo");
    let mut forecast = Vec::new();
    let mut bare = Vec::new();
    let mut status = Vec::new();
    let mut found = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        let f = crate::worktree::forecast(&store).map_err(|e| e.to_string())?;
        forecast.push(super::tui::ms(t.elapsed()));
        found = Some(f);
        let t = Instant::now();
        for (i, a) in branches.iter().enumerate() {
            for b in &branches[i + 1..] {
                git(&co, &["merge-tree", "--write-tree", "--no-messages", a, b])?;
            }
        }
        bare.push(super::tui::ms(t.elapsed()));
        let t = Instant::now();
        for j in 0..JOBS {
            let wt = dir.join(format!("wt{j}"));
            let args = ["--no-optional-locks", "status", "--porcelain", "-z"];
            git(&wt, &[&args[..], &["--untracked-files=all"]].concat())?;
        }
        status.push(super::tui::ms(t.elapsed()));
    }
    let f = found.unwrap_or_default();
    let conflicts = f
        .pairs
        .iter()
        .filter(|p| p.kind == crate::domain::Clash::Conflicts)
        .count();
    let (f_ms, b_ms) = (super::tui::median(forecast), super::tui::median(bare));
    let s_ms = super::tui::median(status);
    let pairs = JOBS * (JOBS - 1) / 2;
    Ok(vec![
        (
            format!("forecast.{JOBS}_jobs_ms"),
            format!(
                "{f_ms:.1} (median of {RUNS}; {pairs} pairs, {} forecast, {conflicts} conflicting; {FILES} files)",
                f.pairs.len()
            ),
        ),
        (
            "forecast.anchor.bare_merge_tree_ms".into(),
            format!("{b_ms:.1} ({pairs} bare `git merge-tree --write-tree`)"),
        ),
        (
            "forecast.anchor.bare_status_ms".into(),
            format!("{s_ms:.1} ({JOBS} bare `git status` of the worktrees)"),
        ),
        (
            "forecast.ratio_to_bare".into(),
            format!("{:.2}", f_ms / b_ms.max(f64::EPSILON)),
        ),
        (
            "forecast.ratio_to_bare_with_status".into(),
            format!("{:.2}", f_ms / (b_ms + s_ms).max(f64::EPSILON)),
        ),
    ])
}
