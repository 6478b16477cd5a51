//! `bench_worktree`: reading agents' worktrees on a cargo-sized repository. A generated
//! repository of `FILES` files (packed, as a clone is), eight write jobs' worktrees opened
//! through `worktree::open` and left with uncommitted work the way an agent leaves it (a
//! few files edited, one deleted, one added, the index as the checkout wrote it); then
//! `job diff`, `worktree list` and the control room's re-read after one job's state change,
//! each through the product's function, held against bare git on the same worktrees once
//! their indexes were refreshed (`git diff BASE` + `git ls-files -o --exclude-standard`).
//!
//! Owns these timings and the scratch repository; refreshes the real indexes only after
//! the product's reads were measured, for the anchor.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::tui::{median, ms};
use crate::clock::Millis;
use crate::domain::{Action, JobKind, JobState, WorktreeState};
use crate::store::jobs::{self, Job};
use crate::store::runs::{self, Run};
use crate::store::worktrees::{self, WriteTree};
use crate::store::{Store, agents};
use crate::tui::work::WorkCache;
use crate::worktree::{self, OpenSpec};

/// Files of the generated repository (cargo has 3,072); `$GITMOOT_BENCH_WORKTREE_FILES`
/// sets a smaller one for the bench's own test.
const FILES: usize = 3_200;
const JOBS: usize = 8;
/// Timed rounds of each figure (the first reads are reported apart).
const ROUNDS: usize = 9;

pub fn bench_worktree() -> super::Measured {
    super::in_scratch("worktree", measure).map_err(|e| super::Failure::new("worktree.error", e))
}

fn files() -> usize {
    std::env::var("GITMOOT_BENCH_WORKTREE_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(FILES)
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    super::scratch_git::bytes(dir, args)
}

/// A repository of `n` source-like files in folders of 50, 1 to 12 KiB each, committed
/// and packed; its base commit.
fn repo(dir: &Path, n: usize) -> Result<String, String> {
    git(dir, &["init", "-q", "-b", "main"])?;
    std::fs::write(dir.join(".gitignore"), "target/\n*.log\n").map_err(|e| e.to_string())?;
    for i in 0..n {
        let folder = dir.join(format!("src/m{}", i / 50));
        std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
        let lines = 20 + (i * 7919) % 300;
        let text: String = (0..lines)
            .map(|l| format!("    let v{l} = compute({i}, {l}); // line {l} of file {i}\n"))
            .collect();
        std::fs::write(folder.join(format!("f{i}.rs")), text).map_err(|e| e.to_string())?;
    }
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-qm", "base"])?;
    git(dir, &["gc", "-q"])?;
    let base = git(dir, &["rev-parse", "HEAD"])?;
    Ok(String::from_utf8_lossy(&base).trim().to_string())
}

/// What an agent leaves in worktree `k`: three files edited, one deleted, one added, an
/// ignored build output.
fn agent_work(wt: &Path, k: usize, n: usize) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    for f in [k, k + 11, k + 23] {
        let p = wt.join(format!("src/m{}/f{}.rs", (f % n) / 50, f % n));
        let mut text = std::fs::read_to_string(&p).map_err(io)?;
        text.push_str(&format!("// job {k} was here\n"));
        std::fs::write(&p, text).map_err(io)?;
    }
    let gone = (k + 37) % n;
    std::fs::remove_file(wt.join(format!("src/m{}/f{gone}.rs", gone / 50))).map_err(io)?;
    std::fs::write(wt.join(format!("src/new_{k}.rs")), "pub fn new() {}\n").map_err(io)?;
    std::fs::create_dir_all(wt.join("target")).map_err(io)?;
    std::fs::write(wt.join("target/out.log"), "built\n").map_err(io)
}

/// The eight jobs, their worktrees opened and left with work; (job id, worktree) each.
fn jobs_with_work(
    dir: &Path,
    store: &mut Store,
    n: usize,
) -> Result<(Vec<(String, PathBuf)>, String), String> {
    let checkout = dir.join("repo");
    std::fs::create_dir_all(&checkout).map_err(|e| e.to_string())?;
    let base = repo(&checkout, n)?;
    let e = |e: crate::store::StoreError| e.to_string();
    agents::insert(store.conn(), &super::seeded_agent("bench")).map_err(e)?;
    let mut out = Vec::new();
    for k in 0..JOBS {
        let id = format!("job-bench{k}");
        let path = dir.join(format!("wt{k}"));
        let branch = format!("gitmoot/{id}");
        let opened = worktree::open(&OpenSpec {
            checkout: checkout.clone(),
            path: path.clone(),
            branch: branch.clone(),
            base: None,
            base_commit: None,
        })
        .map_err(|e| e.to_string())?;
        agent_work(&path, k, n)?;
        let now = crate::clock::now_ms();
        let job = Job {
            state: JobState::Succeeded,
            repo: Some("bench".into()),
            ..Job::queued(
                id.clone(),
                id.clone(),
                JobKind::Root,
                "bench".into(),
                Action::Implement,
                "work".into(),
                now,
            )
        };
        let row = WriteTree {
            state: WorktreeState::Open,
            base_ref: Some(opened.base_ref),
            base_commit: Some(opened.base_commit),
            branch: Some(branch),
            checkout: Some(checkout.display().to_string()),
            path: Some(path.display().to_string()),
            ..WriteTree::requested(&id, &id, "bench", None, now)
        };
        store
            .write(|tx| {
                let run = Run::new(id.clone(), "bench".into(), Some("bench".into()), now);
                runs::put(tx, &run)?;
                jobs::put(tx, &job)?;
                worktrees::put(tx, &row)
            })
            .map_err(e)?;
        out.push((id, path));
    }
    Ok((out, base))
}

