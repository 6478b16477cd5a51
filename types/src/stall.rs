//! The signals by which a running job counts as stalled (issue 28): what the daemon's
//! watch raises, the `job_stalled` event carries and the control room marks.
//!
//! Owns the names only; when a signal holds is the engine's (`engine::stall`).

crate::named_enum!(
    /// Why a running job looks stuck.
    StallSignal, "stall signal", {
        // No activity at all for `[orchestrate].stall_after`.
        Silent => "silent",
        // The same tool call or command `[orchestrate].stall_repeats` times in a row.
        Looping => "looping",
        // Tokens rising with no step (message, call, command, file change) for the window.
        Burning => "burning",
    }
);
