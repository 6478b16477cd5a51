//! Time as the engine sees it: integer milliseconds since the epoch, from an injected clock.
//!
//! Owns the `Clock` trait and its two implementations. Production code takes `&dyn Clock`
//! so scenario tests can move time by hand.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC.
pub(crate) type Millis = i64;

pub trait Clock: Send + Sync {
    fn now_ms(&self) -> Millis;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as Millis)
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to; for tests and fixtures.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start: Millis) -> Self {
        Self(AtomicI64::new(start))
    }
    pub fn advance(&self, by: Millis) {
        self.0.fetch_add(by, Ordering::SeqCst);
    }
    pub fn set(&self, to: Millis) {
        self.0.store(to, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}

pub fn now_ms() -> Millis {
    SystemClock.now_ms()
}
