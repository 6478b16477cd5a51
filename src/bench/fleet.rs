//! `bench --only fleet`: the backend column. The same trivial jobs through one daemon on a
//! SQLite home, and through 1, 2 and 4 daemons sharing one PostgreSQL store, each daemon a
//! real `gitmoot daemon run --parallel 4` process with a home of its own (as separate
//! hosts would have); the claim latency of jobs submitted one at a time to an idle fleet
//! (from `queued` to `running`, p50 and p99); and chat sends per second on each backend.
//!
//! PostgreSQL figures need a server the bench may create and drop databases on, named by
//! `--pg URL` or `$GITMOOT_BENCH_PG`; without one they are reported as skipped. Owns only
//! the measurement; the SQL here manages the bench's own scratch databases.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::chat::messages::{SendOptions, send_message};
use crate::chat::threads::{self, NewThread};
use crate::clock::SystemClock;
use crate::domain::JobState;
use crate::store::{Location, Store, agents, jobs};

use super::daemon::{AGENT_COMMAND, submit};

/// Jobs per throughput pass.
const JOBS: usize = 400;
/// Jobs submitted one at a time for the claim latency, and the pause between them.
const TRICKLE: usize = 40;
const TRICKLE_GAP: Duration = Duration::from_millis(50);
/// Chat sends per backend.
const SENDS: usize = 2_000;

/// One store to measure on: a SQLite file, or a fresh database on the PostgreSQL server.
enum Target {
    Sqlite,
    Postgres { server: String },
}

impl Target {
    fn name(&self) -> &'static str {
        match self {
            Target::Sqlite => "sqlite",
            Target::Postgres { .. } => "postgres",
        }
    }
}

pub(crate) fn bench_fleet(pg: Option<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    super::in_scratch("fleet", |dir| {
        let mut passes = vec![(Target::Sqlite, 1)];
        match &pg {
            Some(server) => {
                for n in [1, 2, 4] {
                    passes.push((
                        Target::Postgres {
                            server: server.clone(),
                        },
                        n,
                    ));
                }
            }
            None => out.push((
                "fleet.postgres".into(),
                "skipped (no --pg URL or $GITMOOT_BENCH_PG)".into(),
            )),
        }
        for (i, (target, daemons)) in passes.iter().enumerate() {
            let root = dir.join(format!("pass{i}"));
            // One configuration failing leaves the others' figures standing.
            let figures = pass(&root, target, *daemons).unwrap_or_else(|e| {
                let figure = format!("fleet.{}.{daemons}_daemons.error", target.name());
                vec![super::Failure::new(figure, e).row()]
            });
            out.extend(figures);
        }
    });
    out
}

