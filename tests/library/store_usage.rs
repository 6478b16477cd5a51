//! The usage rollup (`usage_hours`) on both backends: equal to a sum over the jobs after
//! inserts, claims, settlements, cache-token writes, a job moved and a job deleted, an
//! activity row moved and deleted; filled from what a store of the previous version holds;
//! and `usage`, the daily caps' spend and the hourly spend read from it, checked by hand.

use gitmoot_test_support as support;

use gitmoot::clock::{DAY_MS, HOUR_MS, utc_date};

/// Epoch milliseconds.
type Millis = i64;
use gitmoot::domain::{Action, JobKind, JobState, UsageBy};
use gitmoot::store::activity;
use gitmoot::store::agents::{self, Agent};
use gitmoot::store::jobs::{self, Job};
use gitmoot::store::runs::{self, Run};
use gitmoot::store::tx::params;
use gitmoot::store::usage::{self, Figures, Tokens};
use gitmoot::store::{Backend, Location, PG_SCHEMA_VERSION, SCHEMA_VERSION, Store, Tx};

/// A UTC midnight: the day the jobs below are made on.
const D: Millis = 20_000 * DAY_MS;
const MIN: Millis = 60_000;

/// A store of each backend, with what keeps it alive (its temp dir or its database), and
/// where it lives so it can be opened again.
fn stores() -> Vec<(Store, Location, Box<dyn std::any::Any>)> {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Location::Sqlite(dir.path().join("gitmoot.db"));
    let db = support::pg::database();
    let pg = Location::Postgres(db.url());
    vec![
        (
            Store::open_location(&sqlite).unwrap(),
            sqlite,
            Box::new(dir),
        ),
        (Store::open_location(&pg).unwrap(), pg, Box::new(db)),
    ]
}

/// One row per hour and agent: `(hour, agent, jobs, in, out, cache read, cache write,
/// micro-dollars, finished wall)`.
type Hour = (Millis, String, i64, i64, i64, i64, i64, i64, i64);

fn hours(tx: &Tx<'_>, sql: &str) -> Vec<Hour> {
    tx.query_map(sql, params![], |r| {
        let usd: f64 = r.get(7)?;
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            (usd * 1e6).round() as i64,
            r.get(8)?,
        ))
    })
    .unwrap()
}

/// The rollup as the triggers keep it.
fn rolled(tx: &Tx<'_>) -> Vec<Hour> {
    hours(
        tx,
        "SELECT hour_ms, agent, jobs, tokens_in, tokens_out, cache_read, cache_write, cost_usd,
             wall_ms FROM usage_hours WHERE jobs <> 0 ORDER BY hour_ms, agent",
    )
}

/// The same figures summed from the jobs and their activity rows.
fn summed(tx: &Tx<'_>) -> Vec<Hour> {
    hours(
        tx,
        "SELECT j.created_ms / 3600000 * 3600000, j.agent, COUNT(*),
             CAST(sum(j.tokens_in) AS BIGINT), CAST(sum(j.tokens_out) AS BIGINT),
             CAST(coalesce(sum(a.cache_read_tokens), 0) AS BIGINT),
             CAST(coalesce(sum(a.cache_creation_tokens), 0) AS BIGINT), sum(j.cost_usd),
             CAST(sum(CASE WHEN j.started_ms IS NULL OR j.finished_ms IS NULL THEN 0
                 ELSE j.finished_ms - j.started_ms END) AS BIGINT)
         FROM jobs j LEFT JOIN job_activity a ON a.job_id = j.id
         GROUP BY 1, 2 ORDER BY 1, 2",
    )
}

fn assert_in_step(store: &Store, when: &str) {
    let tx = store.conn();
    assert_eq!(rolled(&tx), summed(&tx), "{when} on {:?}", store.backend());
}

/// A root job of `agent` made at `at`.
fn submit(store: &mut Store, id: &str, agent: &str, at: Millis) {
    store
        .write(|tx| {
            runs::put(tx, &Run::new(id.into(), "t".into(), None, at))?;
            jobs::put(
                tx,
                &Job::queued(
                    id.into(),
                    id.into(),
                    JobKind::Root,
                    agent.into(),
                    Action::Ask,
                    "p".into(),
                    at,
                ),
            )
        })
        .unwrap();
}

fn claim(store: &mut Store, id: &str, at: Millis) {
    store
        .write(|tx| {
            let mut j = jobs::require(tx, id)?;
            j.state = JobState::Running;
            j.started_ms = Some(at);
            j.updated_ms = at;
            jobs::put(tx, &j)
        })
        .unwrap();
}

