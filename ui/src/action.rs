//! What `update` asks the glue to do: the side effects of the control room, sorted by who
//! performs them.
//!
//! Owns the [`Action`] routing and its three kinds: a [`Write`] goes to the executor (every
//! one has a CLI twin, named in each variant's doc, and the executor in `src/tui` must call
//! the same function as that verb), a [`Load`] to the loader, a [`Term`] stays on the UI
//! thread. Must not carry store types.

/// The action a promoted chat message runs as (`chat task`): a job's own action.
pub use gitmoot_types::Action as PromoteAction;
pub use gitmoot_types::{BulkVerb, ResumeVerb};

/// One effect for the glue, routed by its kind: the match over these three arms is the one
/// place that decides who performs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A store write, performed by the executor through the CLI's function.
    Write(Write),
    /// A read the loader performs for the next snapshot.
    Load(Load),
    /// The terminal and the process: performed on the UI thread itself.
    Term(Term),
}

/// A change to the store, refused in `--readonly` (except a `:` line that only reads).
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
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
    /// `job leave JOB`: a stalled job left running.
    LeaveStall { job_id: String },
    /// `job cancel|kill|retry|land|discard --where …`: one verb on every marked job, each
    /// through the same library function (`engine::bulk::apply`, `worktree::many::apply`).
    Bulk {
        verb: BulkVerb,
        job_ids: Vec<String>,
    },
    /// `job answer --where … --choice CHOICE`: every marked job's question given one
    /// choice (`chat::answer::answer_many`).
    BulkAnswer {
        job_ids: Vec<String>,
        choice: String,
    },
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
    /// `job land JOB [--squash|--merge|--rebase]`.
    Land {
        job_id: String,
        strategy: crate::work::LandStrategy,
    },
    /// `job discard JOB --force` (the dialog asked first).
    Discard { job_id: String },
    /// `job review JOB "comments"`, one `path:line: text` a line.
    Review { job_id: String, comments: String },
    /// A `:` command line: the same verbs as the CLI, without the `gitmoot` prefix.
    RunCommand(String),
}

/// What the loader reads on request.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// `Snapshot::detail` for this job.
    Detail(String),
    /// `Snapshot::transcript` for this thread.
    Thread(String),
    /// `Snapshot::work.diff` for this job (`job diff --json`), read once per change.
    Diff(String),
    /// `Snapshot::agents` (`agent list --live`), from now on at every load.
    Agents,
    /// `Snapshot::search` (`search QUERY`), from now on at every load.
    Search(String),
    /// `Snapshot::usage` (the Usage view's figures), from now on at every load.
    Usage,
}

/// What the UI thread does to its terminal or to itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// Put text on the operator's clipboard (the glue writes OSC 52).
    Copy(String),
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
    /// Whether the action changes the store (refused in `--readonly`): every write but a
    /// `:` line that only reads (`job list`, `chat show …`).
    pub fn is_write(&self) -> bool {
        match self {
            Action::Write(Write::RunCommand(line)) => !crate::complete::is_read_command(line),
            Action::Write(_) => true,
            Action::Load(_) | Action::Term(_) => false,
        }
    }
}

impl From<Write> for Action {
    fn from(w: Write) -> Self {
        Action::Write(w)
    }
}

impl From<Load> for Action {
    fn from(l: Load) -> Self {
        Action::Load(l)
    }
}

impl From<Term> for Action {
    fn from(t: Term) -> Self {
        Action::Term(t)
    }
}
