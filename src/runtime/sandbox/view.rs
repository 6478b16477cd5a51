//! The mount half of an agent's confinement: a private mount namespace in which every
//! mount is read-only except bind mounts of the paths its policy leaves writable. Landlock
//! refuses writes but not `chmod`, `chown`, `utimes` or `setxattr` on an existing file;
//! a read-only mount refuses all of them (EROFS), path by path, which no seccomp filter
//! can (it never sees a path).
//!
//! A write job's agent also gets its repository's git folder through a private layer
//! (`git.rs`): what git writes there beyond the job's own refs stays in the run.
//!
//! Made in the child before its exec with raw syscalls on prepared memory, like the
//! Landlock half. Needs CAP_SYS_ADMIN (root) or, for anyone else, a user namespace of the
//! agent's own (mapping only its own uid and gid); where neither can be made the child runs
//! without the view and Landlock alone holds its writes. Knows nothing of policies.

use std::ffi::{CStr, CString};

use super::attr::set_readonly;
use super::git::GitLayer;

const CAP_SYS_ADMIN: libc::c_ulong = 21;

/// What the child needs to build its view, made before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct View {
    /// `<uid> <uid> 1` and `<gid> <gid> 1`: the only ids a user namespace of the agent's maps.
    uid_map: CString,
    gid_map: CString,
    git: Option<GitLayer>,
}

impl View {
    pub(super) fn new(git: Option<GitLayer>) -> Self {
        // SAFETY: plain id queries.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let line = |id: u32| CString::new(format!("{id} {id} 1")).expect("digits");
        View {
            uid_map: line(uid),
            gid_map: line(gid),
            git,
        }
    }

    /// Enters a private mount namespace where only `writable` can be changed; true when
    /// the git layer is in place too. Without a namespace the child runs in the daemon's.
    ///
    /// # Safety
    /// For a child before its exec: no allocation, only async-signal-safe syscalls.
    pub(super) unsafe fn enter(&self, writable: &[(CString, bool)]) -> bool {
        // SAFETY: the calls below change only this process's namespaces and mounts.
        unsafe {
            let userns = libc::unshare(libc::CLONE_NEWNS) != 0;
            if userns && !self.own_user_namespace() {
                return false;
            }
            let root = c"/".as_ptr();
            // Nothing done below may reach the daemon's namespace.
            if libc::mount(
                std::ptr::null(),
                root,
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return false;
            }
            for (path, _) in writable {
                libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                );
            }
            let git = self.git.as_ref().filter(|g| g.mount(userns));
            set_readonly(root, true, true);
            for (path, _) in writable {
                set_readonly(path.as_ptr(), false, true);
            }
            let layered = git.is_some_and(|g| g.settle());
            // A root agent must not undo the view: without CAP_SYS_ADMIN after its exec it
            // can neither remount nor unmount. Non-root agents never had it there.
            libc::prctl(libc::PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0);
            layered
        }
    }

    /// A user namespace holding only this uid and gid, with a mount namespace of its own.
    unsafe fn own_user_namespace(&self) -> bool {
        // SAFETY: unshare and writes to this process's own /proc files.
        unsafe {
            libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) == 0
                && write_proc(c"/proc/self/setgroups", c"deny")
                && write_proc(c"/proc/self/uid_map", &self.uid_map)
                && write_proc(c"/proc/self/gid_map", &self.gid_map)
        }
    }
}

/// Writes `text` to the /proc file `path`; true when all of it went in.
unsafe fn write_proc(path: &CStr, text: &CStr) -> bool {
    // SAFETY: open, write and close on our own descriptor.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let len = text.to_bytes().len();
        let n = libc::write(fd, text.as_ptr().cast(), len);
        libc::close(fd);
        n == len as isize
    }
}