/// Settles `id` at `at` with its tokens, dollars and cache tokens, as the daemon does.
fn settle(
    store: &mut Store,
    id: &str,
    at: Millis,
    tokens: (u64, u64),
    usd: f64,
    cache: (u64, u64),
) {
    store
        .write(|tx| {
            let mut j = jobs::require(tx, id)?;
            j.state = JobState::Succeeded;
            j.finished_ms = Some(at);
            j.tokens_in = tokens.0;
            j.tokens_out = tokens.1;
            j.cost_usd = usd;
            j.updated_ms = at;
            jobs::put(tx, &j)?;
            activity::finish(tx, id, id, at, cache.0, cache.1)
        })
        .unwrap();
}

/// Four jobs over two days and two agents: two settled, one running, one queued.
fn fleet(store: &mut Store) {
    store
        .write(|tx| {
            agents::insert(tx, &Agent::shell("ana", "true"))?;
            agents::insert(tx, &Agent::shell("bob", "true"))
        })
        .unwrap();
    submit(store, "j1", "ana", D + 10 * MIN);
    submit(store, "j4", "bob", D + 30 * MIN);
    submit(store, "j2", "bob", D + 70 * MIN);
    submit(store, "j3", "ana", D + DAY_MS + 5 * MIN);
    assert_in_step(store, "after inserts");
    claim(store, "j1", D + 11 * MIN);
    claim(store, "j4", D + 31 * MIN);
    claim(store, "j2", D + 71 * MIN);
    assert_in_step(store, "after claims");
    settle(store, "j1", D + 21 * MIN, (100, 50), 0.5, (1000, 30));
    settle(store, "j4", D + 32 * MIN, (10, 5), 0.25, (7, 3));
    assert_in_step(store, "after settlements");
    // The cache figures written again (a settlement retried): the rollup moves by the change.
    store
        .write(|tx| activity::finish(tx, "j4", "j4", D + 33 * MIN, 8, 4))
        .unwrap();
    assert_in_step(store, "after a cache-token rewrite");
}

fn figures(jobs: u64, tokens: (u64, u64, u64, u64), cost_usd: f64, wall_ms: i64) -> Figures {
    Figures {
        jobs,
        tokens: Tokens {
            input: tokens.0,
            output: tokens.1,
            cache_read: tokens.2,
            cache_write: tokens.3,
        },
        cost_usd,
        wall_ms,
    }
}

/// `(key, figures)` of every group, dollars to the micro-dollar.
fn groups(store: &Store, by: UsageBy, since: Millis, now: Millis) -> Vec<(String, Figures)> {
    usage::usage(store.conn(), by, since, now)
        .unwrap()
        .groups
        .into_iter()
        .map(|g| {
            let mut f = g.figures;
            f.cost_usd = (f.cost_usd * 1e6).round() / 1e6;
            (g.key, f)
        })
        .collect()
}

