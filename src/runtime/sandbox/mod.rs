//! An agent's confinement by the kernel, whatever its runtime: which paths its autonomy
//! policy leaves writable (`read-only`: its own temporary folder; `workspace-write` and
//! `auto`: its workspace too — its working directory and, in a write job's worktree, what
//! git writes for a commit there; both: the runtime's own state folder and `/dev`;
//! `danger-full-access`: no confinement), and the two mechanisms that hold it there,
//! applied in the child before its exec (`process/spawn.rs`):
//! - Landlock (`landlock.rs`): no file created, written, truncated, renamed or removed
//!   outside those paths; from ABI 6 no signal and no abstract unix socket outside the
//!   agent's own process tree.
//! - A private read-only mount view (`view.rs`): no `chmod`, `chown`, `utimes` or
//!   `setxattr` outside those paths, where a mount namespace can be made; for a write job,
//!   its repository's git folder through a private layer (`git.rs`), so git's bookkeeping
//!   (`packed-refs.lock`, `refs/stash`) succeeds without granting the shared refs.
//!
//! Where the kernel has no Landlock nothing is enforced and `enforceable` says so, for
//! `agent add` to warn and listings to mark the policy advisory. Owns no process handling.

mod attr;
mod git;
mod landlock;
mod view;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::domain::{AutonomyPolicy, RuntimeKind};
use git::GitLayer;
pub use git::{GitGrant, upper as git_upper};
pub use landlock::scopes_signals;
use landlock::{Ruleset, abi};
use view::View;

/// Whether this kernel can hold an agent to a policy other than `danger-full-access`.
pub fn enforceable() -> bool {
    abi() >= 1
}

/// Whether nothing holds an agent of this policy to it on this machine.
pub fn advisory(policy: AutonomyPolicy) -> bool {
    policy != AutonomyPolicy::DangerFullAccess && !enforceable()
}

/// What a job's place lets its agent write beyond its working directory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Grant {
    /// Paths writable whatever the kernel can do.
    pub paths: Vec<PathBuf>,
    /// A write job's grant in its repository's git folder, for the layered view.
    pub git: Option<GitGrant>,
}

/// A prepared confinement: what the child may still write, as C data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    writable: Vec<(CString, bool)>,
    ruleset: Ruleset,
    /// The ruleset once the git layer is in place: `writable` and the layered git folder.
    layered: Option<Ruleset>,
    view: View,
}

impl Confinement {
    /// Everything but `writable` (and what lies beneath) becomes unwritable; missing
    /// paths are left out. With `git` (a write job's grant and an empty folder of the
    /// run's for the layer's private half), the repository's git folder is layered.
    pub fn new(writable: &[PathBuf], git: Option<(&GitGrant, &Path)>) -> Self {
        let writable = c_paths(writable);
        let layer = git.and_then(|(grant, dir)| Some((GitLayer::new(grant, dir)?, grant)));
        let layered = layer.as_ref().map(|(_, grant)| {
            let mut paths = writable.clone();
            paths.extend(c_paths(std::slice::from_ref(&grant.common)));
            Ruleset::new(paths)
        });
        Confinement {
            ruleset: Ruleset::new(writable.clone()),
            layered,
            view: View::new(layer.map(|(l, _)| l)),
            writable,
        }
    }

    /// Enters the read-only mount view (before the change to the working directory,
    /// which must resolve inside the view); true when the git layer is in place.
    ///
    /// # Safety
    /// For a child before its exec: no allocation, only async-signal-safe syscalls.
    pub(crate) unsafe fn enter_view(&self) -> bool {
        // SAFETY: forwarded; the view is best effort (Landlock still holds writes).
        unsafe { self.view.enter(&self.writable) }
    }

    /// Applies the Landlock ruleset for good: the layered one when `layered` (what
    /// `enter_view` said), which grants the git folder only as the layer shows it.
    ///
    /// # Safety
    /// For a child before its exec: no allocation, only async-signal-safe syscalls.
    pub(crate) unsafe fn restrict(&self, layered: bool) -> std::io::Result<()> {
        let ruleset = match &self.layered {
            Some(r) if layered => r,
            _ => &self.ruleset,
        };
        // SAFETY: forwarded.
        unsafe { ruleset.apply() }
    }
}

/// Each existing path as C data, and whether it is a folder.
fn c_paths(paths: &[PathBuf]) -> Vec<(CString, bool)> {
    paths
        .iter()
        .filter_map(|p| {
            let meta = std::fs::metadata(p).ok()?;
            let c = CString::new(p.as_os_str().as_bytes()).ok()?;
            Some((c, meta.is_dir()))
        })
        .collect()
}

/// The paths an agent of `policy` may write, or `None` when it is not confined;
/// `workspace` is its working directory and what else its job's place lets it write.
pub fn writable(
    policy: AutonomyPolicy,
    kind: RuntimeKind,
    workspace: &[PathBuf],
    tmp: &Path,
    env: &[(String, String)],
) -> Option<Vec<PathBuf>> {
    let mut paths = vec![PathBuf::from("/dev"), tmp.to_path_buf()];
    match policy {
        AutonomyPolicy::DangerFullAccess => return None,
        AutonomyPolicy::ReadOnly => {}
        AutonomyPolicy::WorkspaceWrite | AutonomyPolicy::Auto => {
            paths.extend(workspace.iter().cloned())
        }
    }
    paths.extend(state_paths(kind, env));
    Some(paths)
}

/// The runtime's own state: where its CLI keeps sessions, logs and config, which it writes
/// on every run whatever its policy (read from the child's environment).
pub fn state_paths(kind: RuntimeKind, env: &[(String, String)]) -> Vec<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let home = var("HOME");
    let in_home = |name: &str| home.as_ref().map(|h| h.join(name));
    match kind {
        RuntimeKind::Shell => Vec::new(),
        // Claude Code also rewrites `~/.claude.json` (in place when it cannot make its
        // lock and temporary files beside it, which it cannot here).
        RuntimeKind::Claude => match var("CLAUDE_CONFIG_DIR") {
            Some(dir) => vec![dir],
            None => [in_home(".claude"), in_home(".claude.json")]
                .into_iter()
                .flatten()
                .collect(),
        },
        RuntimeKind::Codex => var("CODEX_HOME")
            .or_else(|| in_home(".codex"))
            .into_iter()
            .collect(),
        RuntimeKind::Kimi => in_home(".kimi").into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_leaves_its_own_paths_writable() {
        let env = vec![("HOME".to_string(), "/u".to_string())];
        let (cwd, tmp) = (Path::new("/w"), Path::new("/t"));
        let ws = [cwd.to_path_buf()];
        let paths = |p| writable(p, RuntimeKind::Codex, &ws, tmp, &env);
        assert_eq!(paths(AutonomyPolicy::DangerFullAccess), None);
        let ro = paths(AutonomyPolicy::ReadOnly).unwrap();
        assert!(ro.contains(&tmp.to_path_buf()) && ro.contains(&PathBuf::from("/u/.codex")));
        assert!(!ro.contains(&cwd.to_path_buf()));
        assert!(
            paths(AutonomyPolicy::WorkspaceWrite)
                .unwrap()
                .contains(&cwd.to_path_buf())
        );
        assert!(
            writable(AutonomyPolicy::ReadOnly, RuntimeKind::Shell, &ws, tmp, &env)
                .unwrap()
                .iter()
                .all(|p| !p.starts_with("/u"))
        );
    }
}
