//! The control room's reads that no single aggregate owns: a tree's light rows, the cheap
//! signatures that tell a refresh what changed, and the newest preflight refusals.
//!
//! Owns only the SQL and plain rows; turning them into view models is `tui::load`'s, and
//! nothing here writes.

use super::row::row_columns;
use super::tx::{Row, Tx, params};
use super::{Result, StoreError};
use crate::domain::{JobKind, JobState};
use gitmoot_types::JobNode;

/// What each column of `tree_rows`' select reads, `table.column`, to name a damaged one.
const TREE_COLUMNS: [&str; 15] = [
    "jobs.id",
    "jobs.parent_id",
    "jobs.delegation_id",
    "jobs.kind",
    "jobs.agent",
    "jobs.action",
    "jobs.state",
    "jobs.result",
    "jobs.depth",
    "jobs.started_ms",
    "jobs.finished_ms",
    "jobs.tokens_in",
    "delegations.spec",
    "jobs.created_ms",
    "jobs.attempt",
];

/// Every job of the tree rooted at `root_id`, oldest first, each a tree row of its own (the
/// children are nested by the caller from `parent_id`). A row that does not decode (bad
/// result JSON, an unknown state, text in an integer column) comes back marked
/// `unreadable` with the column named, so one damaged row never hides its tree.
pub fn tree_rows<'a>(tx: impl Into<Tx<'a>>, root_id: &str) -> Result<Vec<JobNode>> {
    tx.into()
        .query_map(TREE_SQL, params![root_id], |r| match tree_row(r) {
            Err(StoreError::Column { index, .. }) => Ok(unreadable_row(
                r,
                TREE_COLUMNS[index.min(TREE_COLUMNS.len() - 1)],
            )),
            row => row,
        })
}

/// `tree_rows`' select. The result is decoded by the row rather than by SQLite's JSON
/// functions: each of those parses the whole document again, and the three a row needed
/// (valid? decision? summary?) were most of what the control room's first load cost. A
/// spec's deps take one such call, guarded, as SQLite fails the whole query on one bad
/// document.
const TREE_SQL: &str =
    "SELECT j.id, j.parent_id, j.delegation_id, j.kind, j.agent, j.action, j.state,
                j.result, j.depth, j.started_ms, j.finished_ms, j.tokens_in + j.tokens_out,
                CASE WHEN json_valid(d.spec) THEN json_extract(d.spec, '$.deps') END,
                j.created_ms, j.attempt
         FROM jobs j
         LEFT JOIN delegations d ON d.parent_id = j.parent_id AND d.delegation_id = j.delegation_id
         WHERE j.root_id = ?1 ORDER BY j.created_ms, j.rowid";

/// What a tree row shows of a job's result; the rest of the document is only checked.
#[derive(Default, serde::Deserialize)]
struct Headline {
    decision: Option<String>,
    summary: Option<String>,
}

fn tree_row(r: &Row<'_>) -> Result<JobNode> {
    let deps: Option<String> = r.get(12)?;
    let headline = r.json::<Option<Headline>>(7)?.flatten().unwrap_or_default();
    Ok(JobNode {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        delegation_id: r.get(2)?,
        kind: r.get(3)?,
        agent: r.get(4)?,
        action: r.get(5)?,
        state: r.get(6)?,
        decision: headline.decision,
        summary: headline.summary,
        depth: r.get(8)?,
        deps: deps
            .and_then(|d| serde_json::from_str(&d).ok())
            .unwrap_or_default(),
        created_ms: r.get(13)?,
        started_ms: r.get(9)?,
        finished_ms: r.get(10)?,
        tokens: r.get::<i64>(11)? as u64,
        attempt: r.get(14)?,
        unreadable: None,
        children: Vec::new(),
    })
}

/// A damaged row as far as it still reads: where it sits in its tree (its depth from its
/// id's path when the depth itself is what broke) and the column that did not decode.
fn unreadable_row(r: &Row<'_>, column: &str) -> JobNode {
    let id: String = r.get(0).unwrap_or_default();
    let parent_id: Option<String> = r.get(1).ok().flatten();
    JobNode {
        kind: r.get(3).unwrap_or(if parent_id.is_none() {
            JobKind::Root
        } else {
            JobKind::Leg
        }),
        parent_id,
        delegation_id: r.get(2).ok().flatten(),
        agent: r.get(4).unwrap_or_default(),
        action: r.get(5).unwrap_or_default(),
        state: r.get(6).unwrap_or(JobState::Failed),
        decision: None,
        summary: None,
        depth: r.get(8).unwrap_or_else(|_| id.matches('/').count() as u32),
        deps: Vec::new(),
        created_ms: r.get(13).unwrap_or(0),
        started_ms: r.get(9).ok().flatten(),
        finished_ms: r.get(10).ok().flatten(),
        tokens: 0,
        attempt: r.get(14).unwrap_or(1),
        unreadable: Some(column.to_string()),
        children: Vec::new(),
        id,
    }
}

