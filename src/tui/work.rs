//! Store and git → the view model's write-job part: every job's worktree row and the
//! overlaps between open ones (the data `worktree list` and `job pending` show), the drawer
//! job's land/discard figures (`worktree::loss`) and its diff (`worktree::job_diff`, the
//! function behind `job diff --json`), read on the loader's thread.
//!
//! Owns when these are read again: the git work is keyed by each job's row and state, so a
//! refresh reads again only the worktrees of the jobs that changed (and of running ones,
//! every `OVERLAP_EVERY_MS`), a refresh that changed nothing costs one small query, and a
//! diff is read once and shared with every later snapshot. The first read leaves git out
//! (`owes_git`), so the control room's first frame never waits on a worktree. Never writes;
//! never runs git outside `crate::worktree`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use gitmoot_ui::view::{AttentionItem, AttentionKind};
use gitmoot_ui::work::{BaseConflictView, Clash, DiffView, JobWork, OverlapView, Work, WorkRow};

use crate::clock::Millis;
use crate::domain::{JobState, WorktreeState};
use crate::store::worktrees::{self, WriteTree};
use crate::store::{Store, StoreError, jobs};
use crate::worktree;

/// How often a running job's touched files are read again for the overlaps (its files
/// change without its row changing).
const OVERLAP_EVERY_MS: i64 = 10_000;
/// How often a running job's diff is read again while the Diff tab shows it.
const RUNNING_DIFF_EVERY_MS: i64 = 5_000;

/// What a job's work was read for: the row's state and change time and the job's state
/// and attempt, plus a time bucket while it runs.
type WorkKey = (String, WorktreeState, Millis, JobState, u32, i64);

/// What a job's touched files or loss were read for: its row's state and change time and
/// its job's state.
type RowKey = (String, WorktreeState, Millis, Option<JobState>);

/// The write-job part of the last load, reused while it still holds.
#[derive(Default)]
pub struct WorkCache {
    /// The job whose diff the Diff tab asked for (`Load::Diff`).
    pub diff_job: Option<String>,
    /// The row each open job's work was read for, and when.
    touched: HashMap<String, (RowKey, Millis)>,
    /// Each open job's work as the forecasts read it.
    work: BTreeMap<String, worktree::OpenWork>,
    overlaps: Vec<OverlapView>,
    base_conflicts: Vec<BaseConflictView>,
    /// When the forecasts against each base branch's tip were last made.
    forecast_at: Millis,
    /// A read happened; the first one leaves git out.
    started: bool,
    /// The last read left git out: the next must come at once to fill it in.
    owed: bool,
    job: Option<(WorkKey, JobWork)>,
    /// What discarding each ended job's open worktree loses, and the row it was read for.
    losses: HashMap<String, (RowKey, String)>,
    diff: Option<(WorkKey, Arc<DiffView>)>,
    /// This host's labels (`[daemon] labels`): a worktree pinned elsewhere shows the diff
    /// its daemon stored.
    pub labels: Vec<String>,
}

impl WorkCache {
    /// Reads what changed of the write jobs' part for a load with `detail` in the drawer.
    pub fn read(
        &mut self,
        store: &Store,
        detail: Option<&str>,
        now: Millis,
    ) -> Result<Work, StoreError> {
        let with_jobs = worktrees::list_with_jobs(store.conn())?;
        self.owed = !std::mem::replace(&mut self.started, true);
        if self.owed {
            let rows = with_jobs
                .iter()
                .map(|(w, _, _)| (w.job_id.clone(), row(w, None)));
            return Ok(Work {
                rows: rows.collect(),
                ..Work::default()
            });
        }
        let changed = self.read_touched(&with_jobs, now);
        // A base branch moves without this job's row changing (another job landed, the
        // operator committed): the forecasts against its tip are made again from the work
        // already read, git objects only.
        if changed || now - self.forecast_at >= OVERLAP_EVERY_MS {
            self.forecast_at = now;
            let rows: Vec<WriteTree> = with_jobs.iter().map(|(w, _, _)| w.clone()).collect();
            let mut work: BTreeMap<String, worktree::OpenWork> = std::mem::take(&mut self.work);
            for w in &rows {
                if let Some(read) = work.get_mut(&w.job_id) {
                    worktree::against_base_now(w, read);
                }
            }
            self.overlaps = worktree::forecast_pairs(&rows, &work)
                .into_iter()
                .map(|o| OverlapView {
                    repo: o.repo,
                    jobs: o.jobs,
                    kind: o.kind,
                    files: o.files,
                    hunks: o.hunks,
                })
                .collect();
            self.base_conflicts = work
                .values()
                .filter_map(|w| w.against_base.clone())
                .map(|c| BaseConflictView {
                    job: c.job,
                    base: c.base,
                    files: c.files,
                    hunks: c.hunks,
                })
                .collect();
            self.work = work;
        }
        let rows = self.rows(store, &with_jobs);
        let detail_row = detail.and_then(|j| with_jobs.iter().find(|w| w.0.job_id == j));
        let mut work = Work {
            rows,
            overlaps: self.overlaps.clone(),
            base_conflicts: self.base_conflicts.clone(),
            job: None,
            diff: None,
        };
        if let Some((w, state, attempt)) =
            detail_row.filter(|w| w.0.state != WorktreeState::Requested)
        {
            let key = key_of(w, state.unwrap_or(JobState::Queued), *attempt, now);
            work.job = Some(self.job_work(store, w, &key));
            if self.diff_job.as_deref() == Some(w.job_id.as_str()) {
                work.diff = Some(self.diff(store, &w.job_id, &key));
            }
        } else if let Some(j) = detail.filter(|j| self.diff_job.as_deref() == Some(*j)) {
            work.diff = Some(Arc::new(DiffView::failed(
                j,
                format!(
                    "{j} has no worktree: only an implement job on a repo with a registered git checkout works on a branch of its own, once it has started"
                ),
            )));
        }
        Ok(work)
    }

