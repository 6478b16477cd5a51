//! The control room's daemon and the truth about it. The daemon a control room embeds is a
//! `gitmoot daemon run` child in its own session: quitting with detach, Ctrl-z, a closed
//! terminal or a crash of the control room never stops the work it runs. The probe reads
//! the store's lock holder and the daemon's heartbeat file (never the store) so the status
//! bar follows a daemon that starts, freezes or goes away, and takes over when allowed.
//!
//! Owns that child process and the probe; decides nothing about what is drawn.

use std::fs::OpenOptions;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gitmoot_ui::view::DaemonStatus;

use crate::clock::Millis;
use crate::daemon::lock;
use crate::home::Home;

/// How often the control room re-probes the daemon.
pub(crate) const PROBE_EVERY: Duration = Duration::from_millis(500);

/// A heartbeat older than this (and at least five daemon ticks) means the daemon holding
/// the lock no longer works (stopped, wedged).
const STALE_MS: Millis = 10_000;

/// The home's daemon as this control room sees and, when allowed, runs it.
pub(crate) struct DaemonWatch {
    home: Home,
    /// Whether this control room may start a daemon (not `--no-daemon`/`--readonly`).
    may_start: bool,
    stale_ms: Millis,
    child: Option<Child>,
    /// Someone else's daemon was seen: a start after it went away is a take-over.
    saw_other: bool,
    took_over: bool,
    /// The daemon was asked to stop; it is not restarted.
    stopping: bool,
}

impl DaemonWatch {
    pub fn new(home: Home, may_start: bool, tick_ms: Millis) -> Self {
        Self {
            home,
            may_start,
            stale_ms: STALE_MS.max(5 * tick_ms),
            child: None,
            saw_other: false,
            took_over: false,
            stopping: false,
        }
    }

    /// The pid of this control room's daemon while it runs.
    pub(crate) fn own_pid(&mut self) -> Option<u32> {
        self.reap();
        self.child.as_ref().map(Child::id)
    }

    fn reap(&mut self) {
        if let Some(c) = &mut self.child
            && !matches!(c.try_wait(), Ok(None))
        {
            self.child = None;
        }
    }

    /// Reads the lock and the heartbeat; starts this control room's daemon when the home
    /// has none and it may.
    pub fn probe(&mut self, now: Millis) -> DaemonStatus {
        self.reap();
        let holder = lock::holder(&lock::path_for(&self.home));
        let own = self.child.as_ref().map(|c| c.id().to_string());
        let mine = if self.took_over {
            DaemonStatus::TookOver
        } else {
            DaemonStatus::Embedded
        };
        match (holder, own) {
            // The lock is ours, or our child has it but has not written its pid yet.
            (Some(pid), Some(own)) if pid == own || pid == "unknown" => mine,
            // Another daemon won the lock; our child is about to exit.
            (Some(_), Some(_)) => DaemonStatus::Attached,
            (Some(_), None) => {
                self.saw_other = true;
                if self.heartbeat_stale(now) {
                    DaemonStatus::Unresponsive
                } else {
                    DaemonStatus::Attached
                }
            }
            // Still starting.
            (None, Some(_)) => mine,
            (None, None) if self.may_start && !self.stopping => match self.start() {
                Ok(()) => {
                    self.took_over = self.saw_other;
                    if self.took_over {
                        DaemonStatus::TookOver
                    } else {
                        DaemonStatus::Embedded
                    }
                }
                Err(e) => {
                    tracing::warn!("control room: starting the daemon failed: {e}");
                    DaemonStatus::None
                }
            },
            (None, None) if self.saw_other => DaemonStatus::Lost,
            (None, None) => DaemonStatus::None,
        }
    }

    fn heartbeat_stale(&self, now: Millis) -> bool {
        crate::daemon::status::last_tick_ms(&self.home).is_some_and(|t| now - t > self.stale_ms)
    }

    /// Starts `gitmoot daemon run` for this home in a session of its own, so the
    /// terminal's signals (Ctrl-c, Ctrl-z, hang-up) never reach it.
    fn start(&mut self) -> std::io::Result<()> {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.home.logs_dir().join("daemon.log"))?;
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.arg("--home").arg(self.home.root());
        // The control room's own store, however it was named: its daemon must serve (and
        // lock) the same one.
        if let Some(url) = self.home.store_url() {
            cmd.arg("--store").arg(url);
        }
        cmd.args(["daemon", "run"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: setsid is async-signal-safe and touches nothing of the parent.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        self.child = Some(cmd.spawn()?);
        Ok(())
    }

    /// Asks this control room's daemon to stop the way `daemon run` stops on SIGTERM:
    /// claim nothing more, give running jobs the shutdown grace, then terminate them.
    pub fn stop(&mut self) {
        self.stopping = true;
        if let Some(pid) = self.own_pid() {
            // SAFETY: signalling our own child, which we have not reaped.
            unsafe {
                libc::kill(pid as i32, libc::SIGTERM);
            }
        }
    }

    /// Whether this control room's daemon has exited (or never ran).
    pub fn exited(&mut self) -> bool {
        self.own_pid().is_none()
    }

    /// Waits up to `limit` for this control room's daemon to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while !self.exited() {
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }
}
