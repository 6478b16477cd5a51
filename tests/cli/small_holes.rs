//! Issue 46's smaller holes through the real binary: a store write on a full disk names
//! the database and its write-ahead log and says the disk is full.

use std::io::Write;
use std::path::{Path, PathBuf};

use gitmoot_test_support as support;

/// A tmpfs of `size` mounted on a scratch folder, unmounted when dropped; `None` (the
/// test then says it skipped) where mounting is refused, as for a user who is not root.
struct SmallDisk {
    at: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("disk");
        std::fs::create_dir(&at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Self { at, _dir: dir })
    }

    /// Writes a filler file until the disk refuses more.
    fn fill(&self) -> PathBuf {
        let path = self.at.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.at).status();
    }
}

fn job_run(home: &Path, prompt: &Path) -> (Option<i32>, String) {
    let out = support::gitmoot(home)
        .args(["job", "run", "--agent", "w", "--prompt-file"])
        .arg(prompt)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn job_run_on_a_full_disk_names_the_store_file_and_says_the_disk_is_full() {
    let Some(disk) = SmallDisk::mount("8m") else {
        eprintln!("skipped: mounting a small tmpfs was refused (the test needs root)");
        return;
    };
    let home = disk.at.join("h");
    support::shell_agent(&home, "w", "cat", &[]);
    let db = home.join("gitmoot.db");
    let says = format!(
        "the disk holding the store {} (or its write-ahead log {}-wal) is full",
        db.display(),
        db.display()
    );
    let prompt = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(prompt.path(), "x".repeat(400_000)).unwrap();

    // Some room left: the store opens, and the job's row is what does not fit.
    let filler = disk.fill();
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len - 120 * 1024)
        .unwrap();
    let (code, err) = job_run(&home, prompt.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&says) && err.contains("free space"), "{err}");

    // No room at all: the store cannot even start its log.
    disk.fill();
    let (code, err) = job_run(&home, prompt.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&says), "{err}");
    std::fs::remove_file(&filler).unwrap();
    let (code, err) = job_run(&home, prompt.path());
    assert_eq!(code, Some(0), "{err}");
}
