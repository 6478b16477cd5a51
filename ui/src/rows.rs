//! Visible rows of each list pane, derived from a snapshot and the UI state.
//!
//! Owns folding, filtering and ordering, so `update` (moving selections, mouse hits) and
//! the widgets (drawing) always agree on what row N is. Must not draw or mutate state.

use crate::live::Step;
use crate::search::Filter;
use crate::state::{FilterScope, State};
use crate::view::{
    AttentionItem, AttentionKind, Inbox, JobKind, JobNode, Message, RootView, Snapshot, ThreadView,
};

/// One line of the job tree.
#[derive(Debug, Clone, Copy)]
pub struct TreeRow<'a> {
    pub root: &'a RootView,
    pub node: &'a JobNode,
    /// Indentation level (0 for roots).
    pub level: usize,
    pub folded: bool,
    /// Whether this is the last child of its parent (for the tree guides).
    pub last: bool,
    /// For each ancestor level, whether a guide line continues below.
    pub guides: [bool; 16],
}

fn job_haystack(root: &RootView, n: &JobNode) -> String {
    format!(
        "{} {} {} {} {}",
        n.id,
        n.agent,
        root.repo.as_deref().unwrap_or(""),
        n.state.as_str(),
        n.action
    )
}

/// Whether `node` is folded: the operator's choice, else folded when its subtree settled
/// (a root folds when its run is over).
pub fn is_folded(state: &State, root: &RootView, node: &JobNode) -> bool {
    if node.children.is_empty() {
        return false;
    }
    if let Some(f) = state.folds.get(&node.id) {
        return *f;
    }
    if node.kind == JobKind::Root {
        root.state.is_terminal()
    } else {
        node.is_settled()
    }
}

/// The tree's visible rows: roots newest first (by group first in the grouped view), then
/// their children in order. While a filter is active, folds are ignored and a node shows
/// if it or a descendant matches.
pub fn tree_rows<'a>(snap: &'a Snapshot, state: &State) -> Vec<TreeRow<'a>> {
    let mut filter = Filter::new(state.filter_for(FilterScope::Jobs));
    let mut out = Vec::new();
    let roots: Vec<&RootView> = match state.grouped {
        true => crate::groups::ordered(snap, state.now_ms)
            .into_iter()
            .map(|(_, r)| r)
            .collect(),
        false => state.tree_sort.roots(snap, state.now_ms),
    };
    for root in roots {
        push_node(
            &mut out,
            root,
            &root.tree,
            0,
            true,
            [false; 16],
            state,
            &mut filter,
        );
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn push_node<'a>(
    out: &mut Vec<TreeRow<'a>>,
    root: &'a RootView,
    node: &'a JobNode,
    level: usize,
    last: bool,
    guides: [bool; 16],
    state: &State,
    filter: &mut Filter,
) {
    if filter.is_active() && !subtree_matches(root, node, filter) {
        return;
    }
    let folded = !filter.is_active() && is_folded(state, root, node);
    out.push(TreeRow {
        root,
        node,
        level,
        folded,
        last,
        guides,
    });
    if folded {
        return;
    }
    let kids: Vec<&JobNode> = if filter.is_active() {
        node.children
            .iter()
            .filter(|c| subtree_matches(root, c, filter))
            .collect()
    } else {
        node.children.iter().collect()
    };
    let mut g = guides;
    if level > 0 && level < 16 {
        g[level] = !last;
    }
    for (i, c) in kids.iter().enumerate() {
        push_node(
            out,
            root,
            c,
            level + 1,
            i + 1 == kids.len(),
            g,
            state,
            filter,
        );
    }
}

fn node_matches(root: &RootView, node: &JobNode, filter: &mut Filter) -> bool {
    let mut title = job_haystack(root, node);
    if node.kind == JobKind::Root {
        title.push(' ');
        title.push_str(&root.title);
    }
    filter.matches(&title)
}

fn subtree_matches(root: &RootView, node: &JobNode, filter: &mut Filter) -> bool {
    node_matches(root, node, filter)
        || node
            .children
            .iter()
            .any(|c| subtree_matches(root, c, filter))
}