/// How long `f` took, in ms.
fn time(f: impl FnOnce() -> Result<(), String>) -> Result<f64, String> {
    let t = Instant::now();
    f()?;
    Ok(ms(t.elapsed()))
}

/// Bare git's reading of one worktree's work: `git diff BASE` and the untracked files.
fn bare_git(wt: &Path, base: &str) -> Result<(), String> {
    git(wt, &["diff", base])?;
    git(wt, &["ls-files", "-o", "--exclude-standard"])?;
    Ok(())
}

/// The job's state flipped between two ended states, as a settle changes it.
fn change_state(store: &mut Store, id: &str, now: Millis) -> Result<(), String> {
    let e = |e: crate::store::StoreError| e.to_string();
    let job = jobs::require(store.conn(), id).map_err(e)?;
    let state = match job.state {
        JobState::Failed => JobState::Succeeded,
        _ => JobState::Failed,
    };
    store
        .write(|tx| {
            jobs::put(
                tx,
                &Job {
                    state,
                    updated_ms: now,
                    ..job
                },
            )
        })
        .map_err(e)
}

fn measure(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let n = files();
    let mut store = Store::open(&dir.join("bench.db")).map_err(|e| e.to_string())?;
    let (jobs, base) = jobs_with_work(dir, &mut store, n)?;
    let here: Vec<String> = Vec::new();
    let err = |e: worktree::WorktreeError| e.to_string();
    let e = |e: crate::store::StoreError| e.to_string();
    let diff = |store: &Store| {
        worktree::job_diff_text(store, &here, &jobs[0].0, false, false)
            .map(drop)
            .map_err(err)
    };
    let list = |store: &Store| worktree::list(store).map(drop).map_err(err);
    // The first reads, on the worktrees as the agents left them.
    let first = |f: &dyn Fn(&Store) -> Result<(), String>| {
        let t = Instant::now();
        f(&store).map(|()| ms(t.elapsed()))
    };
    let (first_diff, first_list) = (first(&diff)?, first(&list)?);
    let mut room = WorkCache::default();
    let t = Instant::now();
    room.read(&store, None, crate::clock::now_ms()).map_err(e)?;
    let first_frame = ms(t.elapsed());
    let t = Instant::now();
    room.read(&store, None, crate::clock::now_ms()).map_err(e)?;
    let fill = ms(t.elapsed());
    // Bare git's figures need refreshed indexes; each product read is timed next to its
    // anchor, round by round, so a machine busy with something else skews both alike.
    for (_, wt) in &jobs {
        git(wt, &["update-index", "-q", "--refresh"])?;
    }
    diff(&store)?;
    list(&store)?;
    let mut t = [const { Vec::new() }; 5];
    for r in 0..ROUNDS {
        t[0].push(time(|| diff(&store))?);
        t[1].push(time(|| bare_git(&jobs[0].1, &base))?);
        t[2].push(time(|| list(&store))?);
        t[3].push(time(|| {
            jobs.iter().try_for_each(|(_, wt)| bare_git(wt, &base))
        })?);
        t[4].push(time(|| {
            let now = crate::clock::now_ms();
            change_state(&mut store, &jobs[r % JOBS].0, now)?;
            room.read(&store, None, now).map(drop).map_err(e)
        })?);
    }
    let [diff, one, list, all, reread] = t.map(median);
    let f = |v: f64| format!("{v:.2}");
    Ok(vec![
        ("worktree.repo_files".into(), n.to_string()),
        ("worktree.open_jobs".into(), JOBS.to_string()),
        ("worktree.job_diff_ms".into(), f(diff)),
        ("worktree.job_diff_first_ms".into(), f(first_diff)),
        ("worktree.anchor.git_diff_one_ms".into(), f(one)),
        ("worktree.list_ms".into(), f(list)),
        ("worktree.list_first_ms".into(), f(first_list)),
        ("worktree.anchor.git_diff_all_ms".into(), f(all)),
        ("worktree.room_first_read_ms".into(), f(first_frame)),
        ("worktree.room_fill_ms".into(), f(fill)),
        ("worktree.room_reread_one_ms".into(), f(reread)),
    ])
}
