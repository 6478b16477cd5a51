//! What every runtime's child gets on top of its adapter's command line: a temporary
//! folder of its own (`TMPDIR`, in the run's private scratch outside the home), an
//! environment in which no variable names the gitmoot home (a socket the daemon hands
//! over, the chat relay's, travels as a link in that folder), and the kernel confinement of its policy
//! (`sandbox/`), with the runtime's state folder made first so the runtime can write it; a
//! write job's agent also gets a folder for its git layer and git configured (through the
//! environment) never to repack the shared refs on its own.
//!
//! Owns the hand-over only; what the confinement does is `sandbox/`'s.

use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use super::sandbox::{self, Confinement};
use super::{Prepared, Request, RuntimeError, private_dir};

pub(super) fn contain(req: &Request<'_>, prepared: &mut Prepared) -> Result<(), RuntimeError> {
    let tmp = private_dir(req.scratch, "tmp")?;
    let inv = &mut prepared.invocation;
    for (_, socket) in inv
        .env
        .iter_mut()
        .filter(|(k, _)| req.sockets.contains(&k.as_str()))
    {
        *socket = socket_link(Path::new(socket.as_str()), &tmp.0)?;
    }
    let home = req.home.to_string_lossy().into_owned();
    // Whatever the allow-lists let through (an operator's `[runtimes.*] env`, a path
    // variable) must not lead the agent to the home, where it could answer its own gates.
    inv.env
        .retain(|(k, v)| k != "TMPDIR" && (home.is_empty() || !v.contains(home.as_str())));
    inv.env.push(("TMPDIR".into(), tmp.0.display().to_string()));
    let cwd = inv.cwd.clone().unwrap_or_else(|| req.cwd.to_path_buf());
    let workspace = [&[cwd.clone()][..], &req.writable.paths].concat();
    if let Some(paths) = sandbox::writable(req.policy, req.kind, &workspace, &tmp.0, &inv.env)
        && sandbox::enforceable()
    {
        for state in sandbox::state_paths(req.kind, &inv.env) {
            // A folder the runtime would make on its first run, made now: inside the
            // confinement it could not make it (a state file is the runtime's to make).
            if state.extension().is_none() && !state.exists() {
                let _ = std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&state);
            }
        }
        let layer = match &req.writable.git {
            Some(grant) => {
                let dir = private_dir(req.scratch, "git")?;
                quiet_git(&mut inv.env);
                Some((grant, dir))
            }
            None => None,
        };
        inv.sandbox = Some(Confinement::new(
            &paths,
            layer.as_ref().map(|(g, d)| (*g, d.0.as_path())),
        ));
        prepared.git_layer = layer.as_ref().map(|(_, d)| sandbox::git_upper(&d.0));
        prepared.temp.extend(layer.map(|(_, d)| d));
    }
    prepared.temp.push(tmp);
    Ok(())
}

/// Git configuration through the environment: no automatic `gc` or maintenance, whose
/// `pack-refs` would rewrite the shared `packed-refs` (read-only in the agent's view).
fn quiet_git(env: &mut Vec<(String, String)>) {
    // Pairs the operator's environment already set keep their numbers.
    let at = env.iter().position(|(k, _)| k == "GIT_CONFIG_COUNT");
    let mut n = at.map_or(0, |i| env.remove(i).1.parse::<usize>().unwrap_or(0));
    for (key, value) in [("gc.auto", "0"), ("maintenance.auto", "false")] {
        env.push((format!("GIT_CONFIG_KEY_{n}"), key.into()));
        env.push((format!("GIT_CONFIG_VALUE_{n}"), value.into()));
        n += 1;
    }
    env.push(("GIT_CONFIG_COUNT".into(), n.to_string()));
}

/// A socket as the agent reaches it: a hard link (or, across file systems, a symbolic
/// link) in its own folder, so the variable names that folder, not the home.
fn socket_link(socket: &Path, dir: &Path) -> Result<String, RuntimeError> {
    let name = socket.file_name().unwrap_or(std::ffi::OsStr::new("socket"));
    let link = dir.join(name);
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(socket, &link).or_else(|_| std::os::unix::fs::symlink(socket, &link))?;
    Ok(link.display().to_string())
}

const RUN_ROOT: &str = "gitmoot-run-";

/// A new private folder (0700) in the system's temporary folder for this process's runs:
/// their prompt files, temporary folders and work folders, away from the home. Folders a
/// dead process of this user left there go first.
pub(crate) fn run_root() -> std::io::Result<std::path::PathBuf> {
    let tmp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let owner = name
                .to_str()
                .and_then(|n| n.strip_prefix(RUN_ROOT))
                .and_then(|n| n.split('-').next())
                .and_then(|p| p.parse::<u32>().ok());
            let mine = entry.metadata().is_ok_and(|m| {
                use std::os::unix::fs::MetadataExt;
                // SAFETY: a plain id query.
                m.uid() == unsafe { libc::getuid() }
            });
            if let Some(pid) = owner
                && mine
                && !Path::new(&format!("/proc/{pid}")).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let root = tmp.join(format!(
        "{RUN_ROOT}{}-{}",
        std::process::id(),
        crate::ids::random_hex(6)
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&root)?;
    Ok(root)
}

#[cfg(test)]
mod tests {
    #[test]
    fn git_is_told_not_to_repack_after_the_pairs_already_set() {
        let mut env = vec![
            ("GIT_CONFIG_COUNT".to_string(), "1".to_string()),
            ("GIT_CONFIG_KEY_0".into(), "core.editor".into()),
            ("GIT_CONFIG_VALUE_0".into(), "true".into()),
        ];
        super::quiet_git(&mut env);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("GIT_CONFIG_COUNT"), Some("3"));
        assert_eq!(get("GIT_CONFIG_KEY_0"), Some("core.editor"));
        assert_eq!(get("GIT_CONFIG_KEY_1"), Some("gc.auto"));
        assert_eq!(get("GIT_CONFIG_VALUE_1"), Some("0"));
        assert_eq!(get("GIT_CONFIG_KEY_2"), Some("maintenance.auto"));
        assert_eq!(get("GIT_CONFIG_VALUE_2"), Some("false"));
        assert_eq!(
            env.iter().filter(|(k, _)| k == "GIT_CONFIG_COUNT").count(),
            1
        );
    }
}
