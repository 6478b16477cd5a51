//! The job tree's grouped view (`v`): roots by what they need, like `claude agents`:
//! *needs you* (waiting for a human, a gate or a stall in their tree, an interrupted or
//! overlapping job, a run that failed or blocked today), *working*, *done today*. Roots
//! that ended before today are left out; the default view stays the whole tree.
//!
//! Owns the classification only; `rows::tree_rows` orders by it and the tree widget draws
//! the group headings.

use crate::view::{JobState, RootView, RunState, Snapshot};

/// A day in milliseconds; "today" starts at 00:00 UTC, as the status bar's spend does.
const DAY_MS: i64 = 86_400_000;

/// The groups, in the order the view shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    NeedsYou,
    Working,
    DoneToday,
}

impl Group {
    pub const ALL: [Group; 3] = [Group::NeedsYou, Group::Working, Group::DoneToday];

    pub fn title(self) -> &'static str {
        match self {
            Group::NeedsYou => "Needs you",
            Group::Working => "Working",
            Group::DoneToday => "Done today",
        }
    }
}

/// Where `root` goes at `now`; `None` for a root that ended before today.
pub fn group_of(snap: &Snapshot, root: &RootView, now: i64) -> Option<Group> {
    let today = root
        .finished_ms
        .is_some_and(|f| f >= now - now.rem_euclid(DAY_MS));
    let mut interrupted = false;
    root.tree
        .walk(&mut |n| interrupted |= n.state == JobState::Interrupted);
    let waits = root.state == RunState::AwaitingHuman
        || interrupted
        || snap.attention.iter().any(|a| a.root_id == root.id)
        || (today && matches!(root.state, RunState::Failed | RunState::Blocked));
    match root.state {
        _ if waits => Some(Group::NeedsYou),
        s if !s.is_terminal() => Some(Group::Working),
        _ if today => Some(Group::DoneToday),
        _ => None,
    }
}

/// The roots in group order, newest first within each group, with their group.
pub fn ordered(snap: &Snapshot, now: i64) -> Vec<(Group, &RootView)> {
    let roots = snap.roots_newest_first();
    Group::ALL
        .iter()
        .flat_map(|g| {
            roots
                .iter()
                .filter(move |r| group_of(snap, r, now) == Some(*g))
                .map(move |r| (*g, *r))
        })
        .collect()
}

/// How many roots each group holds, in `Group::ALL` order.
pub fn counts(snap: &Snapshot, now: i64) -> [usize; 3] {
    let mut n = [0; 3];
    for r in &snap.roots {
        if let Some(g) = group_of(snap, r, now) {
            n[Group::ALL.iter().position(|x| *x == g).unwrap_or(0)] += 1;
        }
    }
    n
}