    /// Whether the last read left git out, so the next must come at once.
    pub fn owes_git(&self) -> bool {
        self.owed
    }

    /// Reads again the work of each open job whose row or state changed since (or that
    /// runs, every `OVERLAP_EVERY_MS`); whether any changed.
    fn read_touched(&mut self, rows: &[worktrees::WithJob], now: Millis) -> bool {
        let open: Vec<_> = rows
            .iter()
            .filter(|(w, _, _)| w.state == WorktreeState::Open)
            .filter(|(w, _, _)| w.path.as_deref().is_some_and(|p| Path::new(p).exists()))
            .map(|(w, s, _)| (w, *s))
            .collect();
        let before = self.touched.len();
        self.touched
            .retain(|id, _| open.iter().any(|(w, _)| &w.job_id == id));
        self.work.retain(|id, _| self.touched.contains_key(id));
        let mut changed = self.touched.len() != before;
        for (w, state) in open {
            let key = (w.job_id.clone(), w.state, w.updated_ms, state);
            let fresh = self.touched.get(&w.job_id).is_some_and(|(k, at)| {
                *k == key && (state != Some(JobState::Running) || now - at < OVERLAP_EVERY_MS)
            });
            if fresh {
                continue;
            }
            let read = worktree::work_of(w);
            let same = match (self.work.get(&w.job_id), &read) {
                (Some(had), Some(now)) => had.same_as(now),
                (None, None) => true,
                _ => false,
            };
            changed |= !same;
            self.touched.insert(w.job_id.clone(), (key, now));
            match read {
                Some(read) => self.work.insert(w.job_id.clone(), read),
                None => self.work.remove(&w.job_id),
            };
        }
        changed
    }

    /// Each job's row with the other open jobs it overlaps.
    fn rows(&mut self, store: &Store, rows: &[worktrees::WithJob]) -> HashMap<String, WorkRow> {
        self.losses
            .retain(|id, _| rows.iter().any(|(w, _, _)| &w.job_id == id));
        let mut out: HashMap<String, WorkRow> = rows
            .iter()
            .map(|(w, s, _)| {
                let loss = self.loss(store, w, *s);
                (w.job_id.clone(), row(w, loss))
            })
            .collect();
        for o in &self.overlaps {
            for (me, other) in [(0, 1), (1, 0)] {
                if let Some(r) = out.get_mut(&o.jobs[me]) {
                    r.overlaps.push(o.jobs[other].clone());
                    r.clash = r.clash.max(Some(o.kind));
                }
            }
        }
        for c in &self.base_conflicts {
            if let Some(r) = out.get_mut(&c.job) {
                r.clash = Some(Clash::Conflicts);
                r.base_conflict = Some(c.base.clone());
            }
        }
        out
    }

    /// What discarding `w` loses (`worktree::loss`), read again only when its row or its
    /// job's state changed; `None` while the job works or once the worktree is gone.
    fn loss(&mut self, store: &Store, w: &WriteTree, state: Option<JobState>) -> Option<String> {
        let ended = state.is_some_and(|s| !matches!(s, JobState::Queued | JobState::Running));
        if w.state != WorktreeState::Open || !ended {
            return None;
        }
        let key = (w.job_id.clone(), w.state, w.updated_ms, state);
        if let Some((k, v)) = self.losses.get(&w.job_id)
            && *k == key
        {
            return Some(v.clone());
        }
        let v = loss_words(&worktree::loss(store, &w.job_id));
        self.losses.insert(w.job_id.clone(), (key, v.clone()));
        Some(v)
    }

