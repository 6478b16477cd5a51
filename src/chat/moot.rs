//! `gitmoot moot`: convene registered agents as seats in one thread, each seat one
//! read-only ask root job, talking through `chat send --as` / `chat wait`. Owns the moot
//! seats and writes the markers `cap` reads.

use crate::store::Tx;
use serde::Serialize;

use super::Result;
use super::cap::{CAP_KEY, MOOT_KEY};
use super::messages::{self, Post};
use super::threads::{self, require_open};
use crate::clock::Clock;
use crate::config::Config;
use crate::domain::{Action, JobKind};
use crate::engine::submit_root;
use crate::store::chat::{self as rows, JobLink, LinkPurpose, Thread};
use crate::store::jobs::Job;
use crate::store::{agents, daemons};
use crate::{Invalid, registry};

/// What `gitmoot moot` asks for.
#[derive(Debug, Clone)]
pub struct MootRequest<'a> {
    pub name: &'a str,
    pub topic: &'a str,
    pub agents: Vec<String>,
    pub repo: &'a str,
    /// Overrides `[chat].moot_message_cap` for this moot.
    pub max_messages: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeatJob {
    pub agent: String,
    pub job_id: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Convened {
    pub thread: Thread,
    pub message_cap: i64,
    pub announcement_seq: i64,
    pub seats: Vec<SeatJob>,
    /// A non-blocking note when the daemon cannot run seats concurrently.
    pub warning: Option<String>,
}

/// The roster from `--agents a,b`: trimmed, empties dropped, first occurrence kept.
pub(crate) fn parse_roster(list: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in list.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        if !out.iter().any(|x| x == a) {
            out.push(a.to_string());
        }
    }
    out
}

/// Validates every seat up front, then creates or reuses the thread, marks it a moot,
/// posts the announcement and submits one read-only ask root job per seat.
pub fn convene(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    cfg: &Config,
    r: MootRequest<'_>,
) -> Result<Convened> {
    let slug = threads::slug_for(r.name, "moot")?;
    let topic = r.topic.trim();
    if topic.is_empty() {
        return Err(Invalid("moot requires a non-empty \"topic\"".into()).into());
    }
    if !crate::config::is_repo_name(r.repo) {
        return Err(Invalid(format!("--repo {:?} must look like owner/name", r.repo)).into());
    }
    if r.agents.is_empty() {
        return Err(
            Invalid("moot requires --agents a,b,c (at least one registered agent)".into()).into(),
        );
    }
    let max = cfg.chat.moot_max_seats as usize;
    if r.agents.len() > max {
        return Err(Invalid(format!(
            "moot: {} seats requested but the seat limit is {max} (raise [chat].moot_max_seats to convene more)",
            r.agents.len()
        ))
        .into());
    }
    for a in &r.agents {
        let agent = agents::require(tx, a)?;
        registry::check_dispatch(&agent, Action::Ask, Some(r.repo))?;
    }
    let message_cap = i64::from(
        r.max_messages
            .filter(|m| *m > 0)
            .unwrap_or(cfg.chat.moot_message_cap),
    );
    let thread = threads::get_or_create(tx, clock, &slug, r.repo, topic, "human")?;
    require_open(&thread, "convening a moot")?;
    let now = clock.now_ms();
    rows::meta_set(tx, &thread.id, MOOT_KEY, "1", now)?;
    rows::meta_set(tx, &thread.id, CAP_KEY, &message_cap.to_string(), now)?;
    let seats_text = r
        .agents
        .iter()
        .map(|a| format!("@{a}"))
        .collect::<Vec<_>>()
        .join(", ");
    let body = format!(
        "MOOT convened: {topic}. Seats: {seats_text}. Message cap: {message_cap} agent turns — the moot HARD-STOPS \
         at the cap (no auto-extension); on the cap each seat posts its partial conclusions (know / unsure / \
         would-ask-next) via its gitmoot_result. Seats converse with `gitmoot chat send` / `gitmoot chat wait`."
    );
    let mut post = Post::system(&body);
    post.mentions = r.agents.clone();
    post.deliver = r.agents.iter().map(|a| (a.clone(), true)).collect();
    let announcement = messages::append(tx, clock, &thread, post)?;
    let mut seats = Vec::new();
    let checkout = cfg.repos.get(r.repo).and_then(|c| c.path.as_deref());
    for a in &r.agents {
        let prompt = seat_prompt(
            &thread,
            topic,
            &seats_text,
            message_cap,
            a,
            announcement.seq,
            checkout,
        );
        // The thread was made on `r.repo`, so its job runs there too.
        let job_id = submit_root(
            tx,
            clock,
            super::thread_job(&thread, a, Action::Ask, prompt),
        )?;
        rows::insert_link(
            tx,
            &JobLink {
                root_id: job_id.clone(),
                thread_id: thread.id.clone(),
                reply_to: announcement.seq,
                purpose: LinkPurpose::MootSeat,
                agent: a.clone(),
                created_ms: now,
            },
        )?;
        seats.push(SeatJob {
            agent: a.clone(),
            job_id,
        });
    }
    Ok(Convened {
        thread,
        message_cap,
        announcement_seq: announcement.seq,
        warning: serialization_warning(tx, clock, cfg, r.repo, r.agents.len())?,
        seats,
    })
}

