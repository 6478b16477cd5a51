//! Spare files and folders: the temporary paths of ended runs, kept for the next run in
//! the same folder so a busy daemon makes no new inode per job.
//!
//! On ext4 a new file or folder costs a search of the inode groups that grows with every
//! inode freed in the last minutes (they are skipped), so a daemon that made and removed
//! three of them a job spent more on that search the faster it went. Two kinds of path
//! are kept, by how they are named:
//! - A run's scratch (prompt files, run folders) is named by the daemon, not the job, so
//!   a spare is handed out under the name it has, with no rename: a folder once it is
//!   empty (one the run left something in is removed), a file as it is. The next run
//!   overwrites the file and trims it to its own length (`runtime::write_private`); a
//!   truncation to nothing would mark an ext4 file for a forced write-back at its next
//!   close. Until then a spare file holds the prompt of the run before, which the store
//!   holds as well, in a folder only this user enters.
//! - A stdout record is named for its job, since recovery finds it by that name. An ended
//!   one is only listed (`discard_record`, called inside the daemon's store pass, costs no
//!   call to the file system); the next run that needs a record empties it and renames it
//!   to its own name, off that pass. The daemon removes the ones still listed as it stops,
//!   and one that starts removes those a killed one left (`daemon::recovery`).
//!
//! Knows nothing of what the files hold.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// What spares were renamed to before they were kept under their own names: a daemon of
/// an earlier version may have left some, which `remove_all` clears.
const PREFIX: &str = "spare-";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Scratch, reused under its own name.
    File,
    Folder,
    /// An ended record still under its job's name, not emptied yet.
    Record,
}

struct Spare {
    path: PathBuf,
    kind: Kind,
}

fn spares() -> MutexGuard<'static, Vec<Spare>> {
    static SPARES: Mutex<Vec<Spare>> = Mutex::new(Vec::new());
    SPARES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether `path` is named `<stem>-…` in `folder`.
fn named(path: &Path, folder: &Path, stem: &str) -> bool {
    path.parent() == Some(folder)
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(stem))
            .is_some_and(|rest| rest.starts_with('-'))
}

/// Keeps the scratch path `path` for the next run in its folder: a folder only when the
/// run left it empty (otherwise it is removed), a file as it is.
pub fn keep(path: &Path) {
    match std::fs::read_dir(path) {
        Ok(mut entries) => {
            if entries.next().is_none() {
                spares().push(Spare {
                    path: path.to_path_buf(),
                    kind: Kind::Folder,
                });
            } else {
                let _ = std::fs::remove_dir_all(path);
                // Spares kept inside it went with it.
                spares().retain(|s| !s.path.starts_with(path));
            }
        }
        // Not a folder: a file of ours, or gone already (a later `take` finds out).
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => spares().push(Spare {
            path: path.to_path_buf(),
            kind: Kind::File,
        }),
        Err(_) => {}
    }
}

/// A kept scratch file (or, with `dir`, folder) of `folder` named `<stem>-…`, under its own
/// name; the caller owns it from now on.
pub fn take(folder: &Path, stem: &str, dir: bool) -> Option<PathBuf> {
    let want = if dir { Kind::Folder } else { Kind::File };
    let mut list = spares();
    let at = list
        .iter()
        .position(|s| s.kind == want && named(&s.path, folder, stem))?;
    Some(list.swap_remove(at).path)
}

/// Lists the record of an ended run for the next record of its folder to take over.
pub(crate) fn discard_record(path: &Path) {
    spares().push(Spare {
        path: path.to_path_buf(),
        kind: Kind::Record,
    });
}

