//! The bench's own git over the scratch repositories it generates, committing as a bench
//! user of its own. Not the product's runner (`worktree::git`): these are the bare git
//! commands the product's reads are timed against, and the set-up around them.

use std::path::Path;
use std::process::{Command, Output};

/// Git's whole answer to `args` in `dir`.
pub(crate) fn output(dir: &Path, args: &[&str]) -> Result<Output, String> {
    Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("git: {e}"))
}

/// Git's output, or its own words when it fails.
pub(crate) fn bytes(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = output(dir, args)?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(out.stdout)
}

/// Git's output as one trimmed line of text, or its own words when it fails.
pub(crate) fn line(dir: &Path, args: &[&str]) -> Result<String, String> {
    bytes(dir, args).map(|b| String::from_utf8_lossy(&b).trim().to_string())
}
