//! Thread lifecycle and resolution: create (slugged, unique per repo), list, rename (title
//! only), close (archive) and reopen, and resolving a thread argument (id, then slug).

use std::collections::HashMap;

use crate::store::Tx;
use serde::Serialize;

use super::slug::slugify;
use super::{ChatError, Result, write_retry};
use crate::clock::Clock;
use crate::domain::{Capability, EventKind};
use crate::store::chat::{self as rows, Thread, ThreadState};
use crate::store::events::{self, NewEvent};
use crate::store::{Store, agents};
use crate::{Invalid, ids};

/// What `create` needs; `title` defaults to the slug.
#[derive(Debug, Clone)]
pub struct NewThread<'a> {
    pub name: &'a str,
    pub repo: &'a str,
    pub title: Option<&'a str>,
    pub created_by: &'a str,
}

fn valid_repo(repo: &str) -> Result<()> {
    if !crate::config::is_repo_name(repo) {
        return Err(Invalid(format!("--repo {repo:?} must look like owner/name")).into());
    }
    Ok(())
}

/// The slug of a thread name, or the validation error naming the raw name.
pub(crate) fn slug_for(name: &str, what: &str) -> Result<String> {
    let slug = slugify(name);
    if slug.is_empty() {
        return Err(Invalid(format!(
            "invalid {what} name {name:?}: a thread slug must be topic-path-safe ([a-z0-9-])"
        ))
        .into());
    }
    Ok(slug)
}

/// Creates an open thread; a duplicate (repo, slug) is refused.
pub fn create(conn: &Tx<'_>, clock: &dyn Clock, n: NewThread<'_>) -> Result<Thread> {
    let slug = slug_for(n.name, "chat")?;
    valid_repo(n.repo)?;
    if !rows::threads_by_slug(conn, &slug, Some(n.repo))?.is_empty() {
        return Err(ChatError::Invalid(Invalid(format!(
            "a chat thread {slug:?} already exists in {}",
            n.repo
        ))));
    }
    insert(conn, clock, slug, n.repo, n.title, n.created_by)
}

fn insert(
    conn: &Tx<'_>,
    clock: &dyn Clock,
    slug: String,
    repo: &str,
    title: Option<&str>,
    created_by: &str,
) -> Result<Thread> {
    let now = clock.now_ms();
    let title = title.map(str::trim).filter(|t| !t.is_empty());
    let t = Thread {
        id: format!("chat-{}", ids::random_hex(12)),
        title: title.map(String::from).unwrap_or_else(|| slug.clone()),
        slug,
        repo: repo.to_string(),
        origin: rows::origin(conn)?,
        state: ThreadState::Open,
        created_by: created_by.to_string(),
        created_ms: now,
        updated_ms: now,
    };
    rows::insert_thread(conn, &t)?;
    event(
        conn,
        now,
        &t,
        EventKind::ChatThreadCreated,
        format!("thread {} created in {}", t.slug, t.repo),
    )?;
    Ok(t)
}

/// The thread with this slug in `repo`, created (open) when missing. Used by the ask-gate
/// link and moots, which name their threads themselves.
pub(crate) fn get_or_create(
    conn: &Tx<'_>,
    clock: &dyn Clock,
    slug: &str,
    repo: &str,
    title: &str,
    created_by: &str,
) -> Result<Thread> {
    if let Some(t) = rows::threads_by_slug(conn, slug, Some(repo))?
        .into_iter()
        .next()
    {
        return Ok(t);
    }
    insert(conn, clock, slug.to_string(), repo, Some(title), created_by)
}

fn event(conn: &Tx<'_>, now: i64, t: &Thread, kind: EventKind, message: String) -> Result<()> {
    events::append(
        conn,
        NewEvent::unrooted(now, kind)
            .message(message)
            .data(serde_json::json!({"thread_id": t.id, "slug": t.slug, "repo": t.repo})),
    )?;
    Ok(())
}