/// Renames an ended record of `path`'s folder to `path`, emptied: then an empty record is
/// there. False when there was none.
pub(crate) fn reuse_record(path: &Path) -> bool {
    let folder = path.parent();
    loop {
        let spare = {
            let mut list = spares();
            // Its own name first: renaming another record onto a listed one would leave
            // the list naming a record in use.
            let find = |own: bool| {
                list.iter().position(|s| {
                    s.kind == Kind::Record
                        && if own {
                            s.path == path
                        } else {
                            s.path.parent() == folder
                        }
                })
            };
            let at = find(true).or_else(|| find(false));
            match at {
                Some(i) => list.swap_remove(i).path,
                None => return false,
            }
        };
        // Through a descriptor closed again at once: a truncation to nothing marks an
        // ext4 file for a forced write-back at its next close, which this close takes
        // while there is nothing to write.
        let emptied = std::fs::OpenOptions::new()
            .write(true)
            .open(&spare)
            .and_then(|f| f.set_len(0));
        if emptied.is_ok() && std::fs::rename(&spare, path).is_ok() {
            return true;
        }
        let _ = std::fs::remove_file(&spare);
    }
}

/// Removes every spare in `dir`, kept by this process or left by one that died; the
/// daemon calls it as it starts and as it stops.
pub(crate) fn remove_all(dir: &Path) {
    let gone: Vec<Spare> = {
        let mut list = spares();
        let (gone, kept) = std::mem::take(&mut *list)
            .into_iter()
            .partition(|s| s.path.parent() == Some(dir));
        *list = kept;
        gone
    };
    for s in gone {
        let _ = match s.kind {
            Kind::Folder => std::fs::remove_dir_all(&s.path),
            Kind::File | Kind::Record => std::fs::remove_file(&s.path),
        };
    }
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
    fn scratch_is_handed_out_under_its_own_name_and_a_used_folder_is_not() {
        let scratch = tempfile::tempdir().unwrap();
        let run = |name: &str| scratch.path().join(name);
        std::fs::write(run("prompt-a"), "the first prompt").unwrap();
        keep(&run("prompt-a"));
        assert_eq!(take(scratch.path(), "tmp", false), None, "another stem");
        assert_eq!(
            take(scratch.path(), "prompt", true),
            None,
            "a file is no folder"
        );
        assert_eq!(take(scratch.path(), "prompt", false), Some(run("prompt-a")));
        assert_eq!(take(scratch.path(), "prompt", false), None, "taken once");

        std::fs::create_dir(run("tmp-c")).unwrap();
        std::fs::write(run("tmp-c").join("left"), "by the agent").unwrap();
        keep(&run("tmp-c"));
        assert!(
            !run("tmp-c").exists(),
            "a folder with something in it is removed"
        );
        assert_eq!(take(scratch.path(), "tmp", true), None);
        std::fs::create_dir(run("tmp-d")).unwrap();
        keep(&run("tmp-d"));
        assert_eq!(take(scratch.path(), "tmp", true), Some(run("tmp-d")));

        keep(&run("prompt-a"));
        keep(&run("tmp-d"));
        std::fs::write(run(&format!("{PREFIX}of-a-dead-daemon")), "").unwrap();
        std::fs::write(run("someone-elses"), "").unwrap();
        remove_all(scratch.path());
        assert_eq!(names(scratch.path()), vec!["someone-elses".to_string()]);
        assert_eq!(take(scratch.path(), "prompt", false), None);
    }

    #[test]
    fn an_ended_record_keeps_its_name_until_the_next_record_takes_it_over_empty() {
        let runs = tempfile::tempdir().unwrap();
        let path = |name: &str| runs.path().join(name);
        assert!(!reuse_record(&path("job-b.shell.out")), "none ended yet");
        std::fs::write(path("job-a.shell.out"), "the first output").unwrap();
        discard_record(&path("job-a.shell.out"));
        assert!(reuse_record(&path("job-b.shell.out")));
        assert_eq!(names(runs.path()), vec!["job-b.shell.out".to_string()]);
        assert_eq!(std::fs::read(path("job-b.shell.out")).unwrap(), b"");

        std::fs::write(path("job-c.shell.out"), "another output").unwrap();
        discard_record(&path("job-c.shell.out"));
        discard_record(&path("job-b.shell.out"));
        assert!(reuse_record(&path("job-b.shell.out")), "its own name first");
        assert_eq!(
            std::fs::read(path("job-c.shell.out")).unwrap(),
            b"another output"
        );
        discard_record(&path("job-b.shell.out"));
        remove_all(runs.path());
        assert_eq!(names(runs.path()), Vec::<String>::new());
        assert!(!reuse_record(&path("job-c.shell.out")));
    }
}
