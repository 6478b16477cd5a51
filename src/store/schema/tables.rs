//! The table list: every table of the store with its columns, keys, constraints, indexes
//! and triggers, each with the version it came in by (and the one that dropped it), in an
//! order where a table follows those its keys point at. Both backends' DDL is drawn from
//! it (`render.rs`); `migrations.rs` says when each part was made.
//!
//! Data only: a change appends (a column `.since(n)`, an index `.until(n)`), never edits
//! what a past version made, so a store of any version migrates to the same tables.

use super::model::Numbering::{Autoincrement, AutoincrementUntil, Plain};
use super::model::{Table, Trigger, big, index, int, json, real, rowid, serial, table, text};
use super::rollups::{USAGE_ACTIVITY, USAGE_JOBS, USAGE_JOBS_DEFERRED, USAGE_SINCE};

/// The version that indexes the stall events (`events_stall`).
const STALL_INDEX_SINCE: usize = 16;

/// The version that journals lands (`job_lands`).
const LANDS_SINCE: usize = 19;

pub(super) const TABLES: &[Table] = &[
    table("meta", &[text("key").key(), text("value").not_null()]),
    table(
        "agents",
        &[
            text("name").key(),
            text("runtime").not_null(),
            text("command"),
            text("model"),
            text("effort"),
            text("capabilities").not_null(),
            text("policy").not_null(),
            text("repos").not_null(),
            int("chat_autorespond").default("0"),
            big("created_ms").not_null(),
        ],
    ),
    table(
        "daemons",
        &[
            text("id").key(),
            text("host").not_null(),
            big("pid").not_null(),
            big("parallel").not_null(),
            text("labels").default("''"),
            big("started_ms").not_null(),
            big("heartbeat_ms").not_null(),
            big("stopped_ms"),
        ],
    )
    .indexes(&[index("daemons_live", &["heartbeat_ms"]).filter("stopped_ms IS NULL")])
    .since(8),
    table(
        "runs",
        &[
            text("root_id").key(),
            rowid(false),
            text("state").not_null(),
            text("title").not_null(),
            text("repo"),
            int("killed").default("0"),
            int("kill_force").default("0"),
            big("paused_ms").default("0"),
            big("paused_since_ms"),
            int("jobs").default("0"),
            big("tokens").default("0"),
            real("cost_usd").default("0"),
            text("stop_reason"),
            big("created_ms").not_null(),
            big("finished_ms"),
            big("updated_ms").not_null(),
        ],
    )
    .indexes(&[
        index("runs_state", &["state", "created_ms"]),
        index("runs_created", &["created_ms"]).pg_order(&["rowid"]),
        // Nothing orders runs by `updated_ms`; it moved on every settlement.
        index("runs_updated", &["updated_ms"]).until(10),
    ]),
    table(
        "jobs",
        &[
            text("id").key(),
            rowid(false),
            text("root_id").not_null().refs("runs(root_id)"),
            text("parent_id").refs("jobs(id)"),
            text("delegation_id"),
            text("kind").not_null(),
            text("agent").not_null(),
            text("action").not_null(),
            text("prompt").not_null(),
            text("repo"),
            text("state").not_null(),
            int("attempt").default("1"),
            int("depth").default("0"),
            text("model"),
            text("effort"),
            text("phase"),
            big("timeout_ms"),
            text("fingerprint"),
            int("retries_left").default("0"),
            json("ephemeral"),
            json("result"),
            text("raw_output"),
            int("output_truncated").default("0"),
            text("error"),
            big("tokens_in").default("0"),
            big("tokens_out").default("0"),
            real("cost_usd").default("0"),
            text("dispatched_by").default("''"),
            big("runtime_pid"),
            text("worktree"),
            text("followup").default("'none'"),
            text("followup_reason"),
            text("continuation_id"),
            json("carry"),
            big("created_ms").not_null(),
            big("started_ms"),
            big("finished_ms"),
            big("updated_ms").not_null(),
            // The daemon that claimed it and the host label it is pinned to.
            text("daemon_id").since(8),
            text("on_label").since(8),
        ],
    )
    .indexes(&[
        index("jobs_root", &["root_id", "created_ms"]).pg_order(&["rowid"]),
        index("jobs_parent", &["parent_id"]).pg_order(&["created_ms", "rowid"]),
        index("jobs_state", &["state", "created_ms"]),
        index("jobs_queued", &["created_ms"])
            .pg_order(&["rowid"])
            .filter("state = 'queued'"),
        // `jobs_state` serves every lookup of running jobs; this one was rewritten as a
        // job entered and left `running`.
        index("jobs_running", &["updated_ms"])
            .filter("state = 'running'")
            .until(10),
        index("jobs_agent", &["agent", "created_ms"]).pg_order(&["rowid"]),
        index("jobs_repo", &["repo", "created_ms"]).pg_order(&["rowid"]),
        index("jobs_updated", &["updated_ms"]).until(10),
        // `job list` unfiltered, newest first by `(created_ms, rowid)`: a page is an index
        // walk of `limit` entries, never a sort.
        index("jobs_created", &["created_ms"])
            .pg_order(&["rowid"])
            .since(4),
        // `usage`: the wall time so far of the started jobs not yet finished, which the
        // rollup (`usage_hours`) leaves to be read as it grows; a few rows at any time.
        index("jobs_unfinished", &["created_ms"])
            .filter("started_ms IS NOT NULL AND finished_ms IS NULL")
            .since(USAGE_SINCE),
    ])
    .triggers(&[USAGE_JOBS, USAGE_JOBS_DEFERRED]),
    table(
        "job_payloads",
        &[
            text("job_id").key().refs("jobs(id)"),
            text("result_checks"),
            text("result_observation"),
            text("resolution"),
            big("updated_ms").not_null(),
        ],
    )
    .since(3),
    // A write job's worktree: its branch, the base it started from, where it lives and
    // whether it was landed or discarded.
    table(
        "job_worktrees",
        &[
            text("job_id").key().refs("jobs(id)"),
            text("root_id").not_null(),
            text("repo").not_null(),
            text("state").not_null(),
            text("base_ref"),
            text("base_commit"),
            text("branch"),
            text("checkout"),
            text("path"),
            text("landed_commit"),
            int("review_rounds").default("0"),
            text("review_tree"),
            big("created_ms").not_null(),
            big("updated_ms").not_null(),
            text("diff").since(13),
            big("diff_ms").since(13),
        ],
    )
    .indexes(&[index("job_worktrees_state", &["state", "created_ms"])])
    .since(12),
    // The land journal: a land's intent, written before its base moves and taken back
    // when it is recorded, so a start finishes or drops a land its process left midway.
    table(
        "job_lands",
        &[
            text("job_id").key().refs("jobs(id)"),
            text("strategy").not_null(),
            text("how").not_null(),
            text("base").not_null(),
            text("onto").not_null(),
            text("new_commit").not_null(),
            text("branch").not_null(),
            text("tip").not_null(),
            int("dirty").default("0"),
            text("checkout").not_null(),
            text("path").not_null(),
            text("host").not_null(),
            big("pid").not_null(),
            big("pid_started").not_null(),
            big("created_ms").not_null(),
        ],
    )
    .since(LANDS_SINCE),
    table(
        "delegations",
        &[
            text("parent_id").not_null().refs("jobs(id)"),
            text("delegation_id").not_null(),
            text("root_id").not_null(),
            int("position").not_null(),
            json("spec").not_null(),
            text("state").not_null(),
            text("job_id"),
            int("attempts").default("0"),
            text("dedup_of"),
            int("accepted").default("0"),
            text("note"),
            big("created_ms").not_null(),
            big("updated_ms").not_null(),
        ],
    )
    .constraints(&["PRIMARY KEY (parent_id, delegation_id)"])
    .indexes(&[
        index("delegations_root", &["root_id"]),
        index("delegations_job", &["job_id"]),
    ]),
    table(
        "escalations",
        &[
            serial("id", Autoincrement),
            text("root_id").not_null(),
            text("job_id").not_null(),
            text("kind").not_null(),
            json("questions"),
            text("reason").default("''"),
            text("failed_job_id"),
            text("delegation_id"),
            big("opened_ms").not_null(),
            big("resolved_ms"),
            text("verb"),
            json("answers"),
            text("instructions"),
            text("thread_id"),
        ],
    )
    .indexes(&[
        index("escalations_open", &["resolved_ms", "opened_ms"]),
        index("escalations_job", &["job_id"]),
        index("escalations_root", &["root_id"]),
    ]),
    table(
        "events",
        &[
            // Events are never deleted, so a plain key still numbers each event after the
            // last and every `id > N` cursor keeps its order.
            serial("id", AutoincrementUntil(11)),
            big("ts_ms").not_null(),
            text("root_id"),
            text("job_id"),
            text("kind").not_null(),
            text("message").default("''"),
            json("data"),
        ],
    )
    .indexes(&[
        index("events_root", &["root_id", "id"]),
        // A job's events always carry its root, so its tree's index finds them.
        index("events_job", &["job_id", "id"]).until(9),
        index("events_kind", &["kind", "id"]).until(9),
        // Only the one kind the log is searched by (a page write per event otherwise).
        index("events_kind", &["kind", "id"])
            .filter(concat!("kind = '", preflight_kind!(), "'"))
            .since(9),
        // Whether a job is stalled now: its newest stall event, read for every running job
        // at each refresh; stall events are few, so the index costs almost no writes.
        index("events_stall", &["job_id", "id"])
            .filter(gitmoot_types::stall_kinds_sql!())
            .since(STALL_INDEX_SINCE),
    ]),
    table(
        "chat_threads",
        &[
            text("id").key(),
            text("slug").not_null(),
            text("title").not_null(),
            text("repo").not_null(),
            text("origin").not_null(),
            text("state").default("'open'"),
            text("created_by").default("''"),
            big("created_ms").not_null(),
            big("updated_ms").not_null(),
        ],
    )
    .constraints(&["UNIQUE (repo, slug)"])
    .indexes(&[index("chat_threads_slug", &["slug"])]),
    table(
        "chat_messages",
        &[
            text("id").key(),
            rowid(true),
            text("origin").not_null(),
            text("thread_id").not_null().refs("chat_threads(id)"),
            big("seq").not_null(),
            big("ts_ms").not_null(),
            text("author_kind").not_null(),
            text("author_name").not_null(),
            text("author_origin").not_null(),
            text("kind").default("'chat'"),
            text("body").not_null(),
            json("envelope_json").not_null(),
            text("refs_json").default("'[]'"),
            big("reply_to"),
            text("promoted_job_id"),
            text("job_id"),
            text("content_hash"),
            text("signature"),
            text("signer_pubkey"),
        ],
    )
    .constraints(&["UNIQUE (thread_id, seq)"])
    .indexes(&[
        index("chat_messages_promoted", &["promoted_job_id"]).filter("promoted_job_id IS NOT NULL"),
        index("chat_messages_job", &["job_id"]).filter("job_id IS NOT NULL"),
        index("chat_messages_kind", &["thread_id", "kind", "author_name"]).filter("kind != 'chat'"),
        index("chat_messages_agent_turns", &["thread_id"])
            .filter("kind = 'chat' AND author_kind = 'agent'"),
        index("chat_messages_hash", &["content_hash"])
            .unique()
            .filter("content_hash IS NOT NULL"),
    ]),
    table(
        "chat_mentions",
        &[
            // Mentions are never deleted: a plain key keeps the inbox cursors in order.
            serial("id", AutoincrementUntil(6)),
            text("message_id").not_null().refs("chat_messages(id)"),
            text("thread_id").not_null(),
            big("seq").not_null(),
            text("kind").not_null(),
            text("agent").not_null(),
            text("agent_origin").not_null(),
            int("resolved").default("1"),
            int("unread").default("1"),
            big("created_ms").not_null(),
        ],
    )
    .indexes(&[
        index("chat_mentions_inbox", &["agent", "id"]),
        index("chat_mentions_unread", &["agent", "agent_origin"])
            .filter("unread = 1 AND resolved = 1"),
        // The per-thread badge index the counters (`chat_unread`) made unused.
        index("chat_mentions_thread_badges", &["thread_id"])
            .filter("unread = 1 AND resolved = 1")
            .until(5),
    ])
    .triggers(&[UNREAD_COUNT]),
    // Unread badge counters kept by `UNREAD_COUNT` in the writer's own transaction, so a
    // badge read is a few rows however long the history. A counted mention is `unread = 1
    // AND resolved = 1`; rows that fall to zero stay and are filtered out on read.
    table(
        "chat_unread",
        &[
            text("agent").not_null(),
            text("agent_origin").not_null(),
            text("thread_id").not_null(),
            big("n").not_null(),
        ],
    )
    .constraints(&["PRIMARY KEY (agent, agent_origin, thread_id)"])
    .without_rowid()
    .since(4),
    table(
        "chat_thread_meta",
        &[
            text("thread_id").not_null().refs("chat_threads(id)"),
            text("key").not_null(),
            text("value").not_null(),
            big("updated_ms").not_null(),
        ],
    )
    .constraints(&["PRIMARY KEY (thread_id, key)"]),
    table(
        "chat_job_links",
        &[
            text("root_id").key(),
            text("thread_id").not_null().refs("chat_threads(id)"),
            big("reply_to").not_null(),
            text("purpose").not_null(),
            text("agent").not_null(),
            big("created_ms").not_null(),
        ],
    )
    .indexes(&[index(
        "chat_job_links_thread",
        &["thread_id", "agent", "purpose"],
    )]),
    // The human's read position per thread and how many messages others posted after it.
    table(
        "chat_seen",
        &[
            text("thread_id").key().refs("chat_threads(id)"),
            big("seq").not_null(),
            big("unread").not_null(),
        ],
    )
    .without_rowid()
    .since(7),
    table(
        "memory_observations",
        &[
            serial("id", Autoincrement),
            text("agent").not_null(),
            text("tier").not_null(),
            text("repo").default("''"),
            text("key").not_null(),
            text("body").not_null(),
            text("content_hash").not_null(),
            text("provenance").not_null(),
            text("trust").default("'low'"),
            text("state").not_null(),
            int("shared").default("0"),
            big("created_ms").not_null(),
            big("updated_ms").not_null(),
        ],
    )
    .constraints(&["UNIQUE (agent, tier, repo, content_hash)"])
    .indexes(&[index("memory_agent", &["agent", "state"])]),
    table(
        "activity",
        &[
            serial("id", Plain),
            text("job_id").not_null(),
            big("seq").not_null(),
            big("at_ms").not_null(),
            text("kind").not_null(),
            text("summary").not_null(),
            text("detail"),
        ],
    )
    .indexes(&[index("activity_job_seq", &["job_id", "seq"]).unique()])
    .since(2),
    table(
        "job_activity",
        &[
            text("job_id").key(),
            text("root_id").not_null(),
            big("records").default("0"),
            big("bytes").default("0"),
            int("truncated").default("0"),
            text("last_kind"),
            text("last_summary"),
            big("last_at_ms"),
            int("running").default("0"),
            big("live_tokens").default("0"),
            real("live_cost_usd").default("0"),
            big("cache_read_tokens").default("0"),
            big("cache_creation_tokens").default("0"),
            big("updated_ms").default("0"),
        ],
    )
    .indexes(&[
        index("job_activity_running", &["root_id"]).filter("running = 1"),
        index("job_activity_updated", &["updated_ms"]),
    ])
    .triggers(&[USAGE_ACTIVITY])
    .since(2),
    // What the jobs created in each UTC hour by each agent add up to, kept by `USAGE_JOBS`
    // and `USAGE_ACTIVITY` in the writer's own transaction, so `usage` and the daily caps
    // read a row per hour and agent however long the history. Rows that fall to zero jobs
    // (a job deleted or moved) stay and are skipped on read.
    table(
        "usage_hours",
        &[
            big("hour_ms").not_null(),
            text("agent").not_null(),
            big("jobs").default("0"),
            big("tokens_in").default("0"),
            big("tokens_out").default("0"),
            big("cache_read").default("0"),
            big("cache_write").default("0"),
            real("cost_usd").default("0"),
            // Started to finished, of the finished jobs only.
            big("wall_ms").default("0"),
        ],
    )
    .constraints(&["PRIMARY KEY (hour_ms, agent)"])
    .without_rowid()
    .since(USAGE_SINCE),
];

