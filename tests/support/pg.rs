//! A throwaway PostgreSQL cluster for the tests: `initdb` into a temp dir, `pg_ctl start` on
//! a free port with its unix socket in that dir, one database per test, and everything
//! stopped and removed when the last handle drops.
//!
//! A cluster that cannot start fails the test with the reason and the server's log: the
//! PostgreSQL runs are part of the suite, never skipped. As root (CI), `initdb` refuses to
//! run, so the cluster belongs to the `postgres` user and every server command runs as it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tempfile::TempDir;

/// The role every test connects as; the cluster trusts local connections.
const USER: &str = "gitmoot";

/// One running cluster. Dropping it stops the server and removes its files.
pub struct Cluster {
    dir: TempDir,
    port: u16,
    bin: PathBuf,
    owner: Option<Owner>,
}

/// The unprivileged account that owns the cluster when the tests run as root.
#[derive(Clone, Copy)]
struct Owner {
    uid: u32,
    gid: u32,
}

/// One database of a cluster, dropped with the handle. Holds the cluster alive.
pub struct Database {
    cluster: Arc<Cluster>,
    name: String,
}

/// The lease of a fleet host's daemons (`host`): short, so a lost one is noticed quickly.
pub const LEASE_MS: u64 = 2_000;

/// A host's home `dir/name` on the store at `url`: its daemon ticks every 100 ms and holds a
/// `LEASE_MS` lease.
pub fn host(dir: &Path, name: &str, url: &str) -> PathBuf {
    crate::configured_home(
        dir,
        name,
        &format!(
            "[daemon]\ntick = \"100ms\"\nlease = \"{LEASE_MS}ms\"\n\n[store]\nurl = \"{url}\"\n"
        ),
    )
}

/// The cluster this test binary shares: started by the first test that asks, stopped when
/// no test holds a database of it any more.
static SHARED: Mutex<Weak<Cluster>> = Mutex::new(Weak::new());

/// A fresh, empty database on this binary's shared cluster.
pub fn database() -> Database {
    let cluster = {
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        match shared.upgrade() {
            Some(c) => c,
            None => {
                let c = Arc::new(Cluster::start());
                *shared = Arc::downgrade(&c);
                c
            }
        }
    };
    cluster.database()
}

impl Cluster {
    /// Creates and starts a cluster of its own; panics with the reason when it cannot.
    pub fn start() -> Self {
        let bin = server_bin();
        let dir = tempfile::Builder::new()
            .prefix("gitmoot-pg")
            .tempdir()
            .unwrap_or_else(|e| panic!("PostgreSQL test cluster: no temp dir: {e}"));
        let owner = (unsafe { libc::geteuid() } == 0).then(postgres_account);
        if let Some(o) = owner {
            std::os::unix::fs::chown(dir.path(), Some(o.uid), Some(o.gid))
                .unwrap_or_else(|e| panic!("PostgreSQL test cluster: chown the temp dir: {e}"));
        }
        let mut cluster = Self {
            dir,
            port: 0,
            bin,
            owner,
        };
        let data = cluster.data_dir();
        cluster.run(
            "initdb",
            &[
                "-D",
                path_str(&data),
                "-U",
                USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
        );
        // A port another process takes between our probe and the server's bind fails the
        // start; a few fresh ports make that race harmless.
        let mut last = String::new();
        for _ in 0..5 {
            cluster.port = free_port();
            let options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
                cluster.port,
                path_str(cluster.dir.path())
            );
            let log = cluster.dir.path().join("server.log");
            match cluster.try_run(
                "pg_ctl",
                &[
                    "-D",
                    path_str(&data),
                    "-l",
                    path_str(&log),
                    "-o",
                    &options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
            ) {
                Ok(()) => return cluster,
                Err(e) => {
                    last = format!("{e}\n{}", std::fs::read_to_string(&log).unwrap_or_default())
                }
            }
        }
        panic!("PostgreSQL test cluster did not start: {last}");
    }

    /// A new empty database on this cluster.
    pub fn database(self: &Arc<Self>) -> Database {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.admin(&format!("CREATE DATABASE {name}"));
        Database {
            cluster: Arc::clone(self),
            name,
        }
    }

    /// `pg_ctl restart -m fast`: the server ends every connection, then comes back on the
    /// same port and socket (the options it was started with are kept in its data folder).
    pub fn restart_fast(&self) {
        let data = self.data_dir();
        let log = self.dir.path().join("server.log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                path_str(&data),
                "-l",
                path_str(&log),
                "-m",
                "fast",
                "-w",
                "-t",
                "60",
                "restart",
            ],
        );
    }

