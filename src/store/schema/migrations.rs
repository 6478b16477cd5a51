//! The migration list: the ordered steps that take a store from one version to the next,
//! index + 1 being the version each produces. Both backends' migrations are drawn from it
//! (`render.rs`); PostgreSQL stores start at `PG_BASELINE` with the tables as they stood
//! then, and take every later migration as SQLite stores do.
//!
//! Steps name parts of the table list (`tables.rs`) and never spell DDL themselves. A
//! change appends one migration (never edits an earlier one), so every store reaches the
//! same tables whatever version it started from.

use super::model::Step::{
    AddColumn, Create, CreateIndex, CreateNative, CreateTrigger, DropIndex, Rebuild, Sql,
};
use super::model::{Migration, Version};
use super::rollups::USAGE_FROM_JOBS;

pub(super) const MIGRATIONS: &[Migration] = &[
    &[
        Create("meta"),
        Create("agents"),
        Create("runs"),
        Create("jobs"),
        Create("delegations"),
        Create("escalations"),
        Create("events"),
        Create("chat_threads"),
        Create("chat_messages"),
        Create("chat_mentions"),
        Create("chat_thread_meta"),
        Create("chat_job_links"),
        Create("memory_observations"),
    ],
    &[Create("activity"), Create("job_activity")],
    &[Create("job_payloads")],
    // Paging and badge reads that stay flat with history: the `job list` index and the
    // maintained unread counters.
    &[
        CreateIndex("jobs_created"),
        Create("chat_unread"),
        Sql(UNREAD_FROM_MENTIONS),
        CreateTrigger("chat_unread_count"),
    ],
    // Cheaper sends: the badge index the counters made unused.
    &[DropIndex("chat_mentions_thread_badges")],
    // Cheaper sends: mention ids without AUTOINCREMENT's sequence row, rewritten on every
    // mention sent.
    &[Rebuild("chat_mentions")],
    // The human's read position and unread counter per thread.
    &[Create("chat_seen"), Sql(SEEN_FROM_MESSAGES)],
    // Many daemons: the registry, each job's daemon and its host label.
    &[
        Create("daemons"),
        AddColumn("jobs", "daemon_id"),
        AddColumn("jobs", "on_label"),
    ],
    // Cheaper events: a kind index of the one kind looked up, no per-job index.
    &[
        DropIndex("events_kind"),
        CreateIndex("events_kind"),
        DropIndex("events_job"),
    ],
    // Cheaper claims and settlements: the job and run indexes nothing reads, each
    // rewritten on every claim and settlement (`updated_ms` moves then).
    &[
        DropIndex("jobs_updated"),
        DropIndex("jobs_running"),
        DropIndex("runs_updated"),
    ],
    // Cheaper claims and settlements: event ids without AUTOINCREMENT's sequence row, one
    // more page in every transaction that logged an event.
    &[Rebuild("events")],
    // Write jobs: each implement job's worktree, branch and base.
    &[Create("job_worktrees")],
    // Many hosts: a write job's diff as its daemon last read it, for control rooms and
    // CLIs on hosts other than the one holding its worktree.
    &[
        AddColumn("job_worktrees", "diff"),
        AddColumn("job_worktrees", "diff_ms"),
    ],
    // Search: the full-text index of prompts, results, activity and chat, filled from the
    // rows a store holds and kept by triggers from then on.
    &[CreateNative("search")],
    // `usage` and the daily caps flat with history: the hourly rollup, filled from the
    // jobs a store holds and kept by triggers from then on, and the index of the started
    // jobs still running (whose wall time grows outside it).
    &[
        Create("usage_hours"),
        Sql(USAGE_FROM_JOBS),
        CreateTrigger("usage_hours_jobs"),
        CreateTrigger("usage_hours_activity"),
        CreateIndex("jobs_unfinished"),
    ],
    // Stalls flat with history: the index of the stall events, which the control room
    // asks of every running job at each refresh (its tree's events were walked before).
    &[CreateIndex("events_stall")],
    // Daemons settling side by side on PostgreSQL: a settled job's share reaches the rollup
    // row of its hour and agent as its transaction commits, not while it still works.
    &[CreateTrigger("usage_hours_jobs_delta")],
    // Cheaper activity: SQLite's steps indexed in place, without a doc row or a second copy
    // of their text (`natives.rs`).
    &[CreateNative("activity_search")],
    // Lands journalled: a land's intent, so one its process left midway is finished or
    // dropped by the next start, never merged twice.
    &[Create("job_lands")],
];

/// The version PostgreSQL stores start from, as their first version: no PostgreSQL store
/// predates it, and what led up to it changed only SQLite's spelling of the same tables.
pub(super) const PG_BASELINE: Version = 11;

/// The counters of the mentions a store already holds.
const UNREAD_FROM_MENTIONS: &str = "INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
    SELECT agent, agent_origin, thread_id, COUNT(*) FROM chat_mentions
    WHERE unread = 1 AND resolved = 1 GROUP BY agent, agent_origin, thread_id;";

/// History present when `chat_seen` is made counts as read: an upgrade must not light every
/// badge at once.
const SEEN_FROM_MESSAGES: &str = "INSERT INTO chat_seen(thread_id, seq, unread)
    SELECT thread_id, MAX(seq), 0 FROM chat_messages GROUP BY thread_id;";
