//! Issue 46's smaller holes through the real binary: a store write on a full disk names
//! the database and its write-ahead log and says the disk is full; a worktree whose `.git`
//! was deleted is listed `unlinked`, refused by land and removed by discard once its loss
//! (the folder and its file count, the branch's commits) was said.

use std::io::Write;
use std::path::{Path, PathBuf};

use gitmoot_test_support as support;
use gitmoot_test_support::write::WriteHome;

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

#[test]
fn a_worktree_whose_git_file_was_deleted_is_unlinked_refused_by_land_and_discarded_saying_so() {
    let w = WriteHome::new("");
    let job = w.implement(
        "echo a > a.txt; git add a.txt; git commit -qm a; echo u > u.txt",
        &[],
    );
    w.h.daemon_until_idle(1);
    let wt = w.worktree(&job);
    let branch = w.summary(&job).1;
    assert!(!w.git(&["branch", "--list", &branch]).trim().is_empty());
    std::fs::remove_file(wt.join(".git")).unwrap();
    let main = w.git(&["rev-parse", "main"]);

    let list = w.json(&["worktree", "list", "--json"]);
    assert_eq!(list[0]["state"], "unlinked", "{list}");
    let err = w.fails(&["job", "land", &job], 1);
    assert!(
        err.contains(&format!("{}'s worktree {} is unlinked", job, wt.display()))
            && err.contains("its .git file is gone")
            && err.contains(&format!("gitmoot job discard {job}")),
        "{err}"
    );
    assert_eq!(w.git(&["rev-parse", "main"]), main);

    // Unasked, the discard says what it would lose and removes nothing.
    let folder = format!(
        "its unlinked folder {} (4 file(s), no longer git work",
        wt.display()
    );
    let err = w.fails(&["job", "discard", &job], 2);
    assert!(
        err.contains(&folder) && err.contains("1 commit(s)"),
        "{err}"
    );
    assert!(err.contains("a.txt"), "{err}");
    assert!(wt.join("u.txt").exists());

    let said = w.h.ok(&["job", "discard", &job, "--force"]);
    assert!(
        said.contains(&folder) && said.contains("1 commit(s)"),
        "{said}"
    );
    assert!(!wt.exists());
    let records = w.git(&["worktree", "list", "--porcelain"]);
    assert!(!records.contains(&wt.display().to_string()), "{records}");
    assert!(
        w.git(&["branch", "--list", &branch]).trim().is_empty(),
        "{branch}"
    );
    let list = w.json(&["worktree", "list", "--json"]);
    assert_eq!(list[0]["state"], "discarded", "{list}");
    assert_eq!(w.git(&["rev-parse", "main"]), main);
}

#[test]
fn a_150_mb_files_diff_keeps_its_counts_and_cuts_its_hunks_at_the_bound() {
    let w = WriteHome::new("");
    let job = w.implement(
        "yes \"$(printf '%0999d' 0)\" | head -c 150000000 > big.txt; echo s > s.txt; git add big.txt s.txt; git commit -qm big",
        &[],
    );
    w.h.daemon_until_idle(1);
    let d = w.json(&["job", "diff", &job, "--json"]);
    let files = d["files"].as_array().unwrap();
    let (big, small) = (&files[0], &files[1]);
    assert_eq!(
        (big["path"].as_str(), big["added"].as_u64()),
        (Some("big.txt"), Some(150_000))
    );
    assert_eq!(big["hunks_cut"], true, "{}", big["added"]);
    let kept: usize = big["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["lines"].as_array().unwrap())
        .map(|l| l["text"].as_str().unwrap().len())
        .sum();
    // Kept up to the 1 MiB bound of a file's hunks, and no more.
    assert!(kept <= 1024 * 1024 && kept > 1024 * 1024 - 1000, "{kept}");
    assert_eq!(small["path"], "s.txt");
    assert!(small.get("hunks_cut").is_none(), "{small}");
    assert_eq!(small["hunks"][0]["lines"][0]["text"], "s", "{small}");
}