/// The single-worker warning, from the parallelism of the daemons serving the store now
/// (their registered `--parallel`, summed) or, with none running, the config a daemon
/// will start with; a repo's `max_parallel` caps either.
fn serialization_warning(
    tx: &Tx<'_>,
    clock: &dyn Clock,
    cfg: &Config,
    repo: &str,
    seats: usize,
) -> Result<Option<String>> {
    let live: Vec<i64> = daemons::unstopped(tx, Some(clock.now_ms() - cfg.daemon.lease.0))?
        .into_iter()
        .filter(|d| !d.is_waiter())
        .map(|d| d.parallel)
        .collect();
    let serving = if live.is_empty() {
        cfg.daemon.parallel
    } else {
        live.iter().sum::<i64>().max(0) as usize
    };
    let workers = match cfg.repos.get(repo).map(|r| r.max_parallel as usize) {
        Some(cap) if cap > 0 => cap.min(serving),
        _ => serving,
    };
    Ok((seats >= 2 && workers < 2).then(|| {
        format!(
            "warning: this daemon runs a single worker (workers={workers}); a {seats}-seat moot will exchange turns \
             slowly and each 'chat wait' may time out. Give the daemon >=2 workers ([daemon] parallel = {seats}, or \
             start the daemon with --parallel {seats}) so seats converse concurrently."
        )
    }))
}

fn seat_prompt(
    thread: &Thread,
    topic: &str,
    seats: &str,
    cap: i64,
    agent: &str,
    since: i64,
    checkout: Option<&std::path::Path>,
) -> String {
    // No `--home`: a seat's `chat send`/`wait` go through its relay and never open the store,
    // and an agent must not learn where the home is.
    let (slug, repo) = (&thread.slug, &thread.repo);
    // A seat of a git checkout reads its own detached worktree at the committed tip (see
    // `daemon::claim::place`); what the operator has not committed is only in the checkout.
    let note = checkout.map_or(String::new(), |c| {
        format!(
            "You work in a detached worktree at the repository's committed tip. Uncommitted \
             edits, if any, are only in the canonical checkout at {}; read them there when they \
             matter.\n",
            c.display()
        )
    });
    format!(
        "You are seat @{agent} in a moot on chat thread \"{slug}\" ({repo}).\n\
         Topic: {topic}\n\
         Seats: {seats}. Message cap: {cap} agent turns in total; the moot hard-stops at the cap, with no extension.\n\n\
         Converse by running these commands:\n\
         \x20 gitmoot chat send {slug} \"<your message>\" --as {agent} --repo {repo}\n\
         \x20 gitmoot chat wait {slug} --since-seq <last-seq> --repo {repo}\n\
         Start with --since-seq {since} and feed each printed `last-seq: N` into the next wait.\n\
         Stop when you have nothing new to add, when wait prints \"MOOT CAP REACHED\", or when a send is refused.\n\
         Then return a gitmoot_result whose summary states what you KNOW, what you are UNSURE of, and what you \
         would ASK NEXT. This is read-only: do not modify files.\n{note}"
    )
}

/// The relay binding of a moot seat job: the daemon issues a token for it and injects
/// `GITMOOT_RELAY_SOCKET`/`GITMOOT_RELAY_TOKEN` into that job's runtime only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatBinding {
    pub agent: String,
    pub thread_id: String,
}

pub fn seat_for_job(conn: &Tx<'_>, job: &Job) -> crate::store::Result<Option<SeatBinding>> {
    if job.kind != JobKind::Root {
        return Ok(None);
    }
    Ok(rows::link(conn, &job.id)?
        .filter(|l| l.purpose == LinkPurpose::MootSeat)
        .map(|l| SeatBinding {
            agent: l.agent,
            thread_id: l.thread_id,
        }))
}
