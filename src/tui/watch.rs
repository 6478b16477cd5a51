//! Store-change wake-ups for the control room: a notify watcher on the home folder for a
//! SQLite store, the change feed (LISTEN/NOTIFY) for a PostgreSQL one (hints only), plus
//! the store's change signature (exact) and a slow safety poll, so an idle control room
//! does no busy work.
//!
//! Owns deciding *when* to reload; the loader decides *what*.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

/// Why the loop woke up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// Something in the home folder changed (the database or its WAL).
    Files,
    /// A PostgreSQL store notified a committed write.
    Notified,
}

/// Watches wherever the home's store lives; the returned watcher (a SQLite home's) must be
/// kept alive, and the change feed of a PostgreSQL store stops once `tx`'s receiver is gone.
pub(crate) fn watch_store(
    home: &crate::home::Home,
    tx: mpsc::Sender<Wake>,
) -> Option<notify::RecommendedWatcher> {
    match crate::store::Location::of_home(home) {
        Ok(crate::store::Location::Postgres(url)) => {
            crate::store::watch_changes(url, move |changed| {
                !changed || tx.send(Wake::Notified).is_ok()
            });
            None
        }
        _ => watch_home(home.root(), tx).ok(),
    }
}

/// Watches the home's folder; the returned watcher must be kept alive.
fn watch_home(home: &Path, tx: mpsc::Sender<Wake>) -> notify::Result<notify::RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res
            && ev.paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("gitmoot.db"))
            })
        {
            let _ = tx.send(Wake::Files);
        }
    })?;
    watcher.watch(home, RecursiveMode::NonRecursive)?;
    Ok(watcher)
}

/// The safety poll: even without notify events, check `data_version` this often.
pub(crate) const SAFETY_POLL: Duration = Duration::from_secs(2);
