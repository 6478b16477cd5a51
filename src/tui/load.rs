//! Store → view model: builds the ui crate's `Snapshot` from the database, off the UI
//! thread. The first load reads the newest roots; later loads re-read only the roots the
//! event log says changed since the last cursor, so a refresh after one change is a few
//! small indexed queries however large the store is.
//!
//! Owns the mapping from store rows to ui types; never writes.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::store::Tx;
use gitmoot_ui::view::{
    AttentionItem, Counts, DaemonStatus, DelegationRow, EventRow, Inbox, InboxItem, JobDetail,
    JobNode, Message, ResultView, RootView, SearchHit, Snapshot, ThreadView, Transcript,
};

use crate::chat::{inbox, messages, threads};
use crate::clock::Millis;
use crate::contract::GitmootResult;
use crate::domain::{JobKind, JobState};
use crate::engine;
use crate::store::{Store, StoreError, events, jobs, runs, search, views};

/// How many roots the tree holds: the window the tree pane can scroll through (about
/// two screens of folded roots), so a load's cost follows the screen and not the
/// history. Older roots are reachable through `job list` and `job tree`.
pub(crate) const ROOTS_SHOWN: usize = 50;
/// Newest messages of the open thread: a few screens of scrollback, read on each chat
/// change, so it stays a fixed cost however long the thread.
const TRANSCRIPT_LIMIT: usize = 120;
/// The Search view's hits, best first.
const SEARCH_LIMIT: usize = 50;
/// Newest inbox items per agent (the pane shows one agent's screenful).
const INBOX_LIMIT: usize = 30;

pub type Result<T> = std::result::Result<T, LoadError>;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    #[error(transparent)]
    Chat(#[from] crate::chat::ChatError),
}

impl LoadError {
    /// Bad input (exit 2) met while loading, e.g. a root id that names no job.
    pub(crate) fn is_invalid(&self) -> bool {
        match self {
            Self::Store(e) => e.is_invalid(),
            Self::Engine(e) => e.is_invalid(),
            Self::Chat(e) => e.is_invalid(),
        }
    }
}

/// Keeps what was loaded so the next load only reads what changed.
pub struct Loader {
    store: Store,
    roots: BTreeMap<String, RootView>,
    cursor: i64,
    data_version: Option<i64>,
    chat: Option<ChatPanes>,
    /// The open rounds' items and the signature they were read at.
    rounds: Option<(AttentionKey, Vec<AttentionItem>)>,
    /// The preflight, interruption and stall items.
    raised: Option<Vec<AttentionItem>>,
    pub daemon: DaemonStatus,
    pub detail_job: Option<String>,
    /// The Agents pane was opened: each load reads `agent list --live` too.
    pub agents: bool,
    /// The Search view's query: each load reads its hits (`search`, the CLI verb's function).
    pub search: Option<String>,
    /// The Usage view was opened: its figures, re-read when a job settles or the hour turns.
    pub usage: Option<super::usage::UsageCache>,
    /// The config the Usage view's budgets and caps are read against.
    pub config: crate::config::Config,
    pub thread: Option<String>,
    /// Live activity and spend, read incrementally.
    pub live: super::live::LiveCache,
    /// Write jobs' worktrees, overlaps, the drawer job's work and diff.
    pub work: super::work::WorkCache,
    /// `[daemon].lease`: a registered daemon that beat within it counts as attached.
    pub lease_ms: i64,
    /// The home or database this control room watches, as the status bar names it.
    pub watching: String,
}

impl Loader {
    pub fn new(store: Store, daemon: DaemonStatus) -> Self {
        Self {
            store,
            roots: BTreeMap::new(),
            cursor: 0,
            data_version: None,
            chat: None,
            rounds: None,
            raised: None,
            daemon,
            detail_job: None,
            agents: false,
            search: None,
            usage: None,
            config: crate::config::Config::default(),
            thread: None,
            live: super::live::LiveCache::default(),
            work: super::work::WorkCache::default(),
            lease_ms: crate::config::DaemonConfig::default().lease.0,
            watching: String::new(),
        }
    }

