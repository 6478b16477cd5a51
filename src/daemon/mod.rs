//! The worker pool over the store: claiming, locks, timeouts, crash recovery, chat relay.