/// The Activity tab's steps, oldest first; under an Activity filter only those whose
/// summary or detail matches.
pub fn activity_rows<'a>(steps: &'a [Step], state: &State) -> Vec<&'a Step> {
    let mut filter = Filter::new(state.filter_for(FilterScope::Activity));
    steps
        .iter()
        .filter(|s| {
            filter.matches(&s.summary) || s.detail.as_deref().is_some_and(|d| filter.matches(d))
        })
        .collect()
}

/// How many jobs the tree's filter matched (not counting the ancestors shown for their
/// context) of all the jobs loaded: the pane title's `n of m`.
pub fn tree_matches(snap: &Snapshot, state: &State) -> (usize, usize) {
    fn walk(root: &RootView, n: &JobNode, f: &mut Filter, acc: &mut (usize, usize)) {
        acc.0 += usize::from(node_matches(root, n, f));
        acc.1 += 1;
        for c in &n.children {
            walk(root, c, f, acc);
        }
    }
    let text = state.filter_for(FilterScope::Jobs);
    let mut acc = (0, 0);
    // Only a typed filter shows the count: an unfiltered frame must not walk every job.
    if text.trim().is_empty() {
        return acc;
    }
    let mut filter = Filter::new(text);
    for root in &snap.roots {
        walk(root, &root.tree, &mut filter, &mut acc);
    }
    acc
}

/// Attention items, oldest gate first (it has waited longest), filtered.
pub fn attention_rows<'a>(snap: &'a Snapshot, state: &State) -> Vec<&'a AttentionItem> {
    let mut filter = Filter::new(state.filter_for(FilterScope::Jobs));
    let mut v: Vec<&AttentionItem> = snap
        .attention
        .iter()
        .filter(|a| {
            let repo = snap
                .root(&a.root_id)
                .and_then(|r| r.repo.as_deref())
                .unwrap_or("");
            let kind = match a.kind {
                AttentionKind::Ask { .. } => "ask awaiting",
                AttentionKind::Failure { .. } => "failure failed",
                AttentionKind::Preflight { .. } => "preflight unroutable",
                AttentionKind::Overlap { .. } => "overlap",
                AttentionKind::Conflict { .. } => "conflict",
                AttentionKind::Stall { .. } => "stalled",
            };
            filter.matches(&format!("{} {} {} {}", a.job_id, a.agent, repo, kind))
        })
        .collect();
    v.sort_by(|a, b| a.opened_ms.cmp(&b.opened_ms).then(a.job_id.cmp(&b.job_id)));
    v
}

/// Threads, most recent activity first, filtered: a thread shows when its name matches or
/// when it is the open thread and one of its messages does (a search for words said in a
/// thread must not hide that thread).
pub fn thread_rows<'a>(snap: &'a Snapshot, state: &State) -> Vec<&'a ThreadView> {
    let mut filter = Filter::new(state.filter_for(FilterScope::Threads));
    let said_here = filter.is_active() && !message_rows(snap, state).is_empty();
    let mut v: Vec<&ThreadView> = snap
        .threads
        .iter()
        .filter(|t| {
            let st = match t.state {
                crate::view::ThreadState::Open => "open",
                crate::view::ThreadState::Archived => "closed",
            };
            filter.matches(&format!(
                "{} {} {} {} {}",
                t.id,
                t.slug,
                t.title,
                t.repo.as_deref().unwrap_or(""),
                st
            )) || (said_here && state.sel.thread.as_ref() == Some(&t.id))
        })
        .collect();
    v.sort_by(|a, b| {
        b.last_activity_ms
            .cmp(&a.last_activity_ms)
            .then(a.id.cmp(&b.id))
    });
    v
}

/// Agents' inboxes, most unread first.
pub fn inbox_rows(snap: &Snapshot) -> Vec<&Inbox> {
    let mut v: Vec<&Inbox> = snap.inboxes.iter().collect();
    v.sort_by(|a, b| b.unread.cmp(&a.unread).then(a.agent.cmp(&b.agent)));
    v
}

/// The open thread's messages, when the loaded transcript is the selected thread's; under
/// a Threads filter only those whose author or text matches.
pub fn message_rows<'a>(snap: &'a Snapshot, state: &State) -> Vec<&'a Message> {
    let mut filter = Filter::new(state.filter_for(FilterScope::Threads));
    all_messages(snap, state)
        .into_iter()
        .filter(|m| filter.matches(&format!("{} {}", m.author, m.body)))
        .collect()
}

