//! A land's named steps, where a debug build's test hook (`GITMOOT_TEST_LAND_STEP`) may
//! kill or block it, so tests can stop a land at each; nothing in a release build.
//!
//! Owns only the steps' names and the hook; must not change what a land does.

use std::path::Path;

/// A land's named steps, in order, where a test may stop it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LandStep {
    /// The result exists as objects; no intent is recorded yet.
    Planned,
    /// The intent is recorded; the base has not moved.
    Journalled,
    /// The checks before the swap passed; the base has not moved.
    Checked,
    /// The base branch moved; a checked-out base's files have not followed yet.
    Swapped,
    /// The base and its files moved; the job's worktree and branch are still there.
    Moved,
    /// The job's worktree is removed; its branch is still there.
    Removed,
    /// The worktree and branch are cleaned up; the land is not recorded yet.
    Cleaned,
}

impl LandStep {
    #[cfg(debug_assertions)]
    fn name(self) -> &'static str {
        match self {
            LandStep::Planned => "planned",
            LandStep::Journalled => "journalled",
            LandStep::Checked => "checked",
            LandStep::Swapped => "swapped",
            LandStep::Moved => "moved",
            LandStep::Removed => "removed",
            LandStep::Cleaned => "cleaned",
        }
    }
}

/// Tests only (debug builds): at the step `GITMOOT_TEST_LAND_STEP` names (`STEP`,
/// `STEP:kill` or `STEP:block`) the land kills itself with SIGKILL or blocks until it is
/// killed; at `checked`, `GITMOOT_TEST_BEFORE_BASE_MOVES`, a shell command run in the
/// checkout, stands in for another writer moving the base in that window.
#[cfg(debug_assertions)]
pub(super) fn at(step: LandStep, co: &Path) {
    if step == LandStep::Checked
        && let Some(cmd) = std::env::var_os("GITMOOT_TEST_BEFORE_BASE_MOVES")
    {
        let _ = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(co)
            .status();
    }
    let Ok(want) = std::env::var("GITMOOT_TEST_LAND_STEP") else {
        return;
    };
    let (name, how) = want.split_once(':').unwrap_or((&want, "kill"));
    if name != step.name() {
        return;
    }
    if how == "block" {
        loop {
            std::thread::park();
        }
    }
    // SAFETY: raising a signal on our own process.
    unsafe {
        libc::raise(libc::SIGKILL);
    }
}

#[cfg(not(debug_assertions))]
pub(super) fn at(_: LandStep, _: &Path) {}