    /// Reads against `config`: the daemon lease, the host labels, the budgets and caps.
    pub fn configure(&mut self, config: &crate::config::Config) {
        let o = &config.orchestrate;
        self.lease_ms = config.daemon.lease.0;
        self.work.labels = config.daemon.labels.clone();
        self.live.budget_usd = Some(o.max_delegation_cost_usd).filter(|usd| *usd > 0.0);
        self.live.budget_tokens = Some(o.max_delegation_token_budget).filter(|t| *t > 0);
        self.config = config.clone();
    }

    /// Whether another connection committed since the last load.
    pub fn changed(&mut self) -> Result<bool> {
        let v = self.store.data_version()?;
        Ok(self.data_version != Some(v))
    }

    /// Loads a full snapshot, reading only the roots touched since the last call.
    pub fn load(&mut self, now: Millis) -> Result<Snapshot> {
        // A PostgreSQL connection the server dropped failed the last load; reopen it (the
        // next wake-up or the safety poll retries while the server stays away).
        self.store.heal()?;
        let mut snap = self.read_store(now)?;
        snap.roots = self.roots_view();
        Ok(snap)
    }

    /// The cached trees in id order, as the snapshot carries them.
    pub(crate) fn roots_view(&self) -> Vec<RootView> {
        self.roots.values().cloned().collect()
    }

    /// The store work of a load: re-reads the touched roots into the cache and reads every
    /// other pane. The returned snapshot's `roots` is empty; `load` fills it from the cache
    /// (`roots_view`), which is copying, not SQLite.
    pub(crate) fn read_store(&mut self, now: Millis) -> Result<Snapshot> {
        self.data_version = Some(self.store.data_version()?);
        let conn = &self.store.conn();
        let last = self.store.events_settled_id(self.cursor)?;
        // A tree linked to a thread (a promotion, an auto-respond) can change its messages.
        let mut linked = false;
        let mut touched = Vec::new();
        // Nothing seen yet: every tree read is new, whenever the first events arrive.
        let first = self.cursor == 0;
        if first {
            for run in runs::list_readable(conn, ROOTS_SHOWN)? {
                let view = readable_root_view(conn, run)?;
                self.roots.insert(view.id.clone(), view);
            }
        } else if last > self.cursor {
            for root in views::touched_roots(conn, self.cursor)? {
                linked = linked || crate::store::chat::link(conn, &root)?.is_some();
                if let Some(run) = runs::get_readable(conn, &root)? {
                    let view = readable_root_view(conn, run)?;
                    self.roots.insert(root.clone(), view);
                }
                touched.push(root);
            }
        }
        self.trim();
        let conn = &self.store.conn();
        let key = ChatKey {
            badges: views::badge_signature(conn)?,
            thread: self.thread.clone(),
        };
        let stale = match &self.chat {
            Some(c) => c.key != key || linked || views::unrooted_events_since(conn, self.cursor)?,
            None => true,
        };
        if stale {
            let threads = thread_views(conn)?;
            let thread = key
                .thread
                .clone()
                .or_else(|| threads.first().map(|t| t.id.clone()));
            self.chat = Some(ChatPanes {
                transcript: thread
                    .as_deref()
                    .map(|t| transcript(conn, t))
                    .transpose()?
                    .flatten(),
                threads,
                inboxes: inboxes(conn)?,
                key,
            });
        }
        let events_moved = last != self.cursor;
        let live = self.live.read(conn, now, events_moved)?;
        self.cursor = last;
        // The rounds change with their signature alone; what events raise (preflight
        // refusals, interruptions, stalls) with any touched tree.
        let rounds_key = views::open_rounds_signature(conn)?;
        if self
            .rounds
            .as_ref()
            .is_none_or(|(key, _)| *key != rounds_key)
        {
            self.rounds = Some((rounds_key, super::attention::rounds(conn)?));
        }
        if self.raised.is_none() || !touched.is_empty() || first {
            self.raised = Some(super::attention::raised(conn)?);
        }
        let chat = self.chat.clone().unwrap_or_default();
        let mut detail = self
            .detail_job
            .as_deref()
            .map(|j| detail(conn, j))
            .transpose()?
            .flatten();
        if let Some(d) = detail.as_mut() {
            d.activity = self.live.steps(conn, &d.job_id)?;
        }
        let work = self
            .work
            .read(&self.store, self.detail_job.as_deref(), now)?;
        let mut attention: Vec<AttentionItem> = self
            .rounds
            .iter()
            .flat_map(|(_, items)| items)
            .chain(self.raised.iter().flatten())
            .cloned()
            .collect();
        attention.extend(super::work::attention(&work, &self.store));
        let agents = match self.agents {
            true => crate::report::agents::live(conn, now)?,
            false => Vec::new(),
        };
        let search = match &self.search {
            Some(q) => search_hits(conn, q)?,
            None => Vec::new(),
        };
        let usage = match self.usage.as_mut() {
            Some(cache) => Some(cache.read(conn, &self.config, now, events_moved)?),
            None => None,
        };
        Ok(Snapshot {
            now_ms: now,
            as_of_ms: now,
            daemon: self.daemon,
            counts: counts(conn, now - self.lease_ms)?,
            roots: Vec::new(),
            attention,
            transcript: chat.transcript,
            threads: chat.threads,
            inboxes: chat.inboxes,
            detail,
            live,
            work,
            agents,
            watching: self.watching.clone(),
            search,
            usage,
        })
    }