/// The open thread's messages, unfiltered (the `m` of the transcript's `n of m`).
pub fn all_messages<'a>(snap: &'a Snapshot, state: &State) -> Vec<&'a Message> {
    match (&snap.transcript, &state.sel.thread) {
        (Some(t), Some(id)) if &t.thread_id == id => t.messages.iter().collect(),
        _ => Vec::new(),
    }
}

/// One node of the DAG, with its layer (0 = coordinator).
#[derive(Debug, Clone)]
pub struct DagNode<'a> {
    pub node: &'a JobNode,
    pub layer: usize,
    /// Ids of the nodes it has an edge from.
    pub from: Vec<&'a str>,
}

/// The delegation DAG of one root: coordinator in layer 0, legs by dependency depth, the
/// continuation (and finalize) after the deepest leg. Edges: parent → legs without deps,
/// dep → dependent, legs nothing depends on → continuation. Nodes are ordered by layer,
/// then by the coordinator's delegation order.
pub fn dag_nodes(root: &RootView) -> Vec<DagNode<'_>> {
    let coord = &root.tree;
    let legs: Vec<&JobNode> = coord
        .children
        .iter()
        .filter(|c| c.kind == JobKind::Leg)
        .collect();
    let tails: Vec<&JobNode> = coord
        .children
        .iter()
        .filter(|c| c.kind != JobKind::Leg)
        .collect();
    let by_delegation = |d: &str| {
        legs.iter()
            .find(|l| l.delegation_id.as_deref() == Some(d))
            .copied()
    };
    let mut layer: Vec<usize> = vec![0; legs.len()];
    // Longest-path layering; deps form a DAG (validated upstream), so |legs| rounds settle it.
    for _ in 0..legs.len() {
        for (i, l) in legs.iter().enumerate() {
            let want = 1 + l
                .deps
                .iter()
                .filter_map(|d| {
                    legs.iter()
                        .position(|x| x.delegation_id.as_deref() == Some(d))
                })
                .map(|j| layer[j])
                .max()
                .unwrap_or(0);
            layer[i] = want;
        }
    }
    let mut out = vec![DagNode {
        node: coord,
        layer: 0,
        from: Vec::new(),
    }];
    let depth = layer.iter().copied().max().unwrap_or(0);
    for (i, l) in legs.iter().enumerate() {
        let deps: Vec<&str> = l
            .deps
            .iter()
            .filter_map(|d| by_delegation(d))
            .map(|n| n.id.as_str())
            .collect();
        let from = if deps.is_empty() {
            vec![coord.id.as_str()]
        } else {
            deps
        };
        out.push(DagNode {
            node: l,
            layer: layer[i],
            from,
        });
    }
    let sinks: Vec<&str> = legs
        .iter()
        .filter(|l| {
            let d = l.delegation_id.as_deref();
            !legs
                .iter()
                .any(|o| o.deps.iter().any(|x| Some(x.as_str()) == d))
        })
        .map(|l| l.id.as_str())
        .collect();
    for (i, t) in tails.iter().enumerate() {
        let from = if i == 0 {
            if sinks.is_empty() {
                vec![coord.id.as_str()]
            } else {
                sinks.clone()
            }
        } else {
            vec![tails[i - 1].id.as_str()]
        };
        out.push(DagNode {
            node: t,
            layer: depth + 1 + i,
            from,
        });
    }
    out.sort_by_key(|n| n.layer);
    out
}

/// The root the DAG pane shows: the chosen one, else the tree selection's, else the
/// newest live root, else the newest.
pub fn dag_root<'a>(snap: &'a Snapshot, state: &State) -> Option<&'a RootView> {
    if let Some(r) = state.dag_root.as_deref().and_then(|id| snap.root(id)) {
        return Some(r);
    }
    if let Some(r) = state.sel.tree.as_deref().and_then(|id| snap.root_of(id)) {
        return Some(r);
    }
    let roots = snap.roots_newest_first();
    roots
        .iter()
        .find(|r| !r.state.is_terminal())
        .or(roots.first())
        .copied()
}

/// First visible row of a list so that `selected` stays on screen (stateless scrolling,
/// shared by drawing and mouse hit-testing).
pub fn scroll_offset(selected: usize, height: usize) -> usize {
    if height == 0 {
        0
    } else {
        (selected + 1).saturating_sub(height)
    }
}
