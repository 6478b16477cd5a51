//! The panes of the control room and their names, numbers and column.
//!
//! Owns the `Pane` enum only, so the keymap and the state can both name panes without
//! depending on each other.

/// The five panes of SPEC §9, in `1`–`5` order, then the Agents pane (`6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    Attention,
    Tree,
    Dag,
    Threads,
    Detail,
    Agents,
}

impl Pane {
    pub const ALL: [Pane; 6] = [
        Pane::Attention,
        Pane::Tree,
        Pane::Dag,
        Pane::Threads,
        Pane::Detail,
        Pane::Agents,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pane::Attention => "attention",
            Pane::Tree => "tree",
            Pane::Dag => "dag",
            Pane::Threads => "threads",
            Pane::Detail => "detail",
            Pane::Agents => "agents",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Attention => "Attention",
            Pane::Tree => "Jobs",
            Pane::Dag => "DAG",
            Pane::Threads => "Threads",
            Pane::Detail => "Detail",
            Pane::Agents => "Agents",
        }
    }

    pub fn number(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0) + 1
    }

    /// Whether the pane lives in the right-hand column (one of them shows at a time).
    pub fn is_right(self) -> bool {
        matches!(
            self,
            Pane::Dag | Pane::Threads | Pane::Detail | Pane::Agents
        )
    }
}
