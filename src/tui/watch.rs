//! Store-change wake-ups for the control room: the change feed (LISTEN/NOTIFY) of a
//! PostgreSQL store (hints only), and for either store its change signature (`PRAGMA
//! data_version`, the WAL position) read on a poll, so an idle control room does no busy
//! work.
//!
//! A SQLite store is polled every `SQLITE_POLL` rather than watched with inotify: every page
//! a commit writes to the WAL is an inotify event, so a watch cost the control room work in
//! step with what the fleet printed (a quarter of its CPU with 100 streaming agents), while
//! a `data_version` read costs the same whatever the fleet does.
//!
//! Owns deciding *when* to reload; the loader decides *what*.

use std::sync::mpsc;
use std::time::Duration;

/// Why the loop woke up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wake {
    /// A PostgreSQL store notified a committed write.
    Notified,
}

/// How the loader learns of changes to `home`'s store: how often it reads the change
/// signature (often on SQLite, where that read is the only wake-up; rarely on PostgreSQL),
/// and for PostgreSQL the change feed, started by `listen` once the loader it wakes exists.
pub(crate) struct StoreWatch {
    pub poll: Duration,
    feed: Option<String>,
}

impl StoreWatch {
    pub(crate) fn of(home: &crate::home::Home) -> Self {
        match crate::store::Location::of_home(home) {
            Ok(crate::store::Location::Postgres(url)) => StoreWatch {
                poll: SAFETY_POLL,
                feed: Some(url),
            },
            _ => StoreWatch {
                poll: SQLITE_POLL,
                feed: None,
            },
        }
    }

    /// Listens to a PostgreSQL store's change feed until `tx`'s receiver is gone.
    pub(crate) fn listen(self, tx: mpsc::Sender<Wake>) {
        if let Some(url) = self.feed {
            crate::store::watch_changes(url, move |changed| {
                !changed || tx.send(Wake::Notified).is_ok()
            });
        }
    }
}

/// How often a SQLite store's `data_version` is read: the slowest a change made elsewhere
/// (the CLI, another control room, the daemon) takes to reach the screen.
const SQLITE_POLL: Duration = Duration::from_millis(100);

/// The safety poll of a PostgreSQL store: even without notifications, check this often.
const SAFETY_POLL: Duration = Duration::from_secs(2);
