//! Store and git → the view model's write-job part: every job's worktree row and the
//! overlaps between open ones (the data `worktree list` and `job pending` show), the drawer
//! job's land/discard figures (`worktree::loss`) and its diff (`worktree::job_diff`, the
//! function behind `job diff --json`), read on the loader's thread.
//!
//! Owns when these are read again: the git work is keyed by the job's row and state, so a
//! refresh that changed nothing of a job's work costs one small query, and a diff is read
//! once and shared with every later snapshot. Never writes; never runs git outside
//! `crate::worktree`.

use std::collections::HashMap;
use std::sync::Arc;

use gitmoot_ui::view::{AttentionItem, AttentionKind};
use gitmoot_ui::work::{BaseConflictView, Clash, DiffView, JobWork, OverlapView, Work, WorkRow};

use crate::clock::Millis;
use crate::domain::{JobState, WorktreeState};
use crate::store::worktrees::{self, WriteTree};
use crate::store::{Store, StoreError, jobs};
use crate::worktree;

/// How often the overlaps of open jobs are compared again while one of them is running
/// (its files change without its row changing).
const OVERLAP_EVERY_MS: i64 = 10_000;
/// How often a running job's diff is read again while the Diff tab shows it.
const RUNNING_DIFF_EVERY_MS: i64 = 5_000;

/// What a job's work was read for: the row's state and change time and the job's state
/// and attempt, plus a time bucket while it runs.
type WorkKey = (String, WorktreeState, Millis, JobState, u32, i64);

/// What the overlaps were compared for: each row's state and change time and its job's state.
type RowKey = (String, WorktreeState, Millis, Option<JobState>);

/// The write-job part of the last load, reused while it still holds.
#[derive(Default)]
pub struct WorkCache {
    /// The job whose diff the Diff tab asked for (`Load::Diff`).
    pub diff_job: Option<String>,
    overlap_key: Option<(Vec<RowKey>, Millis)>,
    overlaps: Vec<OverlapView>,
    base_conflicts: Vec<BaseConflictView>,
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
        let states: Vec<_> = with_jobs
            .iter()
            .map(|(w, s, _)| (w.job_id.clone(), w.state, w.updated_ms, *s))
            .collect();
        let running = states
            .iter()
            .any(|s| s.1 == WorktreeState::Open && s.3 == Some(JobState::Running));
        let stale = match &self.overlap_key {
            Some((key, at)) => *key != states || (running && now - at >= OVERLAP_EVERY_MS),
            None => true,
        };
        if stale {
            let forecast = worktree::forecast(store).unwrap_or_default();
            self.overlaps = forecast
                .pairs
                .into_iter()
                .map(|o| OverlapView {
                    repo: o.repo,
                    jobs: o.jobs,
                    kind: o.kind,
                    files: o.files,
                    hunks: o.hunks,
                })
                .collect();
            self.base_conflicts = forecast
                .base
                .into_iter()
                .map(|c| BaseConflictView {
                    job: c.job,
                    base: c.base,
                    files: c.files,
                    hunks: c.hunks,
                })
                .collect();
            self.overlap_key = Some((states, now));
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

    /// Each job's row with the other open jobs it overlaps.
    fn rows(&mut self, store: &Store, rows: &[worktrees::WithJob]) -> HashMap<String, WorkRow> {
        self.losses
            .retain(|id, _| rows.iter().any(|(w, _, _)| &w.job_id == id));
        let mut out: HashMap<String, WorkRow> = rows
            .iter()
            .map(|(w, s, _)| {
                let row = WorkRow {
                    state: (w.state != WorktreeState::Requested).then_some(w.state),
                    review_rounds: w.review_rounds.max(0) as u32,
                    overlaps: Vec::new(),
                    clash: None,
                    base_conflict: None,
                    repo: w.repo.clone(),
                    branch: w.branch.clone().unwrap_or_default(),
                    base: w.base_ref.clone().unwrap_or_default(),
                    loss: self.loss(store, w, *s),
                };
                (w.job_id.clone(), row)
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
