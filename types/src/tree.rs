//! The tree row the control room draws: one job with the light columns a row shows, its
//! children nested below it, and the counts of a subtree.
//!
//! Owns the shape and walking it; reading rows is the store's, drawing them the ui's.

use serde::Serialize;

use crate::job::{JobKind, JobState};

/// Counts of a subtree's jobs. `done` is succeeded; `failed` is failed, blocked or
/// cancelled — the ones a human may have to look at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Rollup {
    pub running: u32,
    pub queued: u32,
    pub done: u32,
    pub failed: u32,
}

impl Rollup {
    pub fn total(&self) -> u32 {
        self.running + self.queued + self.done + self.failed
    }
}

/// One job in a root's tree: no result body, no output, so a tree of thousands reads fast.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobNode {
    pub id: String,
    /// `None` for the root; the store fills it so the rows can be nested.
    pub parent_id: Option<String>,
    pub kind: JobKind,
    pub delegation_id: Option<String>,
    pub agent: String,
    pub action: String,
    pub state: JobState,
    pub decision: Option<String>,
    pub summary: Option<String>,
    pub depth: u32,
    /// Delegation ids of the siblings this job waits for (the leg's `deps`).
    pub deps: Vec<String>,
    /// When the job was queued (a queued row shows its wait since then).
    pub created_ms: i64,
    pub started_ms: Option<i64>,
    pub finished_ms: Option<i64>,
    pub tokens: u64,
    /// 1 for a leg's first run; a retry counts up (shown as `integration.2`).
    pub attempt: u32,
    /// The column (`table.column`) the store could not read when its row is damaged: the
    /// row is drawn marked `unreadable`, stays selectable, and counts in no rollup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    pub children: Vec<JobNode>,
}

impl JobNode {
    /// Counts of this node and every descendant.
    pub fn rollup(&self) -> Rollup {
        let mut r = Rollup::default();
        self.walk(&mut |n| match n.state {
            _ if n.unreadable.is_some() => {}
            JobState::Running => r.running += 1,
            // Waiting, for a daemon or (interrupted) for a human.
            JobState::Queued | JobState::Interrupted => r.queued += 1,
            JobState::Succeeded => r.done += 1,
            JobState::Failed | JobState::Blocked | JobState::Cancelled => r.failed += 1,
        });
        r
    }

    /// Visits this node and every descendant, parents first.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a JobNode)) {
        f(self);
        for c in &self.children {
            c.walk(f);
        }
    }

    /// Every job below (and including) this one has settled.
    pub fn is_settled(&self) -> bool {
        self.state.is_terminal() && self.children.iter().all(JobNode::is_settled)
    }

    pub fn find(&self, id: &str) -> Option<&JobNode> {
        if self.id == id {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find(id))
    }
}
