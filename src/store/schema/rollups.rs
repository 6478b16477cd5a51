//! The maintained rollups: `usage_hours`, what the jobs created in each UTC hour by each
//! agent added up to (jobs, tokens, cache tokens, dollars, finished wall time), the
//! statement that fills it from the rows a store already holds, and the triggers that keep
//! it in step, each spelled for both backends.
//!
//! Triggers rather than the store's write functions: every writer of `jobs` and
//! `job_activity` (the daemon, a repair, `store copy`) keeps the rollup without knowing of
//! it. Each adds the new row's share and takes away the old one's (a delta), so any order
//! of writes leaves the rollup equal to a sum over the jobs; and each fires only when a
//! figure it counts changed (its `WHEN`, checked before any body runs), so a claim, which
//! moves none, and a running job's activity writes cost no rollup write.
//!
//! Must not decide how the rollup is read: `store/usage.rs` does.

use super::model::Trigger;

/// The version whose migration made the rollup.
pub(super) const USAGE_SINCE: usize = 15;

/// Adds one row of shares to its hour and agent (SQLite's trigger statement): `$select`
/// selects `(created_ms, agent, jobs, tokens_in, tokens_out, cache_read, cache_write,
/// cost_usd, wall_ms)`, the hour floored here.
macro_rules! sqlite_put {
    ($select:expr) => {
        concat!(
            "    INSERT INTO usage_hours(hour_ms, agent, jobs, tokens_in, tokens_out, cache_read, \
             cache_write, cost_usd, wall_ms)\n        SELECT h / 3600000 * 3600000, a, n, ti, tou, cr, cw, c, w FROM (",
            $select,
            ") WHERE 1\n        ON CONFLICT(hour_ms, agent) DO UPDATE SET jobs = jobs + excluded.jobs,
            tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out,
            cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
            cost_usd = cost_usd + excluded.cost_usd, wall_ms = wall_ms + excluded.wall_ms;\n"
        )
    };
}

/// A job row's finished wall time (`$x` being `NEW` or `OLD`); a running job's is read
/// from the jobs themselves, as it grows.
macro_rules! wall {
    ($x:literal) => {
        concat!(
            "(CASE WHEN ",
            $x,
            ".started_ms IS NULL OR ",
            $x,
            ".finished_ms IS NULL THEN 0 ELSE ",
            $x,
            ".finished_ms - ",
            $x,
            ".started_ms END)"
        )
    };
}

/// A job row's whole share, its cache tokens read from its activity row, signed `$s`.
macro_rules! sqlite_job {
    ($x:literal, $s:literal) => {
        sqlite_put!(concat!(
            "SELECT ",
            $x,
            ".created_ms AS h, ",
            $x,
            ".agent AS a, ",
            $s,
            "1 AS n, ",
            $s,
            $x,
            ".tokens_in AS ti, ",
            $s,
            $x,
            ".tokens_out AS tou, ",
            $s,
            "coalesce((SELECT cache_read_tokens FROM job_activity WHERE job_id = ",
            $x,
            ".id), 0) AS cr, ",
            $s,
            "coalesce((SELECT cache_creation_tokens FROM job_activity WHERE job_id = ",
            $x,
            ".id), 0) AS cw, ",
            $s,
            $x,
            ".cost_usd AS c, ",
            $s,
            wall!($x),
            " AS w"
        ))
    };
}

/// An activity row's cache tokens, at its job's hour and agent, signed `$s`.
macro_rules! sqlite_activity {
    ($x:literal, $s:literal) => {
        sqlite_put!(concat!(
            "SELECT j.created_ms AS h, j.agent AS a, 0 AS n, 0 AS ti, 0 AS tou, ",
            $s,
            $x,
            ".cache_read_tokens AS cr, ",
            $s,
            $x,
            ".cache_creation_tokens AS cw, 0 AS c, 0 AS w FROM jobs j WHERE j.id = ",
            $x,
            ".job_id"
        ))
    };
}

