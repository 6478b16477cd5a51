//! A write job in the fixture: `job-m2x9b4rt` (a settled root) with its worktree row, its
//! land/discard figures and a diff of a modified, a renamed and a binary file.

use std::sync::Arc;

use gitmoot_ui::Snapshot;
use gitmoot_ui::work::{
    DiffFile, DiffLine, DiffView, FileStatus, Hunk, JobWork, LineOp, WorkRow, WorktreeState,
};

pub const JOB: &str = "job-m2x9b4rt";

fn line(op: LineOp, old: Option<u64>, new: Option<u64>, text: &str) -> DiffLine {
    DiffLine {
        op,
        old,
        new,
        text: text.to_string(),
    }
}

/// The fixture's diff: `src/auth.rs` with two hunks, a rename, a binary file.
pub fn files() -> Vec<DiffFile> {
    vec![
        DiffFile {
            path: "src/auth.rs".into(),
            old_path: None,
            status: FileStatus::Modified,
            binary: false,
            hunks_cut: false,
            added: 3,
            removed: 1,
            hunks: vec![
                Hunk {
                    header: "@@ -10,3 +10,4 @@ fn check()".into(),
                    lines: vec![
                        line(LineOp::Context, Some(10), Some(10), "let now = clock();"),
                        line(LineOp::Remove, Some(11), None, "if token.valid() {"),
                        line(
                            LineOp::Add,
                            None,
                            Some(11),
                            "if token.valid() && !token.expired(now) {",
                        ),
                        line(LineOp::Add, None, Some(12), "    audit(token);"),
                        line(LineOp::Context, Some(12), Some(13), "    return Ok(());"),
                    ],
                },
                Hunk {
                    header: "@@ -40,2 +41,3 @@ fn refresh()".into(),
                    lines: vec![
                        line(LineOp::Context, Some(40), Some(41), "let t = issue();"),
                        line(LineOp::Add, None, Some(42), "t.expiry = now + TTL;"),
                        line(LineOp::Context, Some(41), Some(43), "t"),
                    ],
                },
            ],
        },
        DiffFile {
            path: "docs/auth.md".into(),
            old_path: Some("docs/login.md".into()),
            status: FileStatus::Renamed,
            binary: false,
            hunks_cut: false,
            added: 0,
            removed: 0,
            hunks: Vec::new(),
        },
        DiffFile {
            path: "assets/logo.png".into(),
            old_path: None,
            status: FileStatus::Added,
            binary: true,
            hunks_cut: false,
            added: 0,
            removed: 0,
            hunks: Vec::new(),
        },
    ]
}

/// `files` of `n` added lines in one file, for the large-diff tests and the benchmark.
pub fn large(n: usize) -> Vec<DiffFile> {
    vec![DiffFile {
        path: "src/generated.rs".into(),
        old_path: None,
        status: FileStatus::Added,
        binary: false,
        hunks_cut: false,
        added: n as u64,
        removed: 0,
        hunks: vec![Hunk {
            header: format!("@@ -0,0 +1,{n} @@"),
            lines: (1..=n as u64)
                .map(|i| {
                    line(
                        LineOp::Add,
                        None,
                        Some(i),
                        &format!("pub const C{i}: u64 = {i};"),
                    )
                })
                .collect(),
        }],
    }]
}

/// Makes `JOB` a write job with `files` as its diff, open in the drawer's data.
pub fn add(snap: &mut Snapshot, files: Vec<DiffFile>) {
    snap.work.rows.insert(
        JOB.into(),
        WorkRow {
            state: Some(WorktreeState::Open),
            review_rounds: 1,
            overlaps: Vec::new(),
            ..Default::default()
        },
    );
    snap.work.job = Some(JobWork {
        job_id: JOB.into(),
        state: WorktreeState::Open,
        branch: format!("gitmoot/{JOB}"),
        base: "main".into(),
        files: files.iter().map(|f| f.path.clone()).collect(),
        added: files.iter().map(|f| f.added).sum(),
        removed: files.iter().map(|f| f.removed).sum(),
        commits: 2,
        review_rounds: 1,
        loss: "3 file(s) changed (+4 -1), 2 commit(s): src/auth.rs, docs/auth.md, assets/logo.png"
            .into(),
    });
    snap.work.diff = Some(Arc::new(DiffView::new(JOB, files)));
    let mut d = super::fixture::detail();
    d.job_id = JOB.into();
    snap.detail = Some(d);
}
