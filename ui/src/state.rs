//! The control room's UI state: focus, selections, folds, overlays, the messages log, the
//! `:` line's history and completions, clock.
//!
//! Owns what the operator has done to the view, never the data itself (that is the
//! [`Snapshot`](crate::view::Snapshot)). Selections are stored as ids so they stay on the
//! same job, thread or message across refreshes. Must not perform effects: only
//! [`update`](crate::update::update) mutates it and returns actions for the glue.

use std::collections::{BTreeMap, BTreeSet};

use ratatui_textarea::TextArea;

use crate::action::{PromoteAction, ResumeVerb};
use crate::complete::CompletionTree;
use crate::keymap::Keymap;
use crate::view::Question;

// Pane lives in its own file so the keymap can name panes without depending on state.
pub use crate::pane::Pane;

/// The three lists of the Threads pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Threads,
    Inbox,
    Transcript,
}

/// The view the `/` filter narrows: the one that had the focus when `/` was pressed (the
/// Diff tab and the help overlay search on their own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FilterScope {
    /// The Attention and Job tree panes (and the DAG's root).
    #[default]
    Jobs,
    /// The thread list and the open thread's transcript.
    Threads,
    /// The Detail drawer's Activity tab.
    Activity,
}

/// How a message reads on the bar: a write that landed, a plain note, something that
/// landed but needs a look (a mention nobody will receive), or a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToastLevel {
    Info,
    Success,
    Warning,
    Error,
}

/// One result or error, kept whole in the messages log; the newest shows in the message
/// bar until `bar_until_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    pub level: ToastLevel,
    pub text: String,
    pub at_ms: i64,
}

/// How long the newest message stays on the message bar.
pub const BAR_MS: i64 = 6_000;

/// How many messages the log keeps (oldest dropped first).
pub const LOG_CAP: usize = 500;

/// How many `:` lines the history keeps.
pub const HISTORY_CAP: usize = 200;

