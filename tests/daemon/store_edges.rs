//! Issue 25's store edges through the real binary: one daemon per SQLite file however it
//! is reached (another home with `--store`, `GITMOOT_STORE`, `[store] url`, a control
//! room), and the store going away under a running daemon (a full disk on a tmpfs the test
//! mounts, the file deleted or replaced, the home removed), each said loudly.

use gitmoot_test_support as support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::daemon::{alive, read_pid, result};
use support::{gitmoot, job_state as state, json, shell_agent, wait_until};

const WAIT: Duration = Duration::from_secs(60);

/// A home ticking every 100 ms, holding a `config.toml` with `extra` appended.
fn home(dir: &Path, name: &str, extra: &str) -> PathBuf {
    support::configured_home(dir, name, &format!("[daemon]\ntick = \"100ms\"\n{extra}"))
}

/// A shell agent that writes its pid to `<dir>/<name>.pid`, works `secs`, then approves;
/// returns the pid file.
fn sleeper(home: &Path, dir: &Path, name: &str, secs: u32) -> PathBuf {
    let pidfile = dir.join(format!("{name}.pid"));
    let script = format!(
        "cat >/dev/null\necho $$ > {}\nsleep {secs}\necho '{}'",
        pidfile.display(),
        result("approved", "slept")
    );
    shell_agent(home, name, &script, &[]);
    pidfile
}

fn submit(home: &Path, agent: &str) -> String {
    let args = ["job", "run", "--agent", agent, "--json", "work"];
    json(home, &args)["id"].as_str().unwrap().to_string()
}

/// The pid in `pidfile` once the agent wrote it.
fn started(pidfile: &Path) -> i32 {
    wait_until("the agent to start", WAIT, || {
        std::fs::read_to_string(pidfile).is_ok_and(|t| t.ends_with('\n'))
    });
    read_pid(pidfile)
}

/// `gitmoot --home HOME daemon run` in the background with its stderr lines collected.
struct Daemon {
    child: Child,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    fn start(home: &Path) -> Self {
        let mut child = Command::new(support::bin())
            .arg("--home")
            .arg(home)
            .args(["daemon", "run", "--parallel", "2"])
            .env_remove("GITMOOT_HOME")
            .env_remove("GITMOOT_STORE")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let lines = stderr.clone();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        Self { child, stderr }
    }

