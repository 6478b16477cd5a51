//! The one cadence a process's output readers and its activity writer share.
//!
//! A quiet child (an agent printing a line every so often) would otherwise cost a wake, a
//! `splice` and a hop to its recorder per line, and its recorder a store write per short
//! period. Instead, after a read that found little, a reader leaves the rest in the pipe
//! (where the guard holds it if the daemon dies: nothing is only in this process's memory)
//! until just before the next shared boundary, and the writer stores every job's lines on
//! that boundary. The boundaries are further apart the more children are live, since the
//! cost of a write is mostly per page touched, not per record: 200 ms with a few agents,
//! 1 s past forty-eight, so a fleet's records reach the store and the control room within
//! about a second while each write carries many of them.
//!
//! A child that exits, or one that prints a page or more between reads, is read at once:
//! pacing never delays a result, and never makes a busy child wait on a full pipe.
//!
//! Owns the clock arithmetic and the live count; reading a pipe on it is `paced.rs`'s,
//! writing the store the daemon's.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// A read smaller than this leaves the next one for the cadence.
pub(super) const PACE_BELOW: usize = 4096;
/// How long before a boundary paced readers read, so their lines reach the recorder's
/// flush on that boundary rather than on the next.
const READ_AHEAD: Duration = Duration::from_millis(25);

/// Children being read now.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// How far apart the boundaries are with `live` children being read.
fn period_for(live: usize) -> Duration {
    Duration::from_millis(match live {
        0..=16 => 200,
        17..=48 => 500,
        _ => 1_000,
    })
}

/// The first boundary strictly after `at`, on the grid of `period` from `epoch`. Every
/// period divides a second, so boundaries of different periods meet on whole seconds.
fn boundary_after(epoch: Instant, at: Instant, period: Duration) -> Instant {
    let period = period.as_nanos();
    let periods = at.saturating_duration_since(epoch).as_nanos() / period + 1;
    epoch + Duration::from_nanos((periods * period) as u64)
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The next boundary: when the activity writer stores what the recorders hold.
pub(crate) fn next_boundary() -> Instant {
    let period = period_for(LIVE.load(Ordering::Relaxed));
    boundary_after(epoch(), Instant::now(), period)
}

/// When a paced reader reads next: `READ_AHEAD` before the first boundary that leaves it
/// at least that long.
pub(super) fn next_read() -> Instant {
    let period = period_for(LIVE.load(Ordering::Relaxed));
    boundary_after(epoch(), Instant::now() + READ_AHEAD, period) - READ_AHEAD
}

/// One child counted as live while this is held.
#[derive(Debug)]
pub(super) struct Live(());

impl Live {
    pub(super) fn enlist() -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Live(())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How a child's pipes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// The child runs: quiet pipes are read on the cadence.
    Paced,
    /// The child is gone: read to the end at once.
    Draining,
    /// Stop where the readers are (whatever holds the pipes is not the child).
    Stopped,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_on_the_grid_and_strictly_ahead() {
        let epoch = Instant::now();
        let ms = Duration::from_millis;
        let p = ms(200);
        assert_eq!(boundary_after(epoch, epoch, p), epoch + ms(200));
        assert_eq!(boundary_after(epoch, epoch + ms(199), p), epoch + ms(200));
        assert_eq!(boundary_after(epoch, epoch + ms(200), p), epoch + ms(400));
        assert_eq!(
            boundary_after(epoch, epoch + ms(1_700), ms(1_000)),
            epoch + ms(2_000)
        );
    }

    #[test]
    fn the_period_grows_with_the_children_being_read() {
        assert_eq!(period_for(1), Duration::from_millis(200));
        assert_eq!(period_for(30), Duration::from_millis(500));
        assert_eq!(period_for(100), Duration::from_millis(1_000));
        for live in [1, 30, 100, 1_000] {
            assert_eq!(
                1_000 % period_for(live).as_millis(),
                0,
                "{live}: boundaries of every period meet on whole seconds"
            );
        }
    }
}
