//! Plain-data view models: what the glue in `src/tui` loads from the store and hands to
//! `update` and `render`.
//!
//! Owns the shapes only. Must not know about SQLite rows: the states, kinds and the tree
//! row are the vocabulary crate's (`gitmoot_types`), the very types the library stores, so
//! the glue never translates them. All times are integer milliseconds since the epoch;
//! `now_ms` is injected so tests render with a fixed clock.

use std::borrow::Cow;

pub use gitmoot_types::{
    AgentLive, AgentState, ConflictHunk, JobKind, JobNode, JobState, MessageKind, Rollup, RunState,
    SearchSource, StallSignal, ThreadState,
};

/// The Usage view (`$`): the last day's settled spend per hour, its top roots and agents,
/// each root's budget headroom, and today's daily caps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageView {
    /// Where the day starts: the first hour of `hours`.
    pub since_ms: i64,
    /// Dollars per UTC hour, oldest first.
    pub hours: Vec<f64>,
    pub total: UsageRow,
    /// Most dollars first, then the agents likewise.
    pub roots: Vec<UsageRow>,
    pub agents: Vec<UsageRow>,
    /// One line per daily cap that is set, the fleet's first.
    pub caps: Vec<CapLine>,
}

/// A daily cap against today's spend, in words, and whether it holds jobs back now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CapLine {
    pub text: String,
    pub reached: bool,
}

/// One root or agent in the Usage view.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageRow {
    /// A root's id or an agent's name.
    pub key: String,
    /// A root's title; empty for an agent.
    pub title: String,
    pub jobs: u64,
    /// Input, output and cache tokens together.
    pub tokens: u64,
    pub usd: f64,
    /// A root's spend against its budgets (`$0.42 of $5.00`); empty when none is set.
    pub budget: String,
}

/// One `search` hit as the Search view lists it (best first); the snippet marks matched
/// words «like this».
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub source: SearchSource,
    pub job: Option<String>,
    pub seq: Option<u64>,
    pub thread: Option<String>,
    pub snippet: String,
}

/// Short name for a tree row: the delegation id for legs (with the attempt from the first
/// retry on, so a failed run and its retry read apart), the kind for the rest.
pub fn node_label(n: &JobNode) -> Cow<'_, str> {
    match (&n.delegation_id, n.kind) {
        (Some(d), JobKind::Leg) if n.attempt > 1 => Cow::Owned(format!("{d}.{}", n.attempt)),
        (Some(d), JobKind::Leg) => Cow::Borrowed(d),
        (_, JobKind::Root) => Cow::Borrowed(&n.id),
        (_, k) => Cow::Borrowed(k.as_str()),
    }
}

/// One root: its run and its job tree.
#[derive(Debug, Clone, PartialEq)]
pub struct RootView {
    pub id: String,
    pub title: String,
    pub state: RunState,
    pub repo: Option<String>,
    pub created_ms: i64,
    pub finished_ms: Option<i64>,
    pub tokens: u64,
    pub cost_usd: f64,
    pub tree: JobNode,
}

/// One question of an ask-gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub id: String,
    pub prompt: String,
    /// Empty means free text.
    pub choices: Vec<String>,
}

/// What kind of human gate an attention item is.
#[derive(Debug, Clone, PartialEq)]
pub enum AttentionKind {
    /// A job asked questions and waits for answers.
    Ask { questions: Vec<Question> },
    /// A leg failed under `escalate_human`; the coordinator waits for retry/continue/abort.
    Failure { failed_leg: String, reason: String },
    /// The coordinator's delegation set named an unroutable agent and nothing was
    /// dispatched; the tree corrects or finalizes itself, but the agent may need registering.
    Preflight { reason: String },
    /// Two open write jobs of one repo change the same files (`job pending`'s overlap
    /// item); `job_id` is the younger, `jobs` both.
    Overlap {
        jobs: [String; 2],
        files: Vec<String>,
    },
    /// Merging would conflict (`job pending`'s conflict item): `job_id`'s work with the
    /// open job `with` (the older; `on_base` false), or with the work landed on its base
    /// branch `with` (`on_base`), which stays until the job is rebased, landed or discarded.
    Conflict {
        with: String,
        on_base: bool,
        files: Vec<String>,
        hunks: Vec<ConflictHunk>,
    },
    /// A running job looks stuck (`job_stalled`): cancel it, or leave it running.
    Stall {
        signal: StallSignal,
        evidence: String,
    },
}

