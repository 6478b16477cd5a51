//! The change feed of a PostgreSQL store: every write transaction notifies one channel as
//! it commits (`pg::PgConn::begin_write`), and `Listener`/`watch` let daemons and control
//! rooms wait on it instead of polling.

use postgres::{Client, NoTls};

use super::Result;
use super::pg::CHANNEL;

/// A connection of its own that listens for committed writes (`LISTEN/NOTIFY`): how daemons
/// and control rooms on a PostgreSQL store learn of changes without polling it. Must be
/// used off the tokio runtime (it blocks).
pub struct Listener {
    client: Client,
}

impl Listener {
    pub fn connect(url: &str) -> Result<Self> {
        let mut client = Client::connect(url, NoTls)?;
        client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
        Ok(Self { client })
    }

    /// Blocks until some connection commits a write (`true`, after taking every
    /// notification already queued) or `timeout` passes (`false`).
    pub fn wait(&mut self, timeout: std::time::Duration) -> Result<bool> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut notes = self.client.notifications();
        if notes.timeout_iter(timeout).next()?.is_none() {
            return Ok(false);
        }
        while notes.iter().next()?.is_some() {}
        Ok(true)
    }
}

/// Listens on a thread of its own: calls `on_round(changed)` after each wait of at most a
/// second (`changed`: a write committed meanwhile) until it returns `false`. A lost
/// connection is retried with a growing pause (up to 30 s) and logged once per outage;
/// meanwhile the caller's own tick still finds the work.
pub fn watch(url: String, mut on_round: impl FnMut(bool) -> bool + Send + 'static) {
    std::thread::spawn(move || {
        let mut pause = std::time::Duration::from_millis(250);
        let mut down = false;
        loop {
            let mut listener = match Listener::connect(&url) {
                Ok(l) => l,
                Err(e) => {
                    if !down {
                        tracing::warn!("store change feed unavailable ({e}); retrying");
                        down = true;
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_secs(30));
                    if !on_round(false) {
                        return;
                    }
                    continue;
                }
            };
            // Reconnected: whatever was committed while away counts as a change.
            if down && !on_round(true) {
                return;
            }
            pause = std::time::Duration::from_millis(250);
            loop {
                match listener.wait(std::time::Duration::from_secs(1)) {
                    Ok(changed) => {
                        if !on_round(changed) {
                            return;
                        }
                    }
                    Err(e) => {
                        tracing::warn!("store change feed lost ({e}); reconnecting");
                        down = true;
                        break;
                    }
                }
            }
        }
    });
}
