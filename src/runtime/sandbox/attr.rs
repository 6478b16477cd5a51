//! Mount attributes for the mount view: read-only set or cleared on a mount, the one
//! `mount_setattr` call both the view (`view.rs`) and the git layer (`git.rs`) make. Made
//! in the child before its exec: a raw syscall on memory of its own stack.

/// `struct mount_attr` (include/uapi/linux/mount.h).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 1;

/// Sets (or, with `on` false, clears) read-only on the mount at `path` and, with `deep`,
/// every mount beneath it; true when the kernel did.
pub(super) unsafe fn set_readonly(path: *const libc::c_char, on: bool, deep: bool) -> bool {
    let attr = MountAttr {
        attr_set: if on { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if on { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `attr` lives across the call and its size is passed with it.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            if deep {
                libc::AT_RECURSIVE as libc::c_uint
            } else {
                0
            },
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        ) == 0
    }
}