    /// Keeps the newest `ROOTS_SHOWN` roots.
    fn trim(&mut self) {
        if self.roots.len() <= ROOTS_SHOWN {
            return;
        }
        let mut by_age: Vec<(i64, String)> = self
            .roots
            .values()
            .map(|r| (r.created_ms, r.id.clone()))
            .collect();
        by_age.sort();
        for (_, id) in by_age.into_iter().take(self.roots.len() - ROOTS_SHOWN) {
            self.roots.remove(&id);
        }
    }
}

/// What the chat panes were read for: the open thread and the unread-badge signature.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ChatKey {
    badges: (i64, i64, i64, i64),
    thread: Option<String>,
}

/// The threads, transcript and inboxes of the last chat read, reused while nothing in
/// chat changed: a 200,000-message history then costs nothing per refresh.
#[derive(Debug, Clone, Default)]
struct ChatPanes {
    key: ChatKey,
    threads: Vec<ThreadView>,
    transcript: Option<Transcript>,
    inboxes: Vec<Inbox>,
}

/// Newest message, newest mention and the unread count. Sends append no event: a send
/// adds a message (its rowid moves) and marking read lowers the count, so this catches
/// both. Each part is a rowid maximum or a sum over the maintained unread counters.
/// The set of open escalation rounds (see `views::open_rounds_signature`). Opening or
/// resolving a round changes it; any other change to a tree shows as a touched root, so
/// the pane is re-read on either and otherwise reused.
type AttentionKey = (i64, i64, i64);

/// A tree whose run row is damaged still shows its jobs: its root row is marked with the
/// run's column, and the run's figures (state, title, totals) read as blank.
fn readable_root_view(conn: &Tx<'_>, run: runs::Readable) -> Result<RootView> {
    let u = match run {
        Ok(run) => return root_view(conn, &run),
        Err(u) => u,
    };
    let mut stand_in = runs::Run::new(u.id.clone(), String::new(), None, 0);
    stand_in.state = crate::domain::RunState::Blocked;
    let mut view = root_view(conn, &stand_in)?;
    view.created_ms = view.tree.created_ms;
    if view.tree.id.is_empty() {
        view.tree.id = u.id;
    }
    view.tree.unreadable.get_or_insert(u.column);
    Ok(view)
}