/// Something waiting for a human.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionItem {
    /// The job the answer or verb goes to.
    pub job_id: String,
    pub root_id: String,
    pub agent: String,
    /// Why it waits, in the job's own words (its summary), if it gave one.
    pub why: Option<String>,
    pub opened_ms: i64,
    /// The chat thread created for the gate, if any.
    pub thread: Option<String>,
    pub kind: AttentionKind,
}

impl AttentionItem {
    /// The selection key: one coordinator can hold an ask round and a failure round at
    /// once, so the job id alone does not name a row.
    pub fn key(&self) -> String {
        let kind = match self.kind {
            AttentionKind::Ask { .. } => "ask",
            AttentionKind::Failure { .. } => "failure",
            AttentionKind::Preflight { .. } => "preflight",
            AttentionKind::Overlap { .. } => "overlap",
            AttentionKind::Conflict { .. } => "conflict",
            AttentionKind::Stall { .. } => "stall",
        };
        format!("{}#{kind}", self.job_id)
    }
}

/// One chat thread in the list.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadView {
    pub id: String,
    pub slug: String,
    pub title: String,
    pub repo: Option<String>,
    pub state: ThreadState,
    pub last_activity_ms: i64,
    pub unread: u32,
}

/// One row of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub seq: u64,
    pub kind: MessageKind,
    pub author: String,
    pub body: String,
    pub mentions: Vec<String>,
    pub reply_to: Option<u64>,
    pub promoted_job_id: Option<String>,
    pub ts_ms: i64,
}

/// The messages of the thread the operator has open.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub thread_id: String,
    pub messages: Vec<Message>,
}

/// One mention of an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct InboxItem {
    pub thread_id: String,
    pub seq: u64,
    pub author: String,
    pub body: String,
    pub read: bool,
    pub ts_ms: i64,
}

/// An agent's inbox.
#[derive(Debug, Clone, PartialEq)]
pub struct Inbox {
    pub agent: String,
    pub unread: u32,
    pub items: Vec<InboxItem>,
}

/// A delegation row of a coordinator's result.
#[derive(Debug, Clone, PartialEq)]
pub struct DelegationRow {
    pub id: String,
    pub agent: String,
    pub action: String,
    pub deps: Vec<String>,
    /// The leg job's state once it exists.
    pub state: Option<JobState>,
}

/// The parsed `gitmoot_result` fields the drawer shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultView {
    pub decision: String,
    pub summary: String,
    /// Each finding as the library renders it (markdown lines, the first a `- ` bullet).
    pub findings: Vec<String>,
    pub delegations: Vec<DelegationRow>,
    /// What the engine noted about the result (learnings, failed result checks, the
    /// approved-with-notes resolution, the observation grades), one line each.
    pub notes: Vec<String>,
}

/// One event of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    pub ts_ms: i64,
    pub kind: String,
    pub message: String,
}

/// Everything the Detail drawer shows for one job (loaded on demand, see
/// `Load::Detail`).
#[derive(Debug, Clone, PartialEq)]
pub struct JobDetail {
    pub job_id: String,
    pub agent: String,
    pub kind: JobKind,
    pub action: String,
    pub state: JobState,
    pub attempt: u32,
    pub prompt: String,
    pub result: Option<ResultView>,
    pub events: Vec<EventRow>,
    pub error: Option<String>,
    pub raw_output: Option<String>,
    /// The job's steps, oldest first (the Activity tab).
    pub activity: Vec<crate::live::Step>,
}

/// Who runs this home's jobs, as the glue's once-a-second probe (lock + heartbeat) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaemonStatus {
    /// This control room started the home's daemon.
    Embedded,
    /// This control room started the daemon after the one it watched went away.
    TookOver,
    /// Another process's daemon runs the jobs; this control room only watches.
    Attached,
    /// A daemon holds the lock but its heartbeat stopped (frozen or wedged).
    Unresponsive,
    /// The daemon this control room watched went away and it may not start one
    /// (`--no-daemon`, `--readonly`).
    Lost,
    None,
}

impl DaemonStatus {
    /// Whether queued jobs will be started by someone.
    pub fn runs_jobs(self) -> bool {
        matches!(
            self,
            DaemonStatus::Embedded | DaemonStatus::TookOver | DaemonStatus::Attached
        )
    }