/// Resolves a thread argument: an exact id wins; then the slug, in `repo` when given, else
/// across every repo (several matches is an error listing them).
pub fn resolve(conn: &Tx<'_>, arg: &str, repo: Option<&str>) -> Result<Thread> {
    let arg = arg.trim();
    if arg.is_empty() {
        return Err(Invalid("a thread id or slug is required".into()).into());
    }
    if let Some(t) = rows::thread(conn, arg)? {
        return Ok(t);
    }
    let mut found = rows::threads_by_slug(conn, arg, repo)?;
    match (found.len(), repo) {
        (1, _) => Ok(found.remove(0)),
        (0, Some(r)) => Err(Invalid(format!("no chat thread {arg:?} in {r}")).into()),
        (0, None) => Err(Invalid(format!(
            "no chat thread {arg:?} (see `gitmoot chat list --all`)"
        ))
        .into()),
        _ => Err(Invalid(format!(
            "chat thread {arg:?} exists in several repos ({}); pass --repo to choose",
            found
                .iter()
                .map(|t| t.repo.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into()),
    }
}

/// Open threads (or all with `include_archived`), most recent activity first.
pub fn list(conn: &Tx<'_>, repo: Option<&str>, include_archived: bool) -> Result<Vec<Thread>> {
    Ok(rows::list_threads(conn, repo, include_archived)?)
}

/// Changes only the display title; the slug never changes.
pub fn rename(conn: &Tx<'_>, clock: &dyn Clock, thread: &Thread, title: &str) -> Result<Thread> {
    let title = title.trim();
    if title.is_empty() {
        return Err(Invalid("chat rename requires a non-empty new name".into()).into());
    }
    let mut t = thread.clone();
    t.title = title.to_string();
    t.updated_ms = clock.now_ms().max(t.updated_ms);
    rows::update_thread(conn, &t)?;
    event(
        conn,
        t.updated_ms,
        &t,
        EventKind::ChatThreadRenamed,
        format!("thread {} renamed to {title:?}", t.slug),
    )?;
    Ok(t)
}

/// Archives (`Archived`) or restores (`Open`) a thread; idempotent, deletes nothing.
pub(crate) fn set_state(
    conn: &Tx<'_>,
    clock: &dyn Clock,
    thread: &Thread,
    state: ThreadState,
) -> Result<Thread> {
    let mut t = thread.clone();
    t.state = state;
    t.updated_ms = clock.now_ms().max(t.updated_ms);
    rows::update_thread(conn, &t)?;
    let kind = match state {
        ThreadState::Open => EventKind::ChatThreadReopened,
        ThreadState::Archived => EventKind::ChatThreadClosed,
    };
    event(
        conn,
        t.updated_ms,
        &t,
        kind,
        format!("thread {} is {state}", t.slug),
    )?;
    Ok(t)
}

/// Refuses an action on an archived thread.
pub(crate) fn require_open(t: &Thread, verb: &str) -> Result<()> {
    if t.state == ThreadState::Archived {
        return Err(ChatError::refused(format!(
            "thread {:?} is archived; reopen it before {verb}",
            t.slug
        )));
    }
    Ok(())
}

/// The human's unread count per thread id; threads with nothing unread are left out.
pub fn unseen(conn: &Tx<'_>) -> Result<HashMap<String, i64>> {
    Ok(rows::unseen_by_thread(conn)?.into_iter().collect())
}

/// `chat seen` and the control room showing a thread: the human has read it up to `upto`
/// (its newest message when `None`). Returns the thread and what is still unread, which
/// is more than zero only when others posted past `upto` meanwhile.
pub fn mark_seen(
    store: &mut Store,
    thread_arg: &str,
    repo: Option<&str>,
    upto: Option<i64>,
) -> Result<(Thread, i64)> {
    write_retry(store, |tx| {
        let thread = resolve(tx, thread_arg, repo)?;
        let seq = match upto {
            Some(seq) => seq,
            None => rows::last_seq(tx, &thread.id)?,
        };
        let left = rows::mark_seen(tx, &thread.id, seq)?;
        Ok((thread, left))
    })
}

/// Someone involved in a thread, read from the agent registry (no separate card storage).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Participant {
    pub name: String,
    pub registered: bool,
    pub capabilities: Vec<Capability>,
    pub policy: Option<String>,
}

/// Authors (system excluded) and resolved mentions, sorted by name.
pub fn participants(conn: &Tx<'_>, thread_id: &str) -> Result<Vec<Participant>> {
    let mut names = rows::authors(conn, thread_id)?;
    names.extend(rows::mentioned_agents(conn, thread_id)?);
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let agent = agents::get(conn, &name)?;
            Ok(Participant {
                registered: agent.is_some(),
                capabilities: agent
                    .as_ref()
                    .map(|a| a.capabilities.clone())
                    .unwrap_or_default(),
                policy: agent.map(|a| a.policy.to_string()),
                name,
            })
        })
        .collect()
}

/// One row of the control room's thread list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadSummary {
    pub thread: Thread,
    pub messages: i64,
    pub last_author: Option<String>,
    pub last_kind: Option<String>,
    /// The newest message's first line, at most 90 characters.
    pub last_snippet: Option<String>,
    /// Unread resolved mentions in the thread, all agents together.
    pub unread_mentions: i64,
}

/// `list` plus the per-thread rollups the control room shows.
pub fn summaries(
    conn: &Tx<'_>,
    repo: Option<&str>,
    include_archived: bool,
) -> Result<Vec<ThreadSummary>> {
    let origin = rows::origin(conn)?;
    let mut out = Vec::new();
    for t in rows::list_threads(conn, repo, include_archived)? {
        let unread_mentions = rows::unread_in_thread(conn, &t.id, &origin)?;
        out.push(match rows::messages(conn, &t.id, 0, Some(1))?.pop() {
            Some(m) => ThreadSummary {
                messages: m.seq,
                last_author: Some(m.author_name),
                last_kind: Some(m.kind.as_str().to_string()),
                last_snippet: Some(snippet(&m.body)),
                unread_mentions,
                thread: t,
            },
            None => ThreadSummary {
                messages: 0,
                last_author: None,
                last_kind: None,
                last_snippet: None,
                unread_mentions,
                thread: t,
            },
        });
    }
    Ok(out)
}

fn snippet(body: &str) -> String {
    let line = body
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut s: String = line.chars().take(90).collect();
    if line.chars().count() > 90 {
        s.push('…');
    }
    s
}
