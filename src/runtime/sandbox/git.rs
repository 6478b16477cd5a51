//! A write job's repository as its confined agent sees it: the repository's common git
//! folder through a private overlay layer of the run's own, with the real folders that
//! matter bound back over it, each writable or read-only.
//!
//! Why a layer: git writes shared bookkeeping beside the refs it means to change. Every
//! ref deletion (a commit drops `AUTO_MERGE`, `stash pop` drops its entry) first creates
//! `packed-refs.lock` in the common folder, and `git stash` keeps `refs/stash` and its
//! reflog beside `refs/heads/`. Granting those folders would grant the base branch,
//! `packed-refs` and the main worktree's `HEAD` with them. Through the layer such writes
//! succeed and stay in the run (a stash is the run's own), while the real `refs/heads/`,
//! `refs/tags/`, their reflogs, `packed-refs` and `HEAD` are read-only mounts (EROFS or
//! EBUSY: moving the base branch or another job's branch is refused, never faked), and the
//! object store, the worktree's admin folder and the job's own ref folders are the real
//! ones, writable.
//!
//! Weighed and left: a clone of the job's own (`git clone --shared`) would isolate more,
//! but every reader of a job's branch (diff, list, land, forecasts) reads it in the
//! operator's repository; moving them is issue 46's.
//!
//! Made in the child in two steps around the mount view's read-only one (the overlay needs
//! its private half on a writable mount when it is made); all of it or none (a half-made
//! layer could hide a commit from the operator). Owns no policy.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What a write job's git may change in its repository, as the worktree module reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitGrant {
    /// The repository's common git folder.
    pub common: PathBuf,
    /// Real folders and files beneath `common`, parents before what lies in them, and
    /// whether the agent may write each.
    pub real: Vec<(PathBuf, bool)>,
    /// The job's branch: beside it the daemon keeps what the run's layer held that is work
    /// (`worktree::keep_stash`).
    pub branch: String,
}

/// Where, in the run's folder for a layer, its private half lives: after the run, what the
/// agent's git wrote beyond its grant.
pub fn upper(dir: &Path) -> PathBuf {
    dir.join("upper")
}

/// The most real paths a layer binds: the descriptors live on the child's stack.
const MAX_REAL: usize = 16;
const OPEN_TREE_CLONE: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

/// A prepared layer: C strings made before the child starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GitLayer {
    common: CString,
    /// Overlay options for a mount namespace of the daemon's user, and of one of our own.
    options: CString,
    options_userns: CString,
    real: Vec<(CString, bool)>,
}

impl GitLayer {
    /// The layer over `grant.common` whose private half lives in `dir` (an empty folder of
    /// the run's); none when a path cannot be spelled in overlay options or is missing.
    pub(super) fn new(grant: &GitGrant, dir: &Path) -> Option<Self> {
        let (upper, work) = (upper(dir), dir.join("work"));
        std::fs::create_dir(&upper).ok()?;
        std::fs::create_dir(&work).ok()?;
        let spelled = |p: &Path| {
            let s = p.to_str()?;
            (!s.contains([',', ':', '\\'])).then(|| s.to_string())
        };
        let (lower, upper, work) = (spelled(&grant.common)?, spelled(&upper)?, spelled(&work)?);
        let options = format!("lowerdir={lower},upperdir={upper},workdir={work}");
        let real: Vec<(CString, bool)> = grant
            .real
            .iter()
            .map(|(p, w)| {
                p.exists()
                    .then(|| CString::new(p.as_os_str().as_bytes()).ok())
                    .flatten()
                    .map(|c| (c, *w))
            })
            .collect::<Option<_>>()?;
        if real.len() > MAX_REAL {
            return None;
        }
        Some(GitLayer {
            common: CString::new(lower).ok()?,
            options_userns: CString::new(format!("{options},userxattr")).ok()?,
            options: CString::new(options).ok()?,
            real,
        })
    }

    /// Mounts the layer, while the run's folder for its private half is still writable
    /// (the view's read-only step comes after); false, nothing left mounted, when any
    /// step failed.
    ///
    /// # Safety
    /// For a child before its exec, inside its own mount namespace: no allocation, only
    /// async-signal-safe syscalls.
    pub(super) unsafe fn mount(&self, userns: bool) -> bool {
        let mut fds = [-1i32; MAX_REAL];
        // SAFETY: mount calls on this process's own namespace and descriptors of its own.
        unsafe {
            // The real paths are taken before the layer hides them.
            for (slot, (path, _)) in fds.iter_mut().zip(&self.real) {
                let fd = libc::syscall(
                    libc::SYS_open_tree,
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
                );
                if fd < 0 {
                    close_all(&fds);
                    return false;
                }
                *slot = fd as i32;
            }
            let options = if userns {
                &self.options_userns
            } else {
                &self.options
            };
            if libc::mount(
                c"overlay".as_ptr(),
                self.common.as_ptr(),
                c"overlay".as_ptr(),
                0,
                options.as_ptr().cast(),
            ) != 0
            {
                close_all(&fds);
                return false;
            }
            let placed = self.real.iter().zip(fds).all(|((path, _), fd)| {
                libc::syscall(
                    libc::SYS_move_mount,
                    fd,
                    c"".as_ptr(),
                    libc::AT_FDCWD,
                    path.as_ptr(),
                    MOVE_MOUNT_F_EMPTY_PATH,
                ) == 0
            });
            close_all(&fds);
            placed || self.undo()
        }
    }

    /// After the view's read-only step: the layer writable, each real path as granted;
    /// false, the layer gone, when the kernel refused one.
    ///
    /// # Safety
    /// As [`GitLayer::mount`], once it succeeded.
    pub(super) unsafe fn settle(&self) -> bool {
        // SAFETY: attributes of mounts this process made.
        unsafe {
            let set = super::attr::set_readonly(self.common.as_ptr(), false, false)
                && self.real.iter().all(|(path, writable)| {
                    super::attr::set_readonly(path.as_ptr(), !writable, false)
                });
            set || self.undo()
        }
    }

    /// Unmounts the layer and all it holds; false.
    unsafe fn undo(&self) -> bool {
        // SAFETY: a mount this process made.
        unsafe { libc::umount2(self.common.as_ptr(), libc::MNT_DETACH) };
        false
    }
}

/// Closes the descriptors taken so far (the rest are -1).
unsafe fn close_all(fds: &[i32]) {
    for &fd in fds.iter().filter(|fd| **fd >= 0) {
        // SAFETY: a descriptor of ours, closed once.
        unsafe { libc::close(fd) };
    }
}