/// Counts a mention into `chat_unread` (SQLite's trigger body).
macro_rules! count_in {
    () => {
        "BEGIN
    INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
        VALUES (NEW.agent, NEW.agent_origin, NEW.thread_id, 1)
        ON CONFLICT(agent, agent_origin, thread_id) DO UPDATE SET n = n + 1;
END;
"
    };
}

/// Counts a mention out of `chat_unread` (SQLite's trigger body).
macro_rules! count_out {
    () => {
        "BEGIN
    UPDATE chat_unread SET n = n - 1
        WHERE agent = OLD.agent AND agent_origin = OLD.agent_origin AND thread_id = OLD.thread_id;
END;
"
    };
}

/// The triggers that keep `chat_unread` in step with `chat_mentions` wherever an insert,
/// update or delete moves a counted mention.
const UNREAD_COUNT: Trigger = Trigger {
    name: "chat_unread_count",
    sqlite: concat!(
        "CREATE TRIGGER chat_unread_insert AFTER INSERT ON chat_mentions
    WHEN NEW.unread = 1 AND NEW.resolved = 1
",
        count_in!(),
        "CREATE TRIGGER chat_unread_update_old AFTER UPDATE OF unread, resolved, agent, agent_origin, thread_id
    ON chat_mentions WHEN OLD.unread = 1 AND OLD.resolved = 1
",
        count_out!(),
        "CREATE TRIGGER chat_unread_update_new AFTER UPDATE OF unread, resolved, agent, agent_origin, thread_id
    ON chat_mentions WHEN NEW.unread = 1 AND NEW.resolved = 1
",
        count_in!(),
        "CREATE TRIGGER chat_unread_delete AFTER DELETE ON chat_mentions
    WHEN OLD.unread = 1 AND OLD.resolved = 1
",
        count_out!(),
    ),
    pg: "CREATE FUNCTION chat_unread_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        IF OLD.unread = 1 AND OLD.resolved = 1 THEN
            UPDATE chat_unread SET n = n - 1
                WHERE agent = OLD.agent AND agent_origin = OLD.agent_origin
                  AND thread_id = OLD.thread_id;
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        IF NEW.unread = 1 AND NEW.resolved = 1 THEN
            INSERT INTO chat_unread(agent, agent_origin, thread_id, n)
                VALUES (NEW.agent, NEW.agent_origin, NEW.thread_id, 1)
                ON CONFLICT (agent, agent_origin, thread_id) DO UPDATE SET n = chat_unread.n + 1;
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER chat_unread_count
    AFTER INSERT OR DELETE OR UPDATE OF unread, resolved, agent, agent_origin, thread_id
    ON chat_mentions FOR EACH ROW EXECUTE FUNCTION chat_unread_count();
",
    since: 4,
};
