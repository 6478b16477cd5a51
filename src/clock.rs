//! Time as the engine sees it: integer milliseconds since the epoch, from an injected clock,
//! and how long a delegation tree has been active as one process measured it.
//!
//! Owns the `Clock` trait and its implementations. Production code takes `&dyn Clock` so
//! scenario tests can move time by hand. The store's times are always wall-clock readings;
//! only the elapsed time a long-lived process (the daemon) measures itself comes from a
//! monotonic source, so stepping the system clock neither ages nor cancels a tree.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC.
pub(crate) type Millis = i64;

pub trait Clock: Send + Sync {
    fn now_ms(&self) -> Millis;

    /// How long tree `root` has been active, paused time excluded, given what the store's
    /// wall times say (`wall`) and the time it has spent paused (`paused`). A one-shot
    /// process has nothing better than the wall figure.
    fn active_ms(&self, _root: &str, wall: Millis, _paused: Millis) -> Millis {
        wall
    }
}

fn wall_now() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as Millis)
        .unwrap_or(0)
}

/// The wall clock, for one-shot processes.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        wall_now()
    }
}

/// The wall clock for a long-lived process: store times from the wall, a tree's active time
/// from the monotonic clock since this process first saw the tree.
#[derive(Debug)]
pub struct SteadyClock {
    start: Instant,
    seen: Sightings,
}

impl Default for SteadyClock {
    fn default() -> Self {
        Self {
            start: Instant::now(),
            seen: Sightings::default(),
        }
    }
}

impl Clock for SteadyClock {
    fn now_ms(&self) -> Millis {
        wall_now()
    }
    fn active_ms(&self, root: &str, wall: Millis, paused: Millis) -> Millis {
        let steady = self.start.elapsed().as_millis() as Millis;
        self.seen.measure(root, steady, wall, paused)
    }
}

/// A clock that only moves when told to; for tests and fixtures. `advance` is time passing
/// (wall and monotonic alike), `step` is the system clock being set (wall only).
#[derive(Debug)]
pub struct ManualClock {
    wall: AtomicI64,
    steady: AtomicI64,
    seen: Sightings,
}

impl ManualClock {
    pub fn new(start: Millis) -> Self {
        Self {
            wall: AtomicI64::new(start),
            steady: AtomicI64::new(0),
            seen: Sightings::default(),
        }
    }
    pub fn advance(&self, by: Millis) {
        self.wall.fetch_add(by, Ordering::SeqCst);
        self.steady.fetch_add(by, Ordering::SeqCst);
    }
    /// The wall clock jumps by `by` while no time passes.
    pub fn step(&self, by: Millis) {
        self.wall.fetch_add(by, Ordering::SeqCst);
    }
    pub fn set(&self, to: Millis) {
        self.wall.store(to, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.wall.load(Ordering::SeqCst)
    }
    fn active_ms(&self, root: &str, wall: Millis, paused: Millis) -> Millis {
        self.seen
            .measure(root, self.steady.load(Ordering::SeqCst), wall, paused)
    }
}

/// Trees kept in memory at once; past it the oldest sighting is forgotten, and that tree
/// falls back to its wall figure from its next sighting on.
const SIGHTINGS_CAP: usize = 4096;

/// When this process first saw each tree: its monotonic reading then, and the tree's active
/// and paused figures at that moment.
#[derive(Debug, Default)]
struct Sightings(Mutex<HashMap<String, (Millis, Millis, Millis)>>);

impl Sightings {
    /// The tree's active time: never more than its figure at the first sighting plus what the
    /// monotonic clock measured since (less the pauses since), so a forward step of the wall
    /// clock does not age it; a backward step only makes the wall figure the smaller one.
    fn measure(&self, root: &str, steady: Millis, wall: Millis, paused: Millis) -> Millis {
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(steady0, wall0, paused0)) = seen.get(root) {
            let measured = wall0 + (steady - steady0) - (paused - paused0).max(0);
            return wall.min(measured);
        }
        if seen.len() >= SIGHTINGS_CAP
            && let Some(oldest) = seen
                .iter()
                .min_by_key(|(_, (s, _, _))| *s)
                .map(|(k, _)| k.clone())
        {
            seen.remove(&oldest);
        }
        seen.insert(root.to_string(), (steady, wall, paused));
        wall
    }
}

pub fn now_ms() -> Millis {
    SystemClock.now_ms()
}