/// One configuration: throughput, claim latency and (with one daemon) chat sends.
fn pass(dir: &Path, target: &Target, daemons: usize) -> Result<Vec<(String, String)>, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
    let scratch = ScratchDb::new(target)?;
    let url = scratch
        .url
        .clone()
        .unwrap_or_else(|| format!("sqlite:{}", dir.join("shared.db").display()));
    let mut store =
        Store::open_location(&Location::parse(&url).map_err(|e| err(&e))?).map_err(|e| err(&e))?;
    agents::insert(store.conn(), &super::shell_agent("bench", AGENT_COMMAND))
        .map_err(|e| err(&e))?;
    let prefix = format!("fleet.{}.{daemons}_daemons", target.name());
    let mut out = Vec::new();

    submit(&mut store, JOBS)?;
    let started = Instant::now();
    let fleet = spawn(dir, &url, daemons, true)?;
    for mut d in fleet {
        let status = d.wait().map_err(|e| err(&e))?;
        if !status.success() {
            return Err(format!("a daemon exited with {status}"));
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let done = jobs::count_state(store.conn(), JobState::Succeeded).map_err(|e| err(&e))?;
    out.push((
        format!("{prefix}.jobs_per_s"),
        format!("{:.0}", done as f64 / secs),
    ));

    // Claim latency: an idle fleet, jobs arriving one by one.
    let fleet = spawn(dir, &url, daemons, false)?;
    std::thread::sleep(Duration::from_millis(500));
    let mut ids = Vec::new();
    for _ in 0..TRICKLE {
        ids.extend(submit(&mut store, 1)?);
        std::thread::sleep(TRICKLE_GAP);
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut waits: Vec<i64> = Vec::new();
    while Instant::now() < deadline {
        waits = ids
            .iter()
            .filter_map(|id| jobs::get(store.conn(), id).ok().flatten())
            .filter_map(|j| Some(j.started_ms? - j.created_ms))
            .collect();
        if waits.len() == ids.len() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    stop(fleet);
    waits.sort_unstable();
    let pct = |p: f64| {
        waits
            .get(((waits.len() as f64 - 1.0) * p).round() as usize)
            .copied()
    };
    if let (Some(p50), Some(p99)) = (pct(0.5), pct(0.99)) {
        out.push((format!("{prefix}.claim_latency_p50_ms"), p50.to_string()));
        out.push((format!("{prefix}.claim_latency_p99_ms"), p99.to_string()));
    }

    if daemons == 1 {
        let thread = crate::chat::write_retry(&mut store, |tx| {
            threads::create(
                tx,
                &SystemClock,
                NewThread {
                    name: "bench",
                    repo: "bench/fleet",
                    title: None,
                    created_by: "human",
                },
            )
        })
        .map_err(|e| err(&e))?;
        let started = Instant::now();
        for i in 0..SENDS {
            let body = format!("@bench look at item {i}");
            send_message(
                &mut store,
                &SystemClock,
                &thread.id,
                None,
                &body,
                &SendOptions::default(),
            )
            .map_err(|e| err(&e))?;
        }
        out.push((
            format!("fleet.{}.chat_sends_per_s", target.name()),
            format!("{:.0}", SENDS as f64 / started.elapsed().as_secs_f64()),
        ));
    }
    drop(store);
    drop(scratch);
    Ok(out)
}

/// `daemons` daemon processes, each with a home of its own, on the store at `url`.
fn spawn(dir: &Path, url: &str, daemons: usize, until_idle: bool) -> Result<Vec<Child>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    (0..daemons)
        .map(|i| {
            let home = dir.join(format!("host{i}"));
            std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
            std::fs::write(home.join("config.toml"), "[daemon]\ntick = \"1s\"\n")
                .map_err(|e| e.to_string())?;
            let mut c = Command::new(&exe);
            c.arg("--home")
                .arg(&home)
                .args(["--store", url, "daemon", "run", "--parallel", "4"])
                .env_remove("GITMOOT_STORE")
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if until_idle {
                c.arg("--until-idle");
            }
            c.spawn().map_err(|e| e.to_string())
        })
        .collect()
}

fn stop(fleet: Vec<Child>) {
    for mut d in fleet {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(d.id() as i32, libc::SIGTERM) };
        let _ = d.wait();
    }
}

/// A database of its own on the PostgreSQL server for one pass, dropped afterwards; none
/// for SQLite (the pass's folder holds its file).
struct ScratchDb {
    server: Option<String>,
    name: String,
    url: Option<String>,
}

impl ScratchDb {
    fn new(target: &Target) -> Result<Self, String> {
        let Target::Postgres { server } = target else {
            return Ok(Self {
                server: None,
                name: String::new(),
                url: None,
            });
        };
        let name = format!("gitmoot_bench_{}", crate::ids::random_hex(6));
        admin(server, &format!("CREATE DATABASE {name}"))?;
        Ok(Self {
            url: Some(with_database(server, &name)),
            server: Some(server.clone()),
            name,
        })
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        if let Some(server) = &self.server {
            let _ = admin(
                server,
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            );
        }
    }
}

fn admin(server: &str, sql: &str) -> Result<(), String> {
    let mut client =
        postgres::Client::connect(server, postgres::NoTls).map_err(|e| format!("{server}: {e}"))?;
    client.batch_execute(sql).map_err(|e| e.to_string())
}

/// `url` with its database name replaced: `postgres://u@h:5432/db?x=y` → `…/name?x=y`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base
        .find("://")
        .map(|i| i + 3)
        .and_then(|start| base[start..].find('/').map(|j| start + j))
        .unwrap_or(base.len());
    let mut out = format!("{}/{name}", &base[..authority_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn a_url_gets_another_database_and_keeps_its_options() {
        assert_eq!(
            with_database("postgres://u@h:5432/main", "b"),
            "postgres://u@h:5432/b"
        );
        assert_eq!(
            with_database("postgres:///main?host=/tmp/s&port=5433", "b"),
            "postgres:///b?host=/tmp/s&port=5433"
        );
        assert_eq!(with_database("postgres://h", "b"), "postgres://h/b");
    }
}
