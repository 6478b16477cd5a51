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

/// One hour in milliseconds.
pub const HOUR_MS: Millis = 3_600_000;

/// One UTC day in milliseconds.
pub const DAY_MS: Millis = 86_400_000;

/// "2026-12-06": the UTC date of an epoch-ms time (days to the civil calendar, Howard
/// Hinnant's algorithm), without a date crate for one conversion.
pub fn utc_date(ms: Millis) -> String {
    let z = ms.div_euclid(DAY_MS) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The epoch-ms start of a UTC date written `YYYY-MM-DD`; None if it is not one.
pub fn parse_utc_date(text: &str) -> Option<Millis> {
    let mut parts = text.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let ms = (era * 146_097 + doe - 719_468) * DAY_MS;
    // 2026-02-31 would roll into March: not a date.
    (utc_date(ms) == text).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_impossible_ones_are_refused() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(1_765_000_000_000), "2025-12-06");
        assert_eq!(parse_utc_date("2025-12-06"), Some(1_764_979_200_000));
        assert_eq!(
            parse_utc_date("2024-02-29").map(utc_date).as_deref(),
            Some("2024-02-29")
        );
        for bad in [
            "2025-02-29",
            "2025-13-01",
            "25-12-06",
            "2025-12-6",
            "yesterday",
        ] {
            assert_eq!(parse_utc_date(bad), None, "{bad}");
        }
    }
}
