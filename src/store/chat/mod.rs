//! The chat tables: threads, messages (per-thread gap-free `seq`), mentions (the inbox
//! index), per-thread metadata and the job links that route results back into threads.
//! This file holds the shared vocabulary and the two lookups of other tables (the tables'
//! DDL is `store::schema`'s); each table's rows live in its own child file.
//!
//! Rows and queries only: whether a send is allowed, who gets an inbox row and when a job
//! result is posted are decided in `crate::chat`. Must not touch job or escalation rows.

use super::Result;
use super::tx::{Tx, params};
use super::value::named_values;

mod links;
mod mentions;
mod messages;
mod seen;
mod threads;
mod unread;

pub use gitmoot_types::{AuthorKind, LinkPurpose, MessageKind, ThreadState};
pub use links::{JobLink, in_flight_links, insert_link, last_link_ms, link};
pub use mentions::{
    AutoCandidate, InboxRow, Mention, autorespond_candidates, inbox, inbox_each, inbox_query,
    insert_mention, mark_read,
};
pub use messages::{
    Message, Ref, authors, count_agent_turns, count_kind, insert_message, last_result_ms, last_seq,
    mentioned_agents, message_by_seq, messages, next_seq, recent_promotion_exists, result_posted,
    results_posted, set_promoted_job, system_body_exists,
};
pub use seen::{count_unseen, mark_seen, unseen_by_thread};
pub use threads::{
    Thread, insert_thread, list_threads, meta_get, meta_set, thread, threads_by_slug, update_thread,
};

pub use unread::{unread_by_thread, unread_counts, unread_in_thread, unread_total};

named_values!(ThreadState, MessageKind, AuthorKind, LinkPurpose);

/// Whether an agent with this exact name is registered (no row decoding: the send path
/// asks this once per mention).
pub(crate) fn agent_exists<'a>(tx: impl Into<Tx<'a>>, name: &str) -> Result<bool> {
    Ok(tx
        .into()
        .query_opt(
            "SELECT 1 FROM agents WHERE name = ?1",
            params![name],
            |_| Ok(()),
        )?
        .is_some())
}

/// This home's origin stamp (`meta.home_id`), through a cached statement.
pub fn origin<'a>(tx: impl Into<Tx<'a>>) -> Result<String> {
    tx.into()
        .query_opt(
            "SELECT value FROM meta WHERE key = 'home_id'",
            params![],
            |r| r.get(0),
        )?
        .ok_or(super::StoreError::HomeIdMissing)
}
