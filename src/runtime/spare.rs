//! Spare files and folders: the temporary paths of ended runs (prompt files, run folders,
//! stdout records), emptied and renamed aside, then renamed into the place of the next
//! path asked for in the same folder.
//!
//! On ext4 a new file or folder costs a search of the inode groups that grows with every
//! inode freed in the last minutes (they are skipped), so a daemon that makes and removes
//! three of them a job spends more on that search the faster it goes; a rename reuses the
//! inode, with its mode. To a run its paths are gone all the same: nothing is left under
//! their names. Knows nothing of what the files hold.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The name every spare starts with, in whichever folder it waits.
const PREFIX: &str = "spare-";

/// One spare: its path and whether it is a folder.
type Spare = (PathBuf, bool);

fn spares() -> MutexGuard<'static, Vec<Spare>> {
    static SPARES: Mutex<Vec<Spare>> = Mutex::new(Vec::new());
    SPARES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets `path` aside as a spare of its folder — an empty folder as it is, a file emptied —
/// or removes it (a folder the run left something in, a path that cannot be moved).
pub fn discard(path: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    let dir = meta.is_dir();
    let emptied = if dir {
        std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
    } else {
        // Through a descriptor, closed again at once: a truncation to nothing marks an
        // ext4 file for a forced write-back at its next close, which this close takes
        // while there is nothing to write.
        meta.is_file()
            && std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(0))
                .is_ok()
    };
    if let (true, Some(folder)) = (emptied, path.parent()) {
        let spare = folder.join(format!("{PREFIX}{}", crate::ids::random_hex(6)));
        if std::fs::rename(path, &spare).is_ok() {
            spares().push((spare, dir));
            return;
        }
    }
    if dir {
        let _ = std::fs::remove_dir_all(path);
        // Spares made inside it went with it.
        spares().retain(|(s, _)| !s.starts_with(path));
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// Renames a spare folder (`dir`) or file of `path`'s folder to `path`: then an empty one
/// is there. False when there was none.
pub fn reuse(path: &Path, dir: bool) -> bool {
    let folder = path.parent();
    loop {
        let spare = {
            let mut list = spares();
            let at = list
                .iter()
                .position(|(s, d)| *d == dir && s.parent() == folder);
            match at {
                Some(i) => list.swap_remove(i).0,
                None => return false,
            }
        };
        if std::fs::rename(&spare, path).is_ok() {
            return true;
        }
    }
}

/// Removes every spare in `dir`, kept by this process or left by one that died; the
/// daemon calls it as it starts and as it stops.
pub fn remove_all(dir: &Path) {
    spares().retain(|(s, _)| s.parent() != Some(dir));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(PREFIX) {
            let _ = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(entry.path()),
                _ => std::fs::remove_file(entry.path()),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_discarded_path_is_gone_and_the_next_one_starts_empty() {
        use std::os::unix::fs::PermissionsExt;
        let scratch = tempfile::tempdir().unwrap();
        let run = |name: &str| scratch.path().join(name);
        std::fs::write(run("prompt-a"), "the first prompt").unwrap();
        std::fs::set_permissions(run("prompt-a"), std::fs::Permissions::from_mode(0o600)).unwrap();
        discard(&run("prompt-a"));
        assert!(!run("prompt-a").exists());
        assert!(reuse(&run("prompt-b"), false));
        let meta = std::fs::metadata(run("prompt-b")).unwrap();
        assert_eq!((meta.len(), meta.permissions().mode() & 0o777), (0, 0o600));
        assert!(!reuse(&run("tmp-c"), true), "a file is no folder");

        std::fs::create_dir(run("tmp-c")).unwrap();
        std::fs::write(run("tmp-c").join("left"), "by the agent").unwrap();
        discard(&run("tmp-c"));
        assert!(
            !run("tmp-c").exists(),
            "a folder with something in it is removed"
        );
        assert!(!reuse(&run("tmp-d"), true));
        std::fs::create_dir(run("tmp-d")).unwrap();
        discard(&run("tmp-d"));
        assert!(reuse(&run("tmp-e"), true));
        assert_eq!(std::fs::read_dir(run("tmp-e")).unwrap().count(), 0);

        discard(&run("prompt-b"));
        discard(&run("tmp-e"));
        std::fs::write(run(&format!("{PREFIX}of-a-dead-daemon")), "").unwrap();
        remove_all(scratch.path());
        assert_eq!(names(scratch.path()), Vec::<String>::new());
        assert!(!reuse(&run("prompt-f"), false));
    }
}