    fn job_work(&mut self, store: &Store, w: &WriteTree, key: &WorkKey) -> JobWork {
        if let Some((k, v)) = &self.job
            && k == key
        {
            return v.clone();
        }
        let mut v = JobWork {
            job_id: w.job_id.clone(),
            state: w.state,
            branch: w.branch.clone().unwrap_or_default(),
            base: w.base_ref.clone().unwrap_or_default(),
            files: Vec::new(),
            added: 0,
            removed: 0,
            commits: 0,
            review_rounds: w.review_rounds.max(0) as u32,
            loss: String::new(),
        };
        if w.state == WorktreeState::Open {
            let l = worktree::loss(store, &w.job_id);
            v.loss = loss_words(&l);
            if let Ok(l) = l {
                (v.files, v.added, v.removed, v.commits) = (l.files, l.added, l.removed, l.commits);
            }
        }
        self.job = Some((key.clone(), v.clone()));
        v
    }

    fn diff(&mut self, store: &Store, job: &str, key: &WorkKey) -> Arc<DiffView> {
        if let Some((k, v)) = &self.diff
            && k == key
        {
            return v.clone();
        }
        let v = Arc::new(match worktree::job_diff(store, &self.labels, job, false) {
            Ok(d) => DiffView::new(job, d.files),
            Err(e) => DiffView::failed(job, crate::error_line(&e)),
        });
        self.diff = Some((key.clone(), v.clone()));
        v
    }
}

/// A job's row as the view draws it, before its overlaps are added.
fn row(w: &WriteTree, loss: Option<String>) -> WorkRow {
    WorkRow {
        state: (w.state != WorktreeState::Requested).then_some(w.state),
        review_rounds: w.review_rounds.max(0) as u32,
        overlaps: Vec::new(),
        clash: None,
        base_conflict: None,
        repo: w.repo.clone(),
        branch: w.branch.clone().unwrap_or_default(),
        base: w.base_ref.clone().unwrap_or_default(),
        loss,
    }
}

/// What discarding loses in `job discard`'s words, or why it could not be read.
fn loss_words(l: &Result<worktree::Loss, worktree::WorktreeError>) -> String {
    match l {
        Ok(l) => gitmoot_ui::sanitize::clean_line(&l.to_string()),
        Err(e) => format!("what it holds could not be read: {}", crate::error_line(e)),
    }
}

fn key_of(w: &WriteTree, state: JobState, attempt: u32, now: Millis) -> WorkKey {
    let bucket = if state == JobState::Running {
        now / RUNNING_DIFF_EVERY_MS
    } else {
        0
    };
    (
        w.job_id.clone(),
        w.state,
        w.updated_ms,
        state,
        attempt,
        bucket,
    )
}