/// The light columns of a tree's jobs, with each leg's deps from its delegation spec.
fn root_view(conn: &Tx<'_>, run: &runs::Run) -> Result<RootView> {
    let mut nodes: Vec<JobNode> = views::tree_rows(conn, &run.root_id)?
        .into_iter()
        .map(|mut n| {
            n.summary = n.summary.map(|s| gitmoot_ui::sanitize::clean(&s));
            n
        })
        .collect();
    // Attach children to parents, deepest first, so each subtree is complete when moved.
    let index: HashMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.clone(), i))
        .collect();
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(nodes[i].depth));
    let mut taken = HashSet::new();
    for i in order {
        let Some(parent) = nodes[i].parent_id.clone() else {
            continue;
        };
        let Some(&p) = index.get(&parent) else {
            continue;
        };
        let child = std::mem::replace(&mut nodes[i], placeholder());
        nodes[p].children.push(child);
        taken.insert(i);
    }
    for n in nodes.iter_mut() {
        n.children.sort_by(|a, b| {
            a.started_ms
                .unwrap_or(i64::MAX)
                .cmp(&b.started_ms.unwrap_or(i64::MAX))
                .then(a.id.cmp(&b.id))
        });
    }
    let tree = nodes
        .into_iter()
        .enumerate()
        .find(|(i, n)| n.parent_id.is_none() && !taken.contains(i))
        .map(|(_, n)| n)
        .unwrap_or_else(placeholder);
    Ok(RootView {
        id: run.root_id.clone(),
        title: gitmoot_ui::sanitize::clean(&run.title),
        state: run.state,
        repo: run.repo.clone(),
        created_ms: run.created_ms,
        finished_ms: run.finished_ms,
        tokens: run.tokens,
        cost_usd: run.cost_usd,
        tree,
    })
}

fn placeholder() -> JobNode {
    JobNode {
        id: String::new(),
        parent_id: None,
        kind: JobKind::Root,
        delegation_id: None,
        agent: String::new(),
        action: String::new(),
        state: JobState::Queued,
        decision: None,
        summary: None,
        depth: 0,
        deps: Vec::new(),
        created_ms: 0,
        started_ms: None,
        finished_ms: None,
        tokens: 0,
        attempt: 1,
        unreadable: None,
        children: Vec::new(),
    }
}

/// The Search view's hits, through the `search` verb's function; a query with no word to
/// look for has none.
fn search_hits(conn: &Tx<'_>, text: &str) -> Result<Vec<SearchHit>> {
    let Ok(query) = search::Query::parse(text) else {
        return Ok(Vec::new());
    };
    let hits = search::search(conn, &query, &[], SEARCH_LIMIT)?;
    Ok(hits
        .into_iter()
        .map(|h| SearchHit {
            source: h.source,
            job: h.job,
            seq: h.seq,
            thread: h.thread,
            snippet: h.snippet,
        })
        .collect())
}

fn counts(conn: &Tx<'_>, beat_since: i64) -> Result<Counts> {
    Ok(Counts {
        running: jobs::count_state(conn, JobState::Running)? as u32,
        queued: jobs::count_state(conn, JobState::Queued)? as u32,
        awaiting: views::awaiting_runs(conn)?,
        daemons: crate::store::daemons::unstopped(conn, Some(beat_since))?
            .iter()
            .filter(|d| !d.is_waiter())
            .count() as u32,
        agents: crate::store::agents::count(conn)? as u32,
    })
}

fn thread_views(conn: &Tx<'_>) -> Result<Vec<ThreadView>> {
    let unread = crate::chat::threads::unseen(conn)?;
    Ok(threads::list(conn, None, true)?
        .into_iter()
        .map(|t| ThreadView {
            unread: unread.get(&t.id).copied().unwrap_or(0) as u32,
            id: t.id,
            slug: t.slug,
            title: gitmoot_ui::sanitize::clean(&t.title),
            repo: Some(t.repo),
            state: t.state,
            last_activity_ms: t.updated_ms,
        })
        .collect())
}

