//! What `update` asks the glue to do: the side effects of the control room.
//!
//! Owns the [`Action`] enum only. Every write here has a CLI twin (named in each variant's
//! doc); the executor in `src/tui` must call the same function as that verb. Must not
//! carry store types.

/// The verb of `job resume`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeVerb {
    Retry,
    Continue,
    Abort,
}

impl ResumeVerb {
    pub fn name(self) -> &'static str {
        match self {
            ResumeVerb::Retry => "retry",
            ResumeVerb::Continue => "continue",
            ResumeVerb::Abort => "abort",
        }
    }
}

/// The action a promoted chat message runs as (`chat task`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromoteAction {
    Ask,
    Review,
    Implement,
}

impl PromoteAction {
    pub const ALL: [PromoteAction; 3] = [
        PromoteAction::Ask,
        PromoteAction::Review,
        PromoteAction::Implement,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PromoteAction::Ask => "ask",
            PromoteAction::Review => "review",
            PromoteAction::Implement => "implement",
        }
    }
}

/// One effect for the glue to execute.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `job answer JOB "<qid>: text"`, one pair per question, in question order.
    AnswerAsk {
        job_id: String,
        answers: Vec<(String, String)>,
    },
    /// `job resume JOB retry|continue|abort [INSTRUCTIONS]`.
    Resume {
        job_id: String,
        verb: ResumeVerb,
        instructions: String,
    },
    /// `job kill ROOT [--force]`.
    KillRoot { root_id: String, force: bool },
    /// `job cancel ID`.
    CancelJob { job_id: String },
    /// `chat send THREAD BODY` (mentions are parsed from the body by the chat layer).
    SendChat {
        thread_id: String,
        body: String,
        reply_to: Option<u64>,
    },
    /// `chat task THREAD SEQ --action A`.
    Promote {
        thread_id: String,
        seq: u64,
        action: PromoteAction,
    },
    /// `chat read AGENT THREAD SEQ...`.
    MarkRead {
        agent: String,
        thread_id: String,
        seqs: Vec<u64>,
    },
    /// `chat seen THREAD --upto SEQ`: the operator has read the thread on screen.
    MarkSeen { thread_id: String, seq: u64 },
    /// Put text on the operator's clipboard (the glue writes OSC 52).
    Copy(String),
    /// A `:` command line: the same verbs as the CLI, without the `gitmoot` prefix.
    RunCommand(String),
    /// Load `Snapshot::detail` for this job.
    LoadDetail(String),
    /// Load `Snapshot::transcript` for this thread.
    LoadThread(String),
    /// Quit; this control room's daemon (idle, or its work done) stops too.
    Quit,
    /// Quit and leave this control room's daemon running in the background.
    Detach,
    /// Stop this control room's daemon gracefully (running jobs are terminated after the
    /// shutdown grace), then quit once it has exited.
    QuitKill,
    /// Ctrl-z: restore the terminal, stop, and take it back on resume.
    Suspend,
}

impl Action {
    /// Whether the action changes the store (refused in `--readonly`). A `:` line that
    /// only reads (`job list`, `chat show …`) is not a write.
    pub fn is_write(&self) -> bool {
        if let Action::RunCommand(line) = self {
            return !crate::complete::is_read_command(line);
        }
        matches!(
            self,
            Action::AnswerAsk { .. }
                | Action::Resume { .. }
                | Action::KillRoot { .. }
                | Action::CancelJob { .. }
                | Action::SendChat { .. }
                | Action::Promote { .. }
                | Action::MarkRead { .. }
                | Action::MarkSeen { .. }
        )
    }
}
