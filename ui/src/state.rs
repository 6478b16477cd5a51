//! The control room's UI state: focus, selections, folds, overlays, toasts, clock.
//!
//! Owns what the operator has done to the view, never the data itself (that is the
//! [`Snapshot`](crate::view::Snapshot)). Selections are stored as ids so they stay on the
//! same job, thread or message across refreshes. Must not perform effects: only
//! [`update`](crate::update::update) mutates it and returns actions for the glue.

use std::collections::BTreeMap;

use ratatui_textarea::TextArea;

use crate::action::{PromoteAction, ResumeVerb};
use crate::keymap::Keymap;
use crate::view::Question;

/// The five panes of SPEC §9, in `1`–`5` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    Attention,
    Tree,
    Dag,
    Threads,
    Detail,
}

impl Pane {
    pub const ALL: [Pane; 5] = [
        Pane::Attention,
        Pane::Tree,
        Pane::Dag,
        Pane::Threads,
        Pane::Detail,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pane::Attention => "attention",
            Pane::Tree => "tree",
            Pane::Dag => "dag",
            Pane::Threads => "threads",
            Pane::Detail => "detail",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Attention => "Attention",
            Pane::Tree => "Jobs",
            Pane::Dag => "DAG",
            Pane::Threads => "Threads",
            Pane::Detail => "Detail",
        }
    }

    pub fn number(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0) + 1
    }

    /// Whether the pane lives in the right-hand column (one of them shows at a time).
    pub fn is_right(self) -> bool {
        matches!(self, Pane::Dag | Pane::Threads | Pane::Detail)
    }
}

/// The three lists of the Threads pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Threads,
    Inbox,
    Transcript,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToastLevel {
    Info,
    Success,
    Error,
}

/// A short message in the corner that expires by itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Toast {
    pub level: ToastLevel,
    pub text: String,
    pub expires_ms: i64,
}

/// How long a toast stays up.
pub const TOAST_MS: i64 = 4_000;

/// What a confirmation dialog will do when the operator presses `y` (or `F`).
#[derive(Debug, Clone, PartialEq)]
pub enum Confirm {
    /// `job kill`; the counts are what the dialog explains.
    KillRoot {
        root_id: String,
        title: String,
        queued: u32,
        running: u32,
    },
    CancelJob {
        job_id: String,
    },
    Abort {
        job_id: String,
    },
    /// Quitting while this control room's daemon has work: detach, wait or kill.
    Quit {
        running: u32,
        queued: u32,
    },
}

/// One question's field of the answer form.
#[derive(Debug, Clone)]
pub struct AnswerField {
    pub question: Question,
    /// The highlighted choice, when the question has choices.
    pub choice: usize,
    pub text: TextArea<'static>,
}

impl AnswerField {
    pub fn has_choices(&self) -> bool {
        !self.question.choices.is_empty()
    }

    /// The answer as it would be sent.
    pub fn value(&self) -> String {
        if self.has_choices() {
            self.question
                .choices
                .get(self.choice)
                .cloned()
                .unwrap_or_default()
        } else {
            self.text.lines().join("\n").trim().to_string()
        }
    }
}

/// Modal layers over the panes; each captures keys until it closes (Ctrl-c still quits).
#[derive(Debug, Clone)]
pub enum Overlay {
    Help {
        scroll: u16,
    },
    Confirm(Confirm),
    Answer {
        job_id: String,
        fields: Vec<AnswerField>,
        focus: usize,
    },
    /// Instructions for `retry` or `continue`.
    Instructions {
        job_id: String,
        verb: ResumeVerb,
        text: TextArea<'static>,
    },
    Compose {
        thread_id: String,
        reply_to: Option<u64>,
        text: TextArea<'static>,
        agents: Vec<String>,
    },
    Promote {
        thread_id: String,
        seq: u64,
        choice: usize,
    },
    /// Quitting is under way: waiting for the work to finish (`kill` false) or for the
    /// daemon's graceful kill to end; the frame shows what is left.
    Stopping {
        kill: bool,
    },
}

