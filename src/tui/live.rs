//! Store → the control room's live figures: running jobs' newest steps, running legs'
//! unsettled spend per root, today's fleet spend, and the open job's Activity steps.
//!
//! Owns incremental reads only: the newest steps are re-read by `job_activity.updated_ms`
//! since the last load, the open job's steps from the last seen `seq`, today's settled
//! spend only when the event log moved. Never writes.

use std::collections::HashMap;

use crate::store::Tx;
use gitmoot_ui::live::{Live, Step};

use crate::clock::Millis;
use crate::store::{StoreError, activity};

const DAY_MS: i64 = 86_400_000;
/// Steps the Activity tab keeps for the open job (the store caps a job at 5,000).
const STEPS_KEPT: usize = 5_000;

/// What the last loads read, so the next one reads only what changed.
#[derive(Debug, Default)]
pub struct LiveCache {
    /// `[orchestrate] max_delegation_cost_usd`, when set.
    pub budget_usd: Option<f64>,
    /// `[orchestrate] max_delegation_token_budget`, when set.
    pub budget_tokens: Option<u64>,
    latest: HashMap<String, String>,
    /// `updated_ms` of the newest `job_activity` row seen; `None` before the first load.
    cursor: Option<Millis>,
    /// (UTC day start, settled USD of the jobs created since, from the hourly rollup).
    today: Option<(Millis, f64)>,
    steps: Option<(String, Vec<Step>)>,
}

impl LiveCache {
    /// The live figures at `now`; `events_moved` says whether settled spend may have changed.
    pub fn read(
        &mut self,
        conn: &Tx<'_>,
        now: Millis,
        events_moved: bool,
    ) -> Result<Live, StoreError> {
        match self.cursor {
            None => {
                let (rows, newest) = activity::latest_running(conn)?;
                self.latest = rows.into_iter().collect();
                self.cursor = Some(newest);
            }
            Some(since) => {
                // `>=`: a row written in the same millisecond as the last read is read again
                // rather than missed.
                for l in activity::latest_changed_since(conn, since)? {
                    self.cursor = Some(self.cursor.map_or(l.updated_ms, |c| c.max(l.updated_ms)));
                    match (l.running, l.summary) {
                        (true, Some(s)) => {
                            self.latest.insert(l.job_id, s);
                        }
                        _ => {
                            self.latest.remove(&l.job_id);
                        }
                    }
                }
            }
        }
        let running_spend: HashMap<String, (u64, f64)> = activity::live_spend_by_root(conn)?
            .into_iter()
            .map(|(root, s)| (root, (s.tokens, s.cost_usd)))
            .collect();
        let day = now - now.rem_euclid(DAY_MS);
        let settled = match self.today {
            Some((d, usd)) if d == day && !events_moved => usd,
            _ => {
                let usd = crate::store::usage::spent_since(conn, None, day)?;
                self.today = Some((day, usd));
                usd
            }
        };
        let today_usd = settled + running_spend.values().map(|s| s.1).sum::<f64>();
        Ok(Live {
            latest: self.latest.clone(),
            running_spend,
            budget_usd: self.budget_usd,
            budget_tokens: self.budget_tokens,
            today_usd,
        })
    }

    /// The open job's steps, reading only those after the last one seen.
    pub fn steps(&mut self, conn: &Tx<'_>, job_id: &str) -> Result<Vec<Step>, StoreError> {
        if self.steps.as_ref().is_none_or(|(j, _)| j != job_id) {
            self.steps = Some((job_id.to_string(), Vec::new()));
        }
        let (_, steps) = self.steps.as_mut().expect("set above");
        let from = steps.last().map_or(0, |s| s.seq + 1);
        for r in activity::list(conn, job_id, from, STEPS_KEPT)? {
            steps.push(Step {
                seq: r.seq,
                ts_ms: r.at_ms,
                kind: r.kind,
                summary: gitmoot_ui::sanitize::clean(&r.summary),
                detail: r.detail.map(|d| gitmoot_ui::sanitize::clean(&d)),
            });
        }
        if steps.len() > STEPS_KEPT {
            steps.drain(..steps.len() - STEPS_KEPT);
        }
        Ok(steps.clone())
    }
}
