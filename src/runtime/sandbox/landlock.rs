//! The Landlock half of an agent's confinement: a ruleset that refuses every filesystem
//! write except beneath the paths its policy leaves writable, and (ABI 6) every signal and
//! abstract unix socket that leads outside the agent's own process tree.
//!
//! The ruleset is applied in the child between its start and its exec, while it still
//! shares the daemon's memory (`process/spawn.rs`), so `apply` makes only raw syscalls on
//! memory prepared before the start. Knows nothing of policies (that is `sandbox/mod.rs`).

use std::ffi::CString;
use std::sync::OnceLock;

// The kernel's ABI (include/uapi/linux/landlock.h): facts, not code, carried over.
const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: i32 = 1;
const WRITE_FILE: u64 = 1 << 1;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
/// MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM (bits 6–12).
const MAKE_ANY: u64 = 0b111_1111 << 6;
/// ABI 2: linking or renaming a file into another folder.
const REFER: u64 = 1 << 13;
/// ABI 3: truncating a file.
const TRUNCATE: u64 = 1 << 14;
/// ABI 6: connecting to an abstract unix socket bound outside the domain.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
/// ABI 6: sending a signal to a process outside the domain (`kill -0` included).
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version this kernel offers; 0 when it has none.
pub(crate) fn abi() -> i64 {
    static ABI: OnceLock<i64> = OnceLock::new();
    *ABI.get_or_init(|| {
        // SAFETY: the version query takes no attribute pointer and creates nothing.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<RulesetAttr>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        };
        v.max(0)
    })
}

/// The write rights this kernel can refuse.
fn write_rights(abi: i64) -> u64 {
    let mut rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_ANY;
    if abi >= 2 {
        rights |= REFER;
    }
    if abi >= 3 {
        rights |= TRUNCATE;
    }
    rights
}

/// The scopes this kernel can close.
fn scopes(abi: i64) -> u64 {
    if abi >= 6 {
        SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET
    } else {
        0
    }
}

/// Whether this kernel keeps a confined agent's signals inside its own tree.
pub fn scopes_signals() -> bool {
    scopes(abi()) & SCOPE_SIGNAL != 0
}

/// A prepared ruleset: no writes outside `writable`, no signals out of the domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruleset {
    /// Each writable path, and whether it is a folder (a file takes only file rights).
    writable: Vec<(CString, bool)>,
    rights: u64,
    scoped: u64,
}

impl Ruleset {
    /// The ruleset for this kernel; only worth applying where `abi() >= 1`.
    pub(super) fn new(writable: Vec<(CString, bool)>) -> Self {
        let abi = abi();
        Ruleset {
            writable,
            rights: write_rights(abi),
            scoped: scopes(abi),
        }
    }

    /// Restricts the calling process (and everything it starts) for good.
    ///
    /// # Safety
    /// Meant for a child before its exec: it allocates nothing and calls only async-signal-safe
    /// syscalls (open, close, prctl, the Landlock calls).
    pub(super) unsafe fn apply(&self) -> std::io::Result<()> {
        let attr = RulesetAttr {
            handled_access_fs: self.rights,
            handled_access_net: 0,
            scoped: self.scoped,
        };
        // Kernels before ABI 4 know only the first field; a longer attribute whose extra
        // fields are zero is accepted by every version.
        // SAFETY: `attr` lives across the call and its size is passed with it.
        let ruleset = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &raw const attr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        if ruleset < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let ruleset = ruleset as i32;
        let file_rights = self.rights & (WRITE_FILE | TRUNCATE);
        for (path, is_dir) in &self.writable {
            // SAFETY: a NUL-terminated path made before the child started; a missing path
            // simply gets no rule.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
            if fd < 0 {
                continue;
            }
            let rule = PathBeneathAttr {
                allowed_access: if *is_dir { self.rights } else { file_rights },
                parent_fd: fd,
            };
            // SAFETY: `rule` lives across the call; both descriptors are ours.
            unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset,
                    RULE_PATH_BENEATH,
                    &raw const rule,
                    0u32,
                );
                libc::close(fd);
            }
        }
        // SAFETY: plain prctl and Landlock calls on our own descriptor.
        let restricted = unsafe {
            // Landlock requires it of an unprivileged process; it also stops setuid
            // programs from regaining what the ruleset takes away.
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) == 0
        };
        let err = std::io::Error::last_os_error();
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(ruleset) };
        if restricted { Ok(()) } else { Err(err) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_kernels_refuse_more_kinds_of_write() {
        assert_eq!(write_rights(1) & (REFER | TRUNCATE), 0);
        assert_ne!(write_rights(2) & REFER, 0);
        assert_ne!(write_rights(3) & TRUNCATE, 0);
        assert_eq!(write_rights(1) & (1 << 2), 0, "reading is never refused");
    }

    #[test]
    fn signals_are_scoped_from_abi_6() {
        assert_eq!(scopes(5), 0);
        assert_ne!(scopes(6) & SCOPE_SIGNAL, 0);
    }
}
