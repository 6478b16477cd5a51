//! Stopping the daemon: a cloneable handle anyone (a signal, the control room, `job run
//! --wait`) can trigger, and the signal listeners of the foreground daemon; also its SIGHUP
//! listener, which asks for a config reload instead.
//!
//! `gitmoot daemon stop` reaches a daemon by a signal to the pid its store's lock records
//! (`request_stop`), one signal per way of stopping, so nothing is left behind in the home
//! to be misread by a later daemon: SIGTERM (and SIGINT) stop claiming and give running jobs
//! `[daemon].shutdown_grace`; SIGUSR1 (`--wait`) lets the daemon run on until nothing is
//! queued or running; SIGUSR2 (`--kill`) terminates the running jobs at once.
//!
//! Owns only the triggers; the pool decides what stopping means (stop claiming, grace,
//! terminate and record why).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

#[derive(Debug, Default)]
struct Inner {
    requested: AtomicBool,
    /// The stop terminates running jobs without the grace.
    immediate: AtomicBool,
    /// Not a stop yet: claim on until nothing is queued or running, then exit.
    finishing: AtomicBool,
    notify: Notify,
}

/// Asks a daemon to stop; cheap to clone and safe to call from any thread.
#[derive(Debug, Clone, Default)]
pub struct ShutdownHandle(Arc<Inner>);

impl ShutdownHandle {
    pub fn request(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
        self.0.notify.notify_one();
    }

    /// A stop that terminates running jobs at once (`daemon stop --kill`).
    pub(crate) fn request_now(&self) {
        self.0.immediate.store(true, Ordering::SeqCst);
        self.request();
    }

    pub(crate) fn is_immediate(&self) -> bool {
        self.0.immediate.load(Ordering::SeqCst)
    }

    /// Stop once nothing is queued or running (`daemon stop --wait`).
    pub(crate) fn finish_queue(&self) {
        self.0.finishing.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_finishing(&self) -> bool {
        self.0.finishing.load(Ordering::SeqCst)
    }

    pub(crate) fn is_requested(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }

    /// Resolves once a stop was requested.
    pub async fn requested(&self) {
        while !self.is_requested() {
            self.0.notify.notified().await;
        }
    }
}

/// Triggers `handle` on the first SIGINT or SIGTERM, immediately on SIGUSR2, and has it
/// finish the queue (waking the loop through `wake`) on SIGUSR1.
pub(crate) fn on_signals(handle: ShutdownHandle, wake: Arc<Notify>) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut finish = signal(SignalKind::user_defined1())?;
    let mut now = signal(SignalKind::user_defined2())?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = int.recv() => handle.request(),
                _ = term.recv() => handle.request(),
                _ = now.recv() => handle.request_now(),
                _ = finish.recv() => {
                    tracing::info!("daemon: asked to finish the queue, then stop");
                    handle.finish_queue();
                    wake.notify_one();
                    continue;
                }
            }
            tracing::info!("daemon: stop signal received");
            if handle.is_immediate() {
                return;
            }
        }
    });
    Ok(())
}

/// Sets `flag` and wakes the loop on each SIGHUP; the default action would end the daemon.
pub(crate) fn on_hangup(flag: Arc<AtomicBool>, wake: Arc<Notify>) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            flag.store(true, Ordering::SeqCst);
            wake.notify_one();
        }
    });
    Ok(())
}

/// Why `daemon stop` could not ask a daemon to stop.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("no daemon is running for this store (lock {0})")]
    NotRunning(std::path::PathBuf),
    #[error("signalling the daemon (pid {pid}): {cause}")]
    Signal { pid: i32, cause: std::io::Error },
}

/// How `daemon stop` asks the daemon to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// Stop claiming; running jobs get the shutdown grace.
    Graceful,
    /// Run every queued and running job to its end first.
    Finish,
    /// Terminate the running jobs now.
    Kill,
}

/// Signals the daemon holding `lock` to stop as `mode` says; returns its pid.
pub fn request_stop(lock: &std::path::Path, mode: StopMode) -> Result<i32, StopError> {
    let not_running = || StopError::NotRunning(lock.to_path_buf());
    let pid: i32 = super::lock::holder(lock)
        .and_then(|p| p.parse().ok())
        .ok_or_else(not_running)?;
    let sig = match mode {
        StopMode::Graceful => libc::SIGTERM,
        StopMode::Finish => libc::SIGUSR1,
        StopMode::Kill => libc::SIGUSR2,
    };
    // SAFETY: kill(2) on a pid, no memory involved.
    if unsafe { libc::kill(pid, sig) } != 0 {
        let cause = std::io::Error::last_os_error();
        return match cause.raw_os_error() {
            Some(libc::ESRCH) => Err(not_running()),
            _ => Err(StopError::Signal { pid, cause }),
        };
    }
    Ok(pid)
}
