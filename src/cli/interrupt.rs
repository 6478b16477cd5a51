//! SIGINT/SIGTERM for a command that waits in the foreground (`job run --wait`): the
//! signals are counted instead of ending the process, so the command can cancel its work
//! on the first and force on the second.
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

/// From now on SIGINT and SIGTERM are counted, not fatal.
pub(crate) fn count_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches atomics, which is async-signal-safe.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// How many SIGINT/SIGTERM arrived so far.
pub fn received() -> u32 {
    COUNT.load(Ordering::SeqCst)
}

/// The shell's exit status for death by the last signal (130 for SIGINT, 143 for SIGTERM).
pub(crate) fn exit_status() -> i32 {
    128 + LAST.load(Ordering::SeqCst)
}
