//! SIGINT/SIGTERM/SIGHUP for a command that waits in the foreground (`job run --wait`):
//! the signals are counted instead of ending the process, so the command can cancel its
//! work on the first and force on the second. A hang-up (a closed terminal, a dropped SSH
//! session) is an interrupt like the others: left to its default it would end the waiter
//! with its job still `running` and its registration in the store. `gitmoot daemon stop`'s
//! SIGUSR2 (`--kill`) counts as an interrupt too, and its SIGUSR1 (`--wait`) is ignored: the
//! waiter then simply finishes its tree.
//!
//! Owns only the counting; what an interrupt means is the waiting command's business.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

static COUNT: AtomicU32 = AtomicU32::new(0);
static LAST: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only atomics here: a signal handler may do nothing that could block or allocate.
    LAST.store(sig, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
}

/// From now on SIGINT, SIGTERM, SIGHUP and SIGUSR2 are counted, not fatal, and SIGUSR1 is
/// ignored.
pub(crate) fn count_signals() {
    // SAFETY: ignoring a signal installs no handler at all.
    unsafe {
        libc::signal(libc::SIGUSR1, libc::SIG_IGN);
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGUSR2] {
        // SAFETY: the handler only touches atomics, which is async-signal-safe.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// How many interrupting signals arrived so far.
pub fn received() -> u32 {
    COUNT.load(Ordering::SeqCst)
}

/// The shell's exit status for death by the last signal (130 for SIGINT, 143 for SIGTERM,
/// 129 for SIGHUP).
pub(crate) fn exit_status() -> i32 {
    128 + LAST.load(Ordering::SeqCst)
}