/// The newest message, the newest mention, the agents' unread total and the human's: any
/// send, mention or read changes one of them, and each is an index lookup or a sum over
/// the maintained counters.
pub(crate) fn badge_signature<'a>(tx: impl Into<Tx<'a>>) -> Result<(i64, i64, i64, i64)> {
    tx.into().query_row(
        "SELECT (SELECT COALESCE(MAX(rowid), 0) FROM chat_messages),
                (SELECT COALESCE(MAX(id), 0) FROM chat_mentions),
                (SELECT COALESCE(SUM(n), 0) FROM chat_unread),
                (SELECT COALESCE(SUM(unread), 0) FROM chat_seen)",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
}

/// The open escalation rounds' count, id sum and newest id, from the open-rounds index
/// alone: opening or resolving a round changes it.
pub(crate) fn open_rounds_signature<'a>(tx: impl Into<Tx<'a>>) -> Result<(i64, i64, i64)> {
    tx.into().query_row(
        "SELECT COUNT(*), COALESCE(SUM(id), 0), COALESCE(MAX(id), 0) FROM escalations
             WHERE resolved_ms IS NULL",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Whether an event without a root (a thread created, renamed, closed) arrived after
/// `cursor`.
pub(crate) fn unrooted_events_since<'a>(tx: impl Into<Tx<'a>>, cursor: i64) -> Result<bool> {
    tx.into().one(
        "SELECT EXISTS(SELECT 1 FROM events WHERE id > ?1 AND root_id IS NULL)",
        params![cursor],
    )
}

/// The roots of the events after `cursor`, each once, in the order they first changed.
pub(crate) fn touched_roots<'a>(tx: impl Into<Tx<'a>>, cursor: i64) -> Result<Vec<String>> {
    // Walk the new events by rowid and dedupe here: with DISTINCT in SQL the planner scans
    // the whole `events_root` index instead, which costs milliseconds at 500k events.
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    tx.into().query_each(
        "SELECT root_id FROM events WHERE id > ?1 AND root_id IS NOT NULL ORDER BY id",
        params![cursor],
        |r| {
            let root: String = r.get(0)?;
            if seen.insert(root.clone()) {
                out.push(root);
            }
            Ok::<_, super::StoreError>(())
        },
    )?;
    Ok(out)
}

/// Trees waiting on a human.
pub(crate) fn awaiting_runs<'a>(tx: impl Into<Tx<'a>>) -> Result<u32> {
    tx.into().one(
        "SELECT COUNT(*) FROM runs WHERE state = 'awaiting_human'",
        params![],
    )
}

/// A job's agent and its result's summary, without reading the result or output whole.
pub(crate) fn agent_and_summary<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
) -> Result<Option<(String, Option<String>)>> {
    // The summary is picked in Rust, as a tree row's is (`Headline`): a result that is not
    // a JSON object with text in its headline gives none, and the JSON functions that
    // would say so differ by backend.
    tx.into().query_opt(
        "SELECT agent, result FROM jobs WHERE id = ?1",
        params![job_id],
        |r| {
            let result: Option<String> = r.get(1)?;
            let summary = result
                .and_then(|t| serde_json::from_str::<Headline>(&t).ok())
                .and_then(|h| h.summary);
            Ok((r.get(0)?, summary))
        },
    )
}

/// A coordinator whose newest delegation set the preflight refused.
#[derive(Debug, Clone)]
pub(crate) struct PreflightRefusal {
    pub job_id: String,
    pub root_id: String,
    pub reason: String,
    pub ts_ms: i64,
    pub agent: String,
}

/// The newest preflight refusal per coordinator, for trees still live (a finished tree
/// has nothing left to fix).
pub(crate) fn preflight_refusals<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<PreflightRefusal>> {
    tx.into().query_map(
        concat!(
            "SELECT e.job_id, e.root_id, e.message, e.ts_ms, j.agent
             FROM events e
             JOIN jobs j ON j.id = e.job_id
             JOIN runs r ON r.root_id = e.root_id AND r.state IN ('running', 'awaiting_human')
             WHERE e.id IN (SELECT MAX(id) FROM events WHERE kind = '",
            preflight_kind!(),
            "' AND job_id IS NOT NULL GROUP BY job_id)"
        ),
        params![],
        refusal_row,
    )
}

row_columns! {
    fn refusal_row -> PreflightRefusal {
        job_id,
        root_id,
        reason,
        ts_ms,
        agent,
    }
}

/// The state of the job a delegation dispatched, if it has one.
pub(crate) fn leg_state<'a>(
    tx: impl Into<Tx<'a>>,
    parent: &str,
    delegation: &str,
) -> Result<Option<JobState>> {
    tx.into().query_opt(
        "SELECT j.state FROM delegations d JOIN jobs j ON j.id = d.job_id
         WHERE d.parent_id = ?1 AND d.delegation_id = ?2",
        params![parent, delegation],
        |r| r.get(0),
    )
}

#[cfg(test)]
mod tests {
    use crate::domain::{Action, JobKind};
    use crate::store::Store;
    use crate::store::jobs::{self, Job};
    use crate::store::runs;

    /// A store's statements are planned once: the control room reads every tree it shows
    /// through this one statement, and each rebinding must not parse and plan it again.
    #[test]
    fn a_tree_read_again_for_another_root_is_not_planned_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("gitmoot.db")).unwrap();
        let roots: Vec<String> = (0..3).map(|i| format!("job-{i}")).collect();
        store
            .write(|tx| {
                roots.iter().try_for_each(|id| {
                    let (kind, agent) = (JobKind::Root, "a".to_string());
                    let job = Job::queued(
                        id.clone(),
                        id.clone(),
                        kind,
                        agent,
                        Action::Ask,
                        "p".into(),
                        0,
                    );
                    runs::put(tx, &runs::Run::new(id.clone(), "a".into(), None, 0))?;
                    jobs::put(tx, &job)
                })
            })
            .unwrap();
        for root in &roots {
            assert_eq!(super::tree_rows(store.conn(), root).unwrap().len(), 1);
        }
        let conn = store.conn();
        let statement = conn
            .sqlite()
            .unwrap()
            .prepare_cached(super::TREE_SQL)
            .unwrap();
        let replanned = statement.get_status(rusqlite::StatementStatus::RePrepare);
        assert_eq!(
            replanned, 0,
            "the tree statement was planned again on rebinding"
        );
    }
}
