//! Stopping the daemon: a cloneable handle anyone (a signal, the control room, `job run
//! --wait`) can trigger, and the SIGINT/SIGTERM listener of the foreground daemon; also
//! its SIGHUP listener, which asks for a config reload instead.
//!
//! Owns only the triggers; the pool decides what stopping means (stop claiming, grace,
//! terminate and record why).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

#[derive(Debug, Default)]
struct Inner {
    requested: AtomicBool,
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

/// Triggers `handle` on the first SIGINT or SIGTERM.
pub(crate) fn on_signals(handle: ShutdownHandle) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {},
            _ = term.recv() => {},
        }
        tracing::info!("daemon: stop signal received");
        handle.request();
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