    /// Whether the daemon is this control room's own (quitting must decide its fate).
    pub fn is_own(self) -> bool {
        matches!(self, DaemonStatus::Embedded | DaemonStatus::TookOver)
    }
}

/// Fleet-wide counts for the status bar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub running: u32,
    pub queued: u32,
    pub awaiting: u32,
    /// Daemons whose lease in the store's registry is current (one on a SQLite home; any
    /// number sharing a PostgreSQL store).
    pub daemons: u32,
    /// Registered agents: a home with none is told to register one before running a job.
    pub agents: u32,
}

/// One load of the store: everything `render` draws.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The clock at load time; `Event::Tick` moves the state's clock on between loads.
    pub now_ms: i64,
    /// When the store was read (for "updated Ns ago").
    pub as_of_ms: i64,
    pub daemon: DaemonStatus,
    pub counts: Counts,
    /// In any order; the tree shows them newest first.
    pub roots: Vec<RootView>,
    pub attention: Vec<AttentionItem>,
    pub threads: Vec<ThreadView>,
    pub transcript: Option<Transcript>,
    pub inboxes: Vec<Inbox>,
    pub detail: Option<JobDetail>,
    pub live: crate::live::Live,
    /// Write jobs' worktrees, overlaps, and the drawer job's work and diff.
    pub work: crate::work::Work,
    /// Every registered agent live, by name (read once the Agents pane was opened).
    pub agents: Vec<AgentLive>,
    /// What this control room watches, as the status bar names it: the home (`~` for the
    /// user's home folder) or the PostgreSQL database, without credentials.
    pub watching: String,
    /// The Search view's hits for its query (read once a query was asked).
    pub search: Vec<SearchHit>,
    /// The Usage view's figures (read once the view was opened).
    pub usage: Option<UsageView>,
}

impl Snapshot {
    /// An empty store (first frame before the first load).
    pub fn empty(now_ms: i64) -> Self {
        Snapshot {
            now_ms,
            as_of_ms: now_ms,
            daemon: DaemonStatus::None,
            counts: Counts::default(),
            roots: Vec::new(),
            attention: Vec::new(),
            threads: Vec::new(),
            transcript: None,
            inboxes: Vec::new(),
            detail: None,
            live: crate::live::Live::default(),
            work: crate::work::Work::default(),
            agents: Vec::new(),
            watching: String::new(),
            search: Vec::new(),
            usage: None,
        }
    }

    /// Roots, newest first (ties by id so the order is stable).
    pub fn roots_newest_first(&self) -> Vec<&RootView> {
        let mut v: Vec<&RootView> = self.roots.iter().collect();
        v.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(a.id.cmp(&b.id)));
        v
    }

    pub fn root(&self, id: &str) -> Option<&RootView> {
        self.roots.iter().find(|r| r.id == id)
    }

    /// The root whose tree holds `job_id`.
    pub fn root_of(&self, job_id: &str) -> Option<&RootView> {
        self.roots.iter().find(|r| r.tree.find(job_id).is_some())
    }

    pub fn job(&self, id: &str) -> Option<&JobNode> {
        self.roots.iter().find_map(|r| r.tree.find(id))
    }

    /// How `job_id` is stalled, when the Attention pane holds it as a stall.
    pub fn stall(&self, job_id: &str) -> Option<StallSignal> {
        self.attention.iter().find_map(|a| match a.kind {
            AttentionKind::Stall { signal, .. } if a.job_id == job_id => Some(signal),
            _ => None,
        })
    }
}

/// "13:04:05": the UTC time of day of an epoch-ms time, for the panes and the CLI alike.
/// Every place that prints it says UTC next to it; a local zone would need the zone
/// database, which neither a pane nor a log line is worth.
pub fn utc_clock(ms: i64) -> String {
    let s = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// "3s", "4m", "2h", "5d": the compact age the panes show.
pub fn age(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// "1m05s" style elapsed time for running and finished jobs.
pub fn elapsed(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// "12.3k" style token counts.
pub fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_formats() {
        assert_eq!(age(59_999), "59s");
        assert_eq!(age(3_600_000), "1h");
        assert_eq!(elapsed(65_000), "1m05s");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(999), "999");
    }

    #[test]
    fn utc_clock_is_the_utc_time_of_day() {
        assert_eq!(super::utc_clock(0), "00:00:00");
        assert_eq!(
            super::utc_clock(((13 * 60 + 5) * 60 + 9) * 1000 + 999),
            "13:05:09"
        );
    }
}