    /// The folder the server's files and socket live in (gone once the cluster drops).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A connection URL for `db` through the cluster's unix socket.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres:///{db}?host={}&port={}&user={USER}",
            path_str(self.dir.path()),
            self.port
        )
    }

    /// A connection URL for `db` over TCP on the loopback address.
    pub fn tcp_url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one statement on the maintenance database.
    fn admin(&self, sql: &str) {
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .unwrap_or_else(|e| panic!("PostgreSQL test cluster: connect: {e}"));
        client
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("PostgreSQL test cluster: {sql}: {e}"));
    }

    fn run(&self, tool: &str, args: &[&str]) {
        if let Err(e) = self.try_run(tool, args) {
            panic!("PostgreSQL test cluster: {e}");
        }
    }

    /// Runs a server tool, as the cluster's owner when that is not us.
    fn try_run(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let exe = self.bin.join(tool);
        let mut cmd = match self.owner {
            Some(_) => {
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        // The server inherits no pipe of ours (it logs to its file), so waiting for the
        // tool's own output never waits for the server.
        let out = cmd
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} {}: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data_dir();
        // Immediate: the files are removed next, nothing needs to be flushed.
        let _ = self.try_run(
            "pg_ctl",
            &["-D", path_str(&data), "-m", "immediate", "-w", "stop"],
        );
    }
}

impl Database {
    /// The URL a store opens this database with (unix socket).
    pub fn url(&self) -> String {
        self.cluster.url(&self.name)
    }

    /// The same database over TCP.
    pub fn tcp_url(&self) -> String {
        self.cluster.tcp_url(&self.name)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // FORCE: a store the test leaked (a panic mid-way) must not keep the database.
        if let Ok(mut c) = postgres::Client::connect(&self.cluster.url("postgres"), postgres::NoTls)
        {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// The folder holding `initdb` and `pg_ctl`: from PATH, else Debian's versioned folder
/// (the newest), which the `postgresql` package does not put on PATH.
fn server_bin() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path().join("bin")).collect();
            v.sort_by_key(|p| {
                p.parent()
                    .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
                    .unwrap_or(0)
            });
            v.reverse();
            v
        })
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain(debian)
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
        .unwrap_or_else(|| {
            panic!(
                "PostgreSQL test cluster: no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin; \
                 install the postgresql package (.ci/run does)"
            )
        })
}

fn postgres_account() -> Owner {
    let name = c"postgres";
    // SAFETY: a NUL-terminated name; the record is read before any other getpw* call.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        panic!(
            "PostgreSQL test cluster: running as root needs a `postgres` user to own the cluster \
             (initdb refuses root); the postgresql package creates it"
        );
    }
    // SAFETY: non-null, just returned by getpwnam.
    let pw = unsafe { &*pw };
    Owner {
        uid: pw.pw_uid,
        gid: pw.pw_gid,
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("PostgreSQL test cluster: no free port: {e}"))
}

fn path_str(p: &Path) -> &str {
    p.to_str()
        .unwrap_or_else(|| panic!("PostgreSQL test cluster: non-UTF-8 path {}", p.display()))
}

/// Which store a suite runs on; each suite's module names it, so the one `cargo test`
/// runs the engine and chat suites on both backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A backend as a type, for harnesses whose constructors take no arguments.
pub trait OnBackend {
    const BACKEND: Backend;
}

/// The SQLite file `gitmoot.db` in the test's folder.
pub struct Sqlite;
/// A fresh database on this binary's throwaway cluster.
pub struct Postgres;

impl OnBackend for Sqlite {
    const BACKEND: Backend = Backend::Sqlite;
}
impl OnBackend for Postgres {
    const BACKEND: Backend = Backend::Postgres;
}

/// The store a suite runs on: on `Sqlite`, the file `dir/gitmoot.db`; on `Postgres`, a
/// fresh database on this binary's throwaway cluster, which the returned handle keeps (drop
/// it after the store).
pub fn test_store(dir: &Path, backend: Backend) -> (gitmoot::store::Store, Option<Database>) {
    use gitmoot::store::{Location, Store};
    match backend {
        Backend::Sqlite => (Store::open(&dir.join("gitmoot.db")).unwrap(), None),
        Backend::Postgres => {
            let db = database();
            let store = Store::open_location(&Location::Postgres(db.url()))
                .unwrap_or_else(|e| panic!("PostgreSQL test store: {e}"));
            (store, Some(db))
        }
    }
}

/// `test_store` on SQLite, for a suite module that names its backend by importing this.
pub mod on_sqlite {
    pub use super::*;

    pub fn test_store(dir: &Path) -> (gitmoot::store::Store, Option<Database>) {
        super::test_store(dir, Backend::Sqlite)
    }
}

/// `test_store` on PostgreSQL, for a suite module that names its backend by importing this.
pub mod on_postgres {
    pub use super::*;

    pub fn test_store(dir: &Path) -> (gitmoot::store::Store, Option<Database>) {
        super::test_store(dir, Backend::Postgres)
    }
}
