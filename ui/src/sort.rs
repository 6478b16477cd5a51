//! The Job tree's sort keys, k9s's Shift-letters (`A` age, `S` state, `N` agent, `T`
//! spend, `E` elapsed; the same key again reverses), and the order they put roots in.
//!
//! Owns ordering the roots only: legs keep their delegation order under their root, which
//! is how the coordinator wrote them. Must not read the clock (`now_ms` comes in) or
//! change state.

use crate::view::{RootView, RunState, Snapshot};

/// What the roots are ordered by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortKey {
    /// Newest first.
    #[default]
    Age,
    /// What needs a human first, then what runs, then what ended.
    State,
    /// The root's agent, A to Z.
    Agent,
    /// The most spent (USD, then tokens) first.
    Spend,
    /// The longest-running first.
    Elapsed,
}

impl SortKey {
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Age => "age",
            SortKey::State => "state",
            SortKey::Agent => "agent",
            SortKey::Spend => "spend",
            SortKey::Elapsed => "elapsed",
        }
    }
}

/// The tree's order: a key and whether the operator reversed it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeSort {
    pub key: SortKey,
    pub reversed: bool,
}

impl TreeSort {
    /// The order after pressing `key`: the same key flips it, another starts it forward.
    pub fn press(self, key: SortKey) -> TreeSort {
        TreeSort {
            key,
            reversed: key == self.key && !self.reversed,
        }
    }

    /// What the tree's title says of the order; empty for the default (newest first).
    pub fn note(self) -> String {
        match (self.key, self.reversed) {
            (SortKey::Age, false) => String::new(),
            (key, false) => format!("by {}", key.name()),
            (key, true) => format!("by {}, reversed", key.name()),
        }
    }

    /// The snapshot's roots in this order (ties newest first, then by id).
    pub fn roots(self, snap: &Snapshot, now_ms: i64) -> Vec<&RootView> {
        let mut v = snap.roots_newest_first();
        let elapsed = |r: &RootView| r.finished_ms.unwrap_or(now_ms) - r.created_ms;
        v.sort_by(|a, b| {
            let o = match self.key {
                SortKey::Age => std::cmp::Ordering::Equal,
                SortKey::State => state_rank(a.state).cmp(&state_rank(b.state)),
                SortKey::Agent => a.tree.agent.cmp(&b.tree.agent),
                SortKey::Spend => b
                    .cost_usd
                    .total_cmp(&a.cost_usd)
                    .then(b.tokens.cmp(&a.tokens)),
                SortKey::Elapsed => elapsed(b).cmp(&elapsed(a)),
            };
            if self.reversed { o.reverse() } else { o }
        });
        if self.reversed && self.key == SortKey::Age {
            v.reverse();
        }
        v
    }
}

/// Where a root's state sorts: a human's turn first, what ended last.
fn state_rank(s: RunState) -> u8 {
    match s {
        RunState::AwaitingHuman => 0,
        RunState::Blocked => 1,
        RunState::Running => 2,
        RunState::Failed => 3,
        RunState::Killed => 4,
        RunState::Aborted => 5,
        RunState::Done => 6,
    }
}