/// The forecast items of the Attention pane, as `job pending` lists them: one per pair of
/// open jobs sharing files (an overlap, or a conflict), one per job conflicting with its
/// base branch's tip.
pub fn attention(work: &Work, store: &Store) -> Vec<AttentionItem> {
    let pairs = work.overlaps.iter().map(|o| {
        let kind = match o.kind {
            Clash::Overlaps => AttentionKind::Overlap {
                jobs: o.jobs.clone(),
                files: o.files.clone(),
            },
            Clash::Conflicts => AttentionKind::Conflict {
                with: o.jobs[0].clone(),
                on_base: false,
                files: o.files.clone(),
                hunks: o.hunks.clone(),
            },
        };
        (&o.jobs[1], kind)
    });
    let base = work.base_conflicts.iter().map(|c| {
        let kind = AttentionKind::Conflict {
            with: c.base.clone(),
            on_base: true,
            files: c.files.clone(),
            hunks: c.hunks.clone(),
        };
        (&c.job, kind)
    });
    pairs
        .chain(base)
        .map(|(id, kind)| {
            let job = jobs::get(store.conn(), id).ok().flatten();
            AttentionItem {
                job_id: id.clone(),
                root_id: job.as_ref().map(|j| j.root_id.clone()).unwrap_or_default(),
                agent: job.as_ref().map(|j| j.agent.clone()).unwrap_or_default(),
                why: None,
                opened_ms: job.map_or(0, |j| j.created_ms),
                thread: None,
                kind,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::WorkCache;
    use crate::domain::{Action, JobKind, JobState, WorktreeState};
    use crate::store::jobs::{self, Job};
    use crate::store::runs::{self, Run};
    use crate::store::worktrees::{self, WriteTree};
    use crate::store::{Store, agents};
    use crate::worktree::git;

    fn run_git(dir: &Path, args: &[&str]) -> String {
        let as_t = [&["-c", "user.name=t", "-c", "user.email=t@t"][..], args].concat();
        let out = git::run(dir, &as_t).unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8_lossy(&out).trim().to_string()
    }

    /// Three ended write jobs whose worktrees each changed `shared.txt` (so each pair
    /// overlaps), in a store of their own; the store and each job's id and worktree.
    fn three_jobs(dir: &Path) -> (Store, Vec<(String, PathBuf)>) {
        let repo = dir.join("repo");
        std::fs::create_dir(&repo).unwrap();
        run_git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("shared.txt"), "base\n").unwrap();
        run_git(&repo, &["add", "."]);
        run_git(&repo, &["commit", "-qm", "base"]);
        let base = run_git(&repo, &["rev-parse", "HEAD"]);
        let mut store = Store::open(&dir.join("store.db")).unwrap();
        agents::insert(
            store.conn(),
            &crate::store::agents::Agent::shell("a", "true"),
        )
        .unwrap();
        let mut out = Vec::new();
        for k in 0..3 {
            let id = format!("job-w{k}");
            let wt = dir.join(format!("wt{k}"));
            let branch = format!("gitmoot/{id}");
            run_git(
                &repo,
                &["worktree", "add", "-q", "-b", &branch, wt.to_str().unwrap()],
            );
            std::fs::write(wt.join("shared.txt"), format!("job {k}\n")).unwrap();
            let job = Job {
                state: JobState::Succeeded,
                ..Job::queued(
                    id.clone(),
                    id.clone(),
                    JobKind::Root,
                    "a".into(),
                    Action::Implement,
                    "work".into(),
                    1,
                )
            };
            let row = WriteTree {
                state: WorktreeState::Open,
                base_ref: Some("main".into()),
                base_commit: Some(base.clone()),
                branch: Some(branch),
                checkout: Some(repo.display().to_string()),
                path: Some(wt.display().to_string()),
                ..WriteTree::requested(&id, &id, "r", None, 1)
            };
            store
                .write(|tx| {
                    runs::put(tx, &Run::new(id.clone(), "t".into(), Some("r".into()), 1))?;
                    jobs::put(tx, &job)?;
                    worktrees::put(tx, &row)
                })
                .unwrap();
            out.push((id, wt));
        }
        (store, out)
    }

    fn reads(jobs: &[(String, PathBuf)]) -> Vec<usize> {
        jobs.iter()
            .map(|(_, wt)| crate::worktree::reads_of(wt))
            .collect()
    }

    /// The control room's first frame is drawn from the store alone: its first read leaves
    /// every worktree unread and says it owes them, and the next read fills them in.
    #[test]
    fn the_first_read_waits_on_no_worktree_and_the_next_fills_them_in() {
        let dir = tempfile::tempdir().unwrap();
        let (store, jobs) = three_jobs(dir.path());
        let mut cache = WorkCache::default();
        let first = cache.read(&store, None, 10).unwrap();
        assert_eq!(reads(&jobs), [0, 0, 0], "the first read read a worktree");
        assert!(cache.owes_git());
        assert_eq!(first.rows.len(), 3, "the rows come from the store");
        assert!(first.overlaps.is_empty());
        let next = cache.read(&store, None, 20).unwrap();
        assert!(!cache.owes_git());
        assert!(reads(&jobs).iter().all(|n| *n > 0), "{:?}", reads(&jobs));
        assert_eq!(next.overlaps.len(), 3, "each pair changes shared.txt");
        assert!(
            next.rows["job-w0"].loss.is_some(),
            "an ended job's loss is read"
        );
    }

    /// One job's state change re-reads that job's worktree and no other.
    #[test]
    fn a_job_s_state_change_re_reads_only_its_worktree() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, jobs) = three_jobs(dir.path());
        let mut cache = WorkCache::default();
        cache.read(&store, None, 10).unwrap();
        cache.read(&store, None, 20).unwrap();
        let before = reads(&jobs);
        cache.read(&store, None, 30).unwrap();
        assert_eq!(reads(&jobs), before, "nothing changed, nothing is read");
        let job = jobs::require(store.conn(), "job-w1").unwrap();
        let failed = Job {
            state: JobState::Failed,
            updated_ms: 40,
            ..job
        };
        store.write(|tx| jobs::put(tx, &failed)).unwrap();
        let work = cache.read(&store, None, 40).unwrap();
        let after = reads(&jobs);
        assert_eq!(
            (after[0], after[2]),
            (before[0], before[2]),
            "others re-read"
        );
        assert!(
            after[1] > before[1],
            "the changed job's worktree was not read"
        );
        assert_eq!(work.overlaps.len(), 3, "the overlaps are kept");
    }
}
