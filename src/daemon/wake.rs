//! What wakes the daemon's loop besides its tick: the store's files changing (another
//! process committed) and SIGHUP (reload the config). Owns only those two sources.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use notify::Watcher;
use tokio::sync::Notify;

/// Wakes the loop whenever the database files change (another process committed).
pub(super) fn watch_store(db: &Path, wake: Arc<Notify>) -> Option<notify::RecommendedWatcher> {
    let dir = db.parent()?.to_path_buf();
    let name = db.file_name()?.to_string_lossy().into_owned();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res
            && ev.paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|f| f.to_string_lossy().starts_with(&name))
            })
        {
            wake.notify_one();
        }
    })
    .ok()?;
    watcher
        .watch(&dir, notify::RecursiveMode::NonRecursive)
        .ok()?;
    Some(watcher)
}

/// Sets `flag` and wakes the loop on each SIGHUP; the default action would end the daemon.
pub(super) fn on_hangup(flag: Arc<AtomicBool>, wake: Arc<Notify>) -> std::io::Result<()> {
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