/// The full output of a `:` command line, as the glue ran it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandOutput {
    /// The line as typed (without `gitmoot`).
    pub command: String,
    pub ok: bool,
    /// Everything it printed (stdout on success, stderr on failure).
    pub text: String,
}

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
    /// Quitting while this control room's daemon has work: detach, wait or kill. The work
    /// it names is the snapshot's, drawn as it changes.
    Quit,
    /// `job land`: the strategy is picked in the dialog (↑/↓); the rest is what it says.
    Land {
        job_id: String,
        strategy: crate::work::LandStrategy,
        branch: String,
        base: String,
        files: usize,
        added: u64,
        removed: u64,
        /// What its forecast says against the base's tip: `would conflict in F:2 with work
        /// landed on main`, said before `y`.
        conflict: Option<String>,
    },
    /// `job discard`; `loss` is what `job discard` states it loses.
    Discard {
        job_id: String,
        loss: String,
    },
    /// One verb on every marked job: `lines` says what each will do (or why it will be
    /// refused), in the order the jobs are acted on.
    Bulk {
        verb: crate::action::BulkVerb,
        job_ids: Vec<String>,
        lines: Vec<String>,
    },
    /// One choice given to every marked job's question (`job answer --where … --choice`):
    /// ↑/↓ pick among `choices` (the selected row's question's), and `lines[at]` says what
    /// each job will do with `choices[at]`.
    BulkAnswer {
        job_ids: Vec<String>,
        choices: Vec<String>,
        at: usize,
        lines: Vec<Vec<String>>,
    },
    /// `job review` with the comments attached in the Diff tab.
    Review {
        job_id: String,
        agent: String,
        round: u32,
        comments: Vec<String>,
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
    /// The keys help; `query` narrows its rows (`/`), typed while `typing`.
    Help {
        scroll: u16,
        query: String,
        typing: bool,
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
    /// The messages log (`L` or `:messages`): every result and error in full.
    Messages {
        scroll: u16,
    },
    /// The full output of a `:` read verb, scrollable.
    Output {
        title: String,
        text: String,
        scroll: u16,
    },
    /// A review comment on one line of the Diff tab (`anchor` is its `path:line`).
    Comment {
        job_id: String,
        anchor: String,
        text: TextArea<'static>,
    },
    /// The Search view (`Ctrl-f`): the query, typed while `typing`, and the selected hit.
    Search {
        query: String,
        typing: bool,
        sel: usize,
    },
    /// The Usage view (`$`): the selected row, its roots first, then its agents.
    Usage {
        sel: usize,
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
    /// The Agents pane's row, by agent name.
    pub agent: Option<String>,
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
    /// The order of the Job tree's roots.
    pub tree_sort: crate::sort::TreeSort,
    /// Explicit fold choices (`true` folded); absent means "settled subtrees fold".
    pub folds: BTreeMap<String, bool>,
    pub filter: String,
    pub filter_editing: bool,
    pub filter_scope: FilterScope,
    /// The `:` line while it is open.
    pub command: Option<String>,
    /// `:` lines run before, oldest first (the glue loads and persists them).
    pub history: Vec<String>,
    /// Where ↑/↓ is in `history` while the line is open.
    pub history_pos: Option<usize>,
    /// The CLI tree Tab completes from.
    pub completions: CompletionTree,
    /// What Tab offered when it could not pick one (shown after the `:` line).
    pub candidates: Vec<String>,
    pub overlay: Option<Overlay>,
    /// Every result and error, oldest first.
    pub messages: Vec<LogEntry>,
    /// The newest message shows on the bar until then.
    pub bar_until_ms: i64,
    /// Esc was pressed once on a non-empty draft; a second Esc discards it.
    pub discard_armed: bool,
    /// The job the Detail drawer shows.
    pub detail_job: Option<String>,
    pub detail_scroll: u16,
    /// The drawer's tab (overview or the job's live activity).
    pub detail_tab: crate::live::DetailTab,
    /// The selected step of the Activity tab; `None` follows the newest (like `tail -f`).
    pub activity_sel: Option<u64>,
    /// The selected step's detail is shown.
    pub activity_open: bool,
    /// Long steps wrap onto more lines instead of being cut (`w`).
    pub activity_wrap: bool,
    /// Where the operator is in the Diff tab, and the review comments not yet sent.
    pub diff: crate::work::DiffCursor,
    /// The root the DAG shows; follows the tree selection.
    pub dag_root: Option<String>,
    /// The tree grouped by what needs you (`v`), instead of the whole tree.
    pub grouped: bool,
    /// Jobs marked in the tree to act on together (cancel, kill, retry, answer, land,
    /// discard).
    pub marks: BTreeSet<String>,
    pub now_ms: i64,
    /// Spinner frame counter, advanced by `Event::Tick`.
    pub tick: u64,
    /// Terminal size (columns, rows), from `Event::Resize`.
    pub size: (u16, u16),
    /// Set once the first snapshot has chosen the landing pane.
    pub landed: bool,
    /// The operator has pressed a key; from then on focus moves only when they move it.
    pub touched: bool,
    /// The last read position reported for the open thread, so it is sent once.
    pub seen_sent: Option<(String, u64)>,
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
            tree_sort: crate::sort::TreeSort::default(),
            folds: BTreeMap::new(),
            filter: String::new(),
            filter_editing: false,
            filter_scope: FilterScope::Jobs,
            command: None,
            history: Vec::new(),
            history_pos: None,
            completions: CompletionTree::default(),
            candidates: Vec::new(),
            overlay: None,
            messages: Vec::new(),
            bar_until_ms: 0,
            discard_armed: false,
            detail_job: None,
            detail_scroll: 0,
            detail_tab: crate::live::DetailTab::Overview,
            activity_sel: None,
            activity_open: false,
            activity_wrap: false,
            diff: crate::work::DiffCursor::default(),
            dag_root: None,
            grouped: false,
            marks: BTreeSet::new(),
            now_ms,
            tick: 0,
            size: (120, 36),
            landed: false,
            touched: false,
            seen_sent: None,
        }
    }

    /// Logs a result or error in full and shows it on the message bar (the glue uses this
    /// to report an action's outcome).
    pub fn notify(&mut self, level: ToastLevel, text: impl Into<String>) {
        self.messages.push(LogEntry {
            level,
            text: text.into(),
            at_ms: self.now_ms,
        });
        if self.messages.len() > LOG_CAP {
            self.messages.remove(0);
        }
        self.bar_until_ms = self.now_ms + BAR_MS;
    }

    /// The message the bar shows now, if one is fresh.
    pub fn bar_message(&self) -> Option<&LogEntry> {
        self.messages
            .last()
            .filter(|_| self.now_ms < self.bar_until_ms)
    }

    /// Reports a `:` command's output: logged whole; output longer than one line opens in
    /// a scrollable view (unless a dialog is open), one line goes to the bar.
    pub fn command_output(&mut self, out: CommandOutput) {
        let text = out.text.trim_end().to_string();
        let level = if out.ok {
            ToastLevel::Info
        } else {
            ToastLevel::Error
        };
        let shown = if text.is_empty() { "done" } else { &text };
        // One line reads result first (the part that matters on a narrow bar).
        let entry = if text.lines().count() > 1 {
            format!(":{}\n{shown}", out.command)
        } else {
            format!("{shown}  ← :{}", out.command)
        };
        self.notify(level, entry);
        if text.lines().count() > 1 && self.overlay.is_none() {
            self.overlay = Some(Overlay::Output {
                title: format!(":{}", out.command),
                text,
                scroll: 0,
            });
        }
    }

    /// Remembers a `:` line for ↑/↓ (the glue persists the same line in the home).
    pub fn remember(&mut self, line: &str) {
        self.history.retain(|h| h != line);
        self.history.push(line.to_string());
        if self.history.len() > HISTORY_CAP {
            self.history.remove(0);
        }
    }

    /// The typed filter when it narrows `scope`, else nothing.
    pub fn filter_for(&self, scope: FilterScope) -> &str {
        if self.filter_scope == scope {
            &self.filter
        } else {
            ""
        }
    }

    /// Opens the `/` line for the focused view; a filter another view had is dropped.
    pub fn start_filter(&mut self) {
        let scope = match self.focus {
            Pane::Threads => FilterScope::Threads,
            Pane::Detail if self.detail_tab == crate::live::DetailTab::Activity => {
                FilterScope::Activity
            }
            _ => FilterScope::Jobs,
        };
        if scope != self.filter_scope {
            self.filter.clear();
        }
        self.filter_scope = scope;
        self.filter_editing = true;
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
