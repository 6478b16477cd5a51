//! Git worktrees outside the home: where they live (`root`), and the write jobs' worktrees,
//! each on a branch of its own that is the job's work product until the operator lands or
//! discards it (`open`, `diff`, `land`, `discard`, `list`, `prune`).
//!
//! Owns the git calls on a repo's registered checkout and its worktrees, and the
//! `job_worktrees` rows through `store::worktrees`. Must not decide a job's state (the engine
//! does) nor run an agent (the daemon does); it never changes the operator's checkout except
//! in `land`.

use std::path::{Path, PathBuf};

/// The folder under which a home's worktrees live: `[daemon] worktrees` when set, else
/// `$XDG_STATE_HOME/gitmoot/worktrees/<hash>`, falling back to
/// `~/.local/state/gitmoot/worktrees/<hash>`, where `<hash>` is the first 12 hex digits of
/// the SHA-256 of the home's path. An agent's working directory is a worktree, so it must
/// not name the home: the hash tells homes apart without saying where one is.
pub fn root(home: &Path, configured: Option<&Path>) -> PathBuf {
    if let Some(dir) = configured {
        return dir.to_path_buf();
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::home_dir().map(|h| h.join(".local").join("state")))
        .unwrap_or_else(std::env::temp_dir);
    let hash = crate::ids::sha256_hex(home.as_os_str().as_encoded_bytes());
    state.join("gitmoot").join("worktrees").join(&hash[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_never_names_the_home_and_differs_per_home() {
        let a = root(Path::new("/srv/home-a/.gitmoot"), None);
        let b = root(Path::new("/srv/home-b/.gitmoot"), None);
        assert_ne!(a, b);
        assert!(!a.display().to_string().contains("home-a"));
        assert_eq!(
            root(Path::new("/x"), Some(Path::new("/wt"))),
            PathBuf::from("/wt")
        );
    }
}