#[test]
fn the_usage_rollup_follows_every_write_on_both_backends() {
    for (mut store, _, _keep) in stores() {
        fleet(&mut store);
        let now = D + DAY_MS + 60 * MIN;
        let (day0, day1) = (utc_date(D), utc_date(D + DAY_MS));
        // j2 runs: its wall time so far (now less its start) counts though it is unsettled.
        let running = now - (D + 71 * MIN);
        let day0_all = figures(3, (110, 55, 1008, 34), 0.75, 10 * MIN + MIN + running);
        assert_eq!(
            groups(&store, UsageBy::Day, D, now),
            [
                (day0.clone(), day0_all.clone()),
                (day1.clone(), figures(1, (0, 0, 0, 0), 0.0, 0))
            ]
        );
        // A start inside an hour: that hour's part is read from the jobs (j1 falls out).
        assert_eq!(
            groups(&store, UsageBy::Day, D + 20 * MIN, now),
            [
                (day0.clone(), figures(2, (10, 5, 8, 4), 0.25, MIN + running)),
                (day1.clone(), figures(1, (0, 0, 0, 0), 0.0, 0)),
            ]
        );
        assert_eq!(
            groups(&store, UsageBy::Agent, D + 20 * MIN, now),
            [
                (
                    "bob".to_string(),
                    figures(2, (10, 5, 8, 4), 0.25, MIN + running)
                ),
                ("ana".to_string(), figures(1, (0, 0, 0, 0), 0.0, 0)),
            ]
        );
        assert_eq!(
            groups(&store, UsageBy::Agent, D, now),
            [
                (
                    "ana".to_string(),
                    figures(2, (100, 50, 1000, 30), 0.5, 10 * MIN)
                ),
                (
                    "bob".to_string(),
                    figures(2, (10, 5, 8, 4), 0.25, MIN + running)
                ),
            ]
        );
        let spent = |agent: Option<&str>, since: Millis| {
            let usd = usage::spent_since(store.conn(), agent, since).unwrap();
            (usd * 1e6).round() / 1e6
        };
        assert_eq!(spent(None, D), 0.75);
        assert_eq!(spent(Some("ana"), D), 0.5);
        assert_eq!(spent(Some("bob"), D + 20 * MIN), 0.25);
        assert_eq!(spent(None, D + 31 * MIN), 0.0);
        assert_eq!(spent(None, D + DAY_MS), 0.0);

        // Every hour from the one holding the start to the one holding now, idle ones zero.
        let by_hour: Vec<(Millis, f64)> =
            usage::spend_by_hour(store.conn(), D + 20 * MIN, D + 3 * HOUR_MS + 1)
                .unwrap()
                .into_iter()
                .map(|(h, usd)| (h, (usd * 1e6).round() / 1e6))
                .collect();
        assert_eq!(
            by_hour,
            [
                (D, 0.25),
                (D + HOUR_MS, 0.0),
                (D + 2 * HOUR_MS, 0.0),
                (D + 3 * HOUR_MS, 0.0)
            ]
        );
        assert_eq!(
            usage::spend_by_hour(store.conn(), D, D + 30 * MIN).unwrap(),
            [(D, 0.75)]
        );

        // A job moved to another agent and hour, then one deleted (no path deletes jobs
        // today; the rollup must not care which writer does).
        store
            .write(|tx| {
                tx.execute(
                    "UPDATE jobs SET agent = 'bob', created_ms = ?2 WHERE id = ?1",
                    params!["j1", D + 3 * HOUR_MS],
                )
            })
            .unwrap();
        assert_in_step(&store, "after a job moved");
        store
            .write(|tx| tx.execute("DELETE FROM jobs WHERE id = ?1", params!["j4"]))
            .unwrap();
        assert_in_step(&store, "after a delete");
        let move_activity = |store: &mut Store, from: &str, to: &str| {
            store
                .write(|tx| {
                    tx.execute(
                        "UPDATE job_activity SET job_id = ?2 WHERE job_id = ?1",
                        params![from, to],
                    )
                })
                .unwrap();
        };
        move_activity(&mut store, "j1", "j2");
        assert_in_step(&store, "after an activity row moved to another job");
        move_activity(&mut store, "j2", "j1");
        store
            .write(|tx| tx.execute("DELETE FROM job_activity WHERE job_id = ?1", params!["j1"]))
            .unwrap();
        assert_in_step(&store, "after an activity row deleted");
    }
}

/// A store of the version before the rollup: its objects (and the later stall index)
/// dropped and its version set back past them and the migrations after (which hold when
/// run again).
fn back_to_the_previous_version(store: &mut Store) {
    let sql = match store.backend() {
        Backend::Sqlite => format!(
            "DROP TRIGGER usage_hours_jobs_insert; DROP TRIGGER usage_hours_jobs_update;
             DROP TRIGGER usage_hours_jobs_move; DROP TRIGGER usage_hours_jobs_delete;
             DROP TRIGGER usage_hours_activity_insert; DROP TRIGGER usage_hours_activity_update;
             DROP TRIGGER usage_hours_activity_move; DROP TRIGGER usage_hours_activity_delete;
             DROP INDEX jobs_unfinished; DROP INDEX events_stall;
             DROP TABLE usage_hours; DROP TABLE job_lands; PRAGMA user_version = {};",
            SCHEMA_VERSION - 5
        ),
        Backend::Postgres => format!(
            "DROP FUNCTION usage_hours_jobs() CASCADE; DROP FUNCTION usage_hours_activity() CASCADE;
             DROP FUNCTION usage_hours_put; DROP FUNCTION usage_hours_wall;
             DROP INDEX jobs_unfinished; DROP INDEX events_stall; DROP TABLE usage_hours;
             DROP TABLE job_lands; UPDATE schema_version SET version = {};",
            PG_SCHEMA_VERSION - 5
        ),
    };
    store.write(|tx| tx.batch(&sql)).unwrap();
}

#[test]
fn a_store_of_the_previous_version_gets_its_rollup_filled_on_both_backends() {
    for (mut store, location, _keep) in stores() {
        fleet(&mut store);
        back_to_the_previous_version(&mut store);
        // Written while no trigger kept a rollup: only the migration's fill can count these.
        submit(&mut store, "j5", "ana", D + 2 * DAY_MS);
        claim(&mut store, "j3", D + DAY_MS + 6 * MIN);
        settle(
            &mut store,
            "j3",
            D + DAY_MS + 9 * MIN,
            (4, 2),
            0.125,
            (40, 20),
        );
        let want = summed(&store.conn());
        drop(store);
        let store = Store::open_location(&location).unwrap();
        assert_eq!(rolled(&store.conn()), want, "{location:?}");
        assert_eq!(want.len(), 5);
        assert_in_step(&store, "after the migration");
    }
}