    fn lines(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// The lines of stderr holding every one of `needles`.
    fn said(&self, needles: &[&str]) -> Vec<String> {
        let hit = |l: &String| needles.iter().all(|n| l.contains(n));
        self.lines().into_iter().filter(hit).collect()
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for the daemon to exit on its own (killing it past `WAIT`).
    fn exit(&mut self) -> std::process::ExitStatus {
        let mut status = None;
        support::daemon::wait_until(WAIT, || {
            status = self.child.try_wait().unwrap();
            status.is_some()
        });
        status.unwrap_or_else(|| {
            let _ = self.child.kill();
            panic!("the daemon kept running: {:?}", self.lines())
        })
    }

    /// Stops the daemon with SIGTERM and returns how it exited.
    fn stop(mut self) -> std::process::ExitStatus {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.exit()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A home `a` whose `slow` agent works `secs` on one job under a daemon that runs it.
struct Working {
    home: PathBuf,
    job: String,
    daemon: Daemon,
    agent: i32,
}

fn working(dir: &Path, secs: u32) -> Working {
    let home = home(dir, "a", "");
    let pidfile = sleeper(&home, dir, "slow", secs);
    let job = submit(&home, "slow");
    let daemon = Daemon::start(&home);
    let agent = started(&pidfile);
    Working {
        home,
        job,
        daemon,
        agent,
    }
}

/// The URL that names `home`'s own SQLite file.
fn url_of(home: &Path) -> String {
    format!("sqlite:{}", home.join("gitmoot.db").display())
}

/// A daemon that `cmd` tried to start beside the running one: it must refuse, naming the
/// holder's pid and home, and exit non-zero.
fn refused(mut cmd: assert_cmd::Command, holder: u32, holder_home: &Path) {
    let out = cmd
        .args(["daemon", "run", "--until-idle"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a second daemon started: {err}");
    let named = format!("pid {holder}, home {}", holder_home.display());
    assert!(err.contains(&named), "{err}");
    assert!(err.contains("gitmoot.db.lock"), "{err}");
}

#[test]
fn a_second_daemon_on_one_sqlite_file_is_refused_however_it_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let Working {
        home: a,
        job,
        mut daemon,
        agent,
    } = working(dir.path(), 4);
    let url = url_of(&a);
    let b = home(dir.path(), "b", "");
    let mut by_flag = gitmoot(&b);
    by_flag.args(["--store", &url]);
    refused(by_flag, daemon.child.id(), &a);
    let c = home(dir.path(), "c", "");
    let mut by_env = gitmoot(&c);
    by_env.env("GITMOOT_STORE", &url);
    refused(by_env, daemon.child.id(), &a);
    let d = home(dir.path(), "d", &format!("[store]\nurl = \"{url}\"\n"));
    refused(gitmoot(&d), daemon.child.id(), &a);
    assert!(
        alive(agent),
        "a refused daemon's recovery killed the running agent"
    );
    assert!(daemon.running(), "{:?}", daemon.lines());
    wait_until("the job to succeed", WAIT, || {
        state(&a, &job) == "succeeded"
    });
    // `daemon status` and `daemon stop` from the other home find the daemon by the same lock.
    let status = json(&d, &["daemon", "status", "--json"]);
    assert_eq!(status["pid"].as_u64(), Some(daemon.child.id() as u64));
    support::stdout(&b, &["--store", &url, "daemon", "stop"]);
    assert!(daemon.exit().success(), "{:?}", daemon.lines());
}

#[test]
fn a_control_room_on_another_daemons_store_attaches_instead_of_starting_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let Working {
        home: a,
        job,
        mut daemon,
        agent,
    } = working(dir.path(), 4);
    let b = home(dir.path(), "b", "");
    let url = url_of(&a);
    let t = support::tmux::Tmux::control_room("storelock", &b, &format!("--store {url}"));
    t.wait_for("daemon attached", WAIT);
    assert!(
        alive(agent),
        "the control room's daemon killed the running agent"
    );
    wait_until("the job to succeed", WAIT, || {
        state(&a, &job) == "succeeded"
    });
    assert!(daemon.running(), "{:?}", daemon.lines());
    t.quit(WAIT);
    assert!(daemon.stop().success());
}

/// A tmpfs of `size` mounted at `at` for the test's life, or why it could not be.
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, size: &str) -> Result<Self, String> {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output()
            .map_err(|e| e.to_string())?;
        match out.status.success() {
            true => Ok(Self(at.to_path_buf())),
            false => Err(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes zeros into `path` until the disk under it is full.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 64 * 1024];
    while file.write_all(&block).is_ok() {}
    let _ = file.sync_all();
}

#[test]
fn a_full_disk_keeps_the_jobs_says_so_once_and_resumes_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mount = match Mount::tmpfs(&dir.path().join("disk"), "8m") {
        Ok(m) => m,
        Err(why) => {
            println!("SKIPPED: cannot mount a tmpfs to fill ({why})");
            return;
        }
    };
    let db = mount.0.join("gitmoot.db");
    let extra = format!(
        "lease = \"1s\"\n[store]\nurl = \"sqlite:{}\"\n",
        db.display()
    );
    let a = home(dir.path(), "a", &extra);
    let quick = sleeper(&a, dir.path(), "quick", 2);
    let slow = sleeper(&a, dir.path(), "slow", 8);
    let jobs = [submit(&a, "quick"), submit(&a, "slow")];
    let mut daemon = Daemon::start(&a);
    let quick_pid = started(&quick);
    started(&slow);
    let filler = mount.0.join("filler");
    fill(&filler);
    let full = [db.to_str().unwrap(), "is full"];
    wait_until("the daemon to say the disk is full", WAIT, || {
        !daemon.said(&full).is_empty()
    });
    // The quick agent ends while nothing can be written: its job waits in the daemon.
    wait_until("the quick agent to end", WAIT, || !alive(quick_pid));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(daemon.running(), "{:?}", daemon.lines());
    std::fs::remove_file(&filler).unwrap();
    wait_until("the daemon to resume", WAIT, || {
        !daemon.said(&["writable again"]).is_empty()
    });
    for job in &jobs {
        wait_until("the job to succeed", WAIT, || state(&a, job) == "succeeded");
    }
    assert_eq!(daemon.said(&full).len(), 1, "{:?}", daemon.lines());
    assert!(daemon.stop().success());
}

#[test]
fn a_store_deleted_under_its_daemon_stops_it_loudly_and_no_empty_store_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let Working {
        home: a,
        mut daemon,
        ..
    } = working(dir.path(), 1);
    let db = a.join("gitmoot.db");
    std::fs::remove_file(&db).unwrap();
    assert!(!daemon.exit().success(), "{:?}", daemon.lines());
    let named = daemon.said(&[db.to_str().unwrap(), "deleted"]);
    assert_eq!(named.len(), 1, "{:?}", daemon.lines());
    let out = gitmoot(&a).args(["job", "list"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an empty store was opened");
    assert!(
        err.contains(db.to_str().unwrap()) && err.contains("missing"),
        "{err}"
    );
    assert!(
        !db.exists(),
        "the CLI made an empty store in the lost one's place"
    );
}

#[test]
fn a_store_replaced_under_its_daemon_stops_it_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let Working {
        home: a,
        mut daemon,
        ..
    } = working(dir.path(), 1);
    let db = a.join("gitmoot.db");
    let copy = a.join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    std::fs::rename(&copy, &db).unwrap();
    assert!(!daemon.exit().success(), "{:?}", daemon.lines());
    let named = daemon.said(&[db.to_str().unwrap(), "replaced"]);
    assert_eq!(named.len(), 1, "{:?}", daemon.lines());
}

#[test]
fn a_home_removed_under_its_daemon_stops_it_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let Working {
        home: a,
        mut daemon,
        ..
    } = working(dir.path(), 1);
    // The daemon keeps writing its status file, so removal can race with it.
    wait_until("the home to be removed", WAIT, || {
        std::fs::remove_dir_all(&a).is_ok()
    });
    assert!(!daemon.exit().success(), "{:?}", daemon.lines());
    let said = daemon.said(&[a.to_str().unwrap(), "removed"]);
    assert_eq!(said.len(), 1, "{:?}", daemon.lines());
    assert!(!a.exists(), "the daemon made the removed home again");
}