fn transcript(conn: &Tx<'_>, thread_id: &str) -> Result<Option<Transcript>> {
    let Some(thread) = crate::store::chat::thread(conn, thread_id)? else {
        return Ok(None);
    };
    let messages = messages::transcript(conn, &thread, Some(TRANSCRIPT_LIMIT))?
        .into_iter()
        .map(|m| Message {
            seq: m.seq as u64,
            kind: m.kind,
            author: m.author_name,
            body: gitmoot_ui::sanitize::clean(&m.body),
            mentions: m.mentions,
            reply_to: m.reply_to.map(|r| r as u64),
            promoted_job_id: m.promoted_job_id,
            ts_ms: m.ts_ms,
        })
        .collect();
    Ok(Some(Transcript {
        thread_id: thread.id,
        messages,
    }))
}

fn inboxes(conn: &Tx<'_>) -> Result<Vec<Inbox>> {
    let mut out = Vec::new();
    for (agent, unread) in inbox::unread_counts(conn)? {
        let items = inbox::inbox(conn, &agent, false, Some(INBOX_LIMIT))?
            .into_iter()
            .map(|i| InboxItem {
                thread_id: i.thread_id,
                seq: i.seq as u64,
                author: i.author,
                body: gitmoot_ui::sanitize::clean(&i.body),
                read: !i.unread,
                ts_ms: i.ts_ms,
            })
            .collect();
        out.push(Inbox {
            agent,
            unread: unread as u32,
            items,
        });
    }
    Ok(out)
}

fn detail(conn: &Tx<'_>, job_id: &str) -> Result<Option<JobDetail>> {
    // A damaged row has no drawer; its tree row already names the job and the column.
    let job = match jobs::get(conn, job_id) {
        Ok(Some(job)) => job,
        Err(crate::store::StoreError::Unreadable(_)) | Ok(None) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let notes: Vec<String> = engine::checks::marks(conn, &job)
        .unwrap_or_default()
        .iter()
        .map(|m| gitmoot_ui::sanitize::clean(m))
        .collect();
    let result = job
        .result
        .as_ref()
        .and_then(|v| serde_json::from_value::<GitmootResult>(v.clone()).ok())
        .map(|r| ResultView {
            notes,
            decision: r.decision.as_str().to_string(),
            summary: gitmoot_ui::sanitize::clean(&r.summary),
            findings: r
                .findings
                .iter()
                .map(|f| gitmoot_ui::sanitize::clean(&crate::report::findings::render(f)))
                .collect(),
            delegations: r
                .delegations
                .iter()
                .map(|d| DelegationRow {
                    id: d.id.clone(),
                    agent: engine::prompts::agent_label(d),
                    action: d.action.as_str().to_string(),
                    deps: d.deps.clone(),
                    state: leg_state(conn, &job.id, &d.id).ok().flatten(),
                })
                .collect(),
        });
    let events = events::for_job(conn, job_id)?
        .into_iter()
        .map(|e| EventRow {
            ts_ms: e.ts_ms,
            kind: e.kind,
            message: gitmoot_ui::sanitize::clean(&e.message),
        })
        .collect();
    Ok(Some(JobDetail {
        job_id: job.id.clone(),
        agent: job.agent.clone(),
        kind: job.kind,
        action: job.action.as_str().to_string(),
        state: job.state,
        attempt: job.attempt,
        prompt: gitmoot_ui::sanitize::clean(&job.prompt),
        result,
        events,
        error: job.error.as_deref().map(gitmoot_ui::sanitize::clean),
        raw_output: job.raw_output.as_deref().map(gitmoot_ui::sanitize::clean),
        activity: Vec::new(),
    }))
}

fn leg_state(conn: &Tx<'_>, parent: &str, delegation: &str) -> Result<Option<JobState>> {
    // An unreadable row leaves the leg's state blank rather than failing the whole drawer.
    Ok(views::leg_state(conn, parent, delegation).ok().flatten())
}