/// The triggers on `jobs`: a job's share added as it is made, moved when it settles (its
/// tokens, dollars and wall time), taken away if it is ever deleted.
pub(super) const USAGE_JOBS: Trigger = Trigger {
    name: "usage_hours_jobs",
    sqlite: concat!(
        "CREATE TRIGGER usage_hours_jobs_insert AFTER INSERT ON jobs BEGIN\n",
        sqlite_job!("NEW", ""),
        "END;
CREATE TRIGGER usage_hours_jobs_update
    AFTER UPDATE OF tokens_in, tokens_out, cost_usd, started_ms, finished_ms ON jobs
    WHEN NEW.created_ms / 3600000 = OLD.created_ms / 3600000 AND NEW.agent = OLD.agent
        AND (NEW.tokens_in <> OLD.tokens_in OR NEW.tokens_out <> OLD.tokens_out
            OR NEW.cost_usd <> OLD.cost_usd OR ",
        wall!("NEW"),
        " <> ",
        wall!("OLD"),
        ") BEGIN\n",
        sqlite_put!(concat!(
            "SELECT NEW.created_ms AS h, NEW.agent AS a, 0 AS n, NEW.tokens_in - OLD.tokens_in AS ti, \
             NEW.tokens_out - OLD.tokens_out AS tou, 0 AS cr, 0 AS cw, NEW.cost_usd - OLD.cost_usd AS c, ",
            wall!("NEW"),
            " - ",
            wall!("OLD"),
            " AS w"
        )),
        "END;
CREATE TRIGGER usage_hours_jobs_move AFTER UPDATE OF created_ms, agent ON jobs
    WHEN NEW.created_ms / 3600000 <> OLD.created_ms / 3600000 OR NEW.agent <> OLD.agent BEGIN\n",
        sqlite_job!("OLD", "-"),
        sqlite_job!("NEW", ""),
        "END;
CREATE TRIGGER usage_hours_jobs_delete AFTER DELETE ON jobs BEGIN\n",
        sqlite_job!("OLD", "-"),
        "END;\n"
    ),
    pg: "CREATE FUNCTION usage_hours_put(h bigint, a text, n bigint, ti bigint, tou bigint, cr bigint,
    cw bigint, c double precision, w bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO usage_hours(hour_ms, agent, jobs, tokens_in, tokens_out, cache_read, cache_write, cost_usd, wall_ms)
        VALUES (h / 3600000 * 3600000, a, n, ti, tou, cr, cw, c, w)
        ON CONFLICT (hour_ms, agent) DO UPDATE SET jobs = usage_hours.jobs + excluded.jobs,
            tokens_in = usage_hours.tokens_in + excluded.tokens_in,
            tokens_out = usage_hours.tokens_out + excluded.tokens_out,
            cache_read = usage_hours.cache_read + excluded.cache_read,
            cache_write = usage_hours.cache_write + excluded.cache_write,
            cost_usd = usage_hours.cost_usd + excluded.cost_usd,
            wall_ms = usage_hours.wall_ms + excluded.wall_ms;
$$;
CREATE FUNCTION usage_hours_wall(s bigint, f bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN s IS NULL OR f IS NULL THEN 0 ELSE f - s END
$$;
CREATE FUNCTION usage_hours_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k text;
    cr bigint;
    cw bigint;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.created_ms / 3600000 = OLD.created_ms / 3600000 AND NEW.agent = OLD.agent THEN
            PERFORM usage_hours_put(NEW.created_ms, NEW.agent, 0, NEW.tokens_in - OLD.tokens_in,
                NEW.tokens_out - OLD.tokens_out, 0, 0, NEW.cost_usd - OLD.cost_usd,
                usage_hours_wall(NEW.started_ms, NEW.finished_ms)
                    - usage_hours_wall(OLD.started_ms, OLD.finished_ms));
            RETURN NULL;
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN k := OLD.id; ELSE k := NEW.id; END IF;
    SELECT a.cache_read_tokens, a.cache_creation_tokens INTO cr, cw FROM job_activity a WHERE a.job_id = k;
    cr := coalesce(cr, 0);
    cw := coalesce(cw, 0);
    IF TG_OP <> 'INSERT' THEN
        PERFORM usage_hours_put(OLD.created_ms, OLD.agent, -1, -OLD.tokens_in, -OLD.tokens_out, -cr, -cw,
            -OLD.cost_usd, -usage_hours_wall(OLD.started_ms, OLD.finished_ms));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM usage_hours_put(NEW.created_ms, NEW.agent, 1, NEW.tokens_in, NEW.tokens_out, cr, cw,
            NEW.cost_usd, usage_hours_wall(NEW.started_ms, NEW.finished_ms));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER usage_hours_jobs AFTER INSERT OR DELETE ON jobs
    FOR EACH ROW EXECUTE FUNCTION usage_hours_jobs();
CREATE TRIGGER usage_hours_jobs_update
    AFTER UPDATE OF created_ms, agent, tokens_in, tokens_out, cost_usd, started_ms, finished_ms ON jobs
    FOR EACH ROW WHEN (NEW.created_ms / 3600000 <> OLD.created_ms / 3600000 OR NEW.agent <> OLD.agent
        OR NEW.tokens_in <> OLD.tokens_in OR NEW.tokens_out <> OLD.tokens_out
        OR NEW.cost_usd <> OLD.cost_usd
        OR usage_hours_wall(NEW.started_ms, NEW.finished_ms)
            <> usage_hours_wall(OLD.started_ms, OLD.finished_ms))
    EXECUTE FUNCTION usage_hours_jobs();
",
    since: USAGE_SINCE,
};

/// The triggers on `job_activity`: a job's cache tokens, final once it settles, at its
/// job's hour and agent. A running job's activity upserts leave these columns alone, so
/// they fire once per job.
pub(super) const USAGE_ACTIVITY: Trigger = Trigger {
    name: "usage_hours_activity",
    sqlite: concat!(
        "CREATE TRIGGER usage_hours_activity_insert AFTER INSERT ON job_activity
    WHEN NEW.cache_read_tokens <> 0 OR NEW.cache_creation_tokens <> 0 BEGIN\n",
        sqlite_activity!("NEW", ""),
        "END;
CREATE TRIGGER usage_hours_activity_update
    AFTER UPDATE OF cache_read_tokens, cache_creation_tokens ON job_activity
    WHEN NEW.job_id = OLD.job_id AND (NEW.cache_read_tokens <> OLD.cache_read_tokens
        OR NEW.cache_creation_tokens <> OLD.cache_creation_tokens) BEGIN\n",
        sqlite_put!(
            "SELECT j.created_ms AS h, j.agent AS a, 0 AS n, 0 AS ti, 0 AS tou, \
             NEW.cache_read_tokens - OLD.cache_read_tokens AS cr, \
             NEW.cache_creation_tokens - OLD.cache_creation_tokens AS cw, 0 AS c, 0 AS w \
             FROM jobs j WHERE j.id = NEW.job_id"
        ),
        "END;
CREATE TRIGGER usage_hours_activity_move AFTER UPDATE OF job_id ON job_activity
    WHEN NEW.job_id <> OLD.job_id BEGIN\n",
        sqlite_activity!("OLD", "-"),
        sqlite_activity!("NEW", ""),
        "END;
CREATE TRIGGER usage_hours_activity_delete AFTER DELETE ON job_activity
    WHEN OLD.cache_read_tokens <> 0 OR OLD.cache_creation_tokens <> 0 BEGIN\n",
        sqlite_activity!("OLD", "-"),
        "END;\n"
    ),
    pg: "CREATE FUNCTION usage_hours_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.job_id = OLD.job_id THEN
            PERFORM usage_hours_put(j.created_ms, j.agent, 0, 0, 0,
                NEW.cache_read_tokens - OLD.cache_read_tokens,
                NEW.cache_creation_tokens - OLD.cache_creation_tokens, 0, 0)
                FROM jobs j WHERE j.id = NEW.job_id;
            RETURN NULL;
        END IF;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM usage_hours_put(j.created_ms, j.agent, 0, 0, 0, -OLD.cache_read_tokens,
            -OLD.cache_creation_tokens, 0, 0) FROM jobs j WHERE j.id = OLD.job_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM usage_hours_put(j.created_ms, j.agent, 0, 0, 0, NEW.cache_read_tokens,
            NEW.cache_creation_tokens, 0, 0) FROM jobs j WHERE j.id = NEW.job_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER usage_hours_activity_insert AFTER INSERT ON job_activity
    FOR EACH ROW WHEN (NEW.cache_read_tokens <> 0 OR NEW.cache_creation_tokens <> 0)
    EXECUTE FUNCTION usage_hours_activity();
CREATE TRIGGER usage_hours_activity_update
    AFTER UPDATE OF job_id, cache_read_tokens, cache_creation_tokens ON job_activity
    FOR EACH ROW WHEN (NEW.job_id <> OLD.job_id OR NEW.cache_read_tokens <> OLD.cache_read_tokens
        OR NEW.cache_creation_tokens <> OLD.cache_creation_tokens)
    EXECUTE FUNCTION usage_hours_activity();
CREATE TRIGGER usage_hours_activity_delete AFTER DELETE ON job_activity
    FOR EACH ROW WHEN (OLD.cache_read_tokens <> 0 OR OLD.cache_creation_tokens <> 0)
    EXECUTE FUNCTION usage_hours_activity();
",
    since: USAGE_SINCE,
};

/// The version whose migration made a settled job's delta wait for its commit.
pub(super) const USAGE_DEFERRED_SINCE: usize = 17;

/// On PostgreSQL, a job's tokens, dollars and wall time reach the rollup as its
/// transaction commits rather than as it settles: every settlement of one agent in one hour
/// adds to the same row, whose lock is held until commit, so daemons settling side by side
/// (`store::scope`) queued on it for the rest of their transactions. A deferred delta is
/// the change of the row as it was written (its `OLD` and `NEW`), so it adds up the same
/// whenever it fires; a move to another hour or agent stays immediate, as it reads the
/// job's cache tokens. `usage::rollup_now` fires what is pending for a reader within the
/// same transaction (the claim's daily caps). SQLite's writers run one at a time.
pub(super) const USAGE_JOBS_DEFERRED: Trigger = Trigger {
    name: "usage_hours_jobs_delta",
    sqlite: "",
    pg: "DROP TRIGGER usage_hours_jobs_update ON jobs;
CREATE TRIGGER usage_hours_jobs_move AFTER UPDATE OF created_ms, agent ON jobs
    FOR EACH ROW WHEN (NEW.created_ms / 3600000 <> OLD.created_ms / 3600000 OR NEW.agent <> OLD.agent)
    EXECUTE FUNCTION usage_hours_jobs();
CREATE CONSTRAINT TRIGGER usage_hours_jobs_delta
    AFTER UPDATE OF tokens_in, tokens_out, cost_usd, started_ms, finished_ms ON jobs
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.created_ms / 3600000 = OLD.created_ms / 3600000 AND NEW.agent = OLD.agent
        AND (NEW.tokens_in <> OLD.tokens_in OR NEW.tokens_out <> OLD.tokens_out
            OR NEW.cost_usd <> OLD.cost_usd
            OR usage_hours_wall(NEW.started_ms, NEW.finished_ms)
                <> usage_hours_wall(OLD.started_ms, OLD.finished_ms)))
    EXECUTE FUNCTION usage_hours_jobs();
",
    since: USAGE_DEFERRED_SINCE,
};

/// The rollup of the jobs a store already holds (both backends).
pub(super) const USAGE_FROM_JOBS: &str = "INSERT INTO usage_hours(hour_ms, agent, jobs, tokens_in,
    tokens_out, cache_read, cache_write, cost_usd, wall_ms)
    SELECT j.created_ms / 3600000 * 3600000, j.agent, COUNT(*), sum(j.tokens_in), sum(j.tokens_out),
        coalesce(sum(a.cache_read_tokens), 0), coalesce(sum(a.cache_creation_tokens), 0), sum(j.cost_usd),
        sum(CASE WHEN j.started_ms IS NULL OR j.finished_ms IS NULL THEN 0
            ELSE j.finished_ms - j.started_ms END)
    FROM jobs j LEFT JOIN job_activity a ON a.job_id = j.id
    GROUP BY j.created_ms / 3600000 * 3600000, j.agent;";