impl Overlay {
    pub fn promote_action(choice: usize) -> PromoteAction {
        PromoteAction::ALL[choice.min(PromoteAction::ALL.len() - 1)]
    }
}

/// Selections by id, plus the index they had, so a vanished id falls to its neighbour.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selections {
    pub attention: Option<String>,
    pub tree: Option<String>,
    pub dag: Option<String>,
    pub thread: Option<String>,
    pub inbox: Option<String>,
    pub message: Option<u64>,
    pub hints: BTreeMap<Pane, usize>,
}

/// Everything the operator has done to the view.
#[derive(Debug, Clone)]
pub struct State {
    pub keymap: Keymap,
    pub readonly: bool,
    pub focus: Pane,
    /// Which right-column pane shows when the focus is on the left.
    pub right: Pane,
    /// Where Esc in the Detail drawer goes back to.
    pub return_to: Pane,
    pub zoom: bool,
    pub sel: Selections,
    pub section: Section,
    /// Explicit fold choices (`true` folded); absent means "settled subtrees fold".
    pub folds: BTreeMap<String, bool>,
    pub filter: String,
    pub filter_editing: bool,
    /// The `:` line while it is open.
    pub command: Option<String>,
    pub overlay: Option<Overlay>,
    pub toasts: Vec<Toast>,
    /// The job the Detail drawer shows.
    pub detail_job: Option<String>,
    pub detail_scroll: u16,
    /// The drawer's tab (overview or the job's live activity).
    pub detail_tab: crate::live::DetailTab,
    /// The selected step of the Activity tab; `None` follows the newest (like `tail -f`).
    pub activity_sel: Option<u64>,
    /// The selected step's detail is shown.
    pub activity_open: bool,
    /// The root the DAG shows; follows the tree selection.
    pub dag_root: Option<String>,
    pub now_ms: i64,
    /// Spinner frame counter, advanced by `Event::Tick`.
    pub tick: u64,
    /// Terminal size (columns, rows), from `Event::Resize`.
    pub size: (u16, u16),
    /// Set once the first snapshot has chosen the landing pane.
    pub landed: bool,
    /// The operator has pressed a key; from then on focus moves only when they move it.
    pub touched: bool,
}

impl State {
    pub fn new(keymap: Keymap, readonly: bool, now_ms: i64) -> Self {
        State {
            keymap,
            readonly,
            focus: Pane::Attention,
            right: Pane::Dag,
            return_to: Pane::Tree,
            zoom: false,
            sel: Selections::default(),
            section: Section::Threads,
            folds: BTreeMap::new(),
            filter: String::new(),
            filter_editing: false,
            command: None,
            overlay: None,
            toasts: Vec::new(),
            detail_job: None,
            detail_scroll: 0,
            detail_tab: crate::live::DetailTab::Overview,
            activity_sel: None,
            activity_open: false,
            dag_root: None,
            now_ms,
            tick: 0,
            size: (120, 36),
            landed: false,
            touched: false,
        }
    }

    /// Shows a toast (the glue uses this to report an action's outcome).
    pub fn notify(&mut self, level: ToastLevel, text: impl Into<String>) {
        let text = text.into();
        self.toasts.retain(|t| t.text != text);
        self.toasts.push(Toast {
            level,
            text,
            expires_ms: self.now_ms + TOAST_MS,
        });
        if self.toasts.len() > 3 {
            self.toasts.remove(0);
        }
    }

    /// The thread whose transcript the glue should keep loaded.
    pub fn open_thread(&self) -> Option<&str> {
        self.sel.thread.as_deref()
    }

    /// The job whose detail the glue should keep loaded.
    pub fn detail_job(&self) -> Option<&str> {
        self.detail_job.as_deref()
    }

    /// The pane the right column shows now.
    pub fn right_pane(&self) -> Pane {
        if self.focus.is_right() {
            self.focus
        } else {
            self.right
        }
    }
}
