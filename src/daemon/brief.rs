//! The on-disk briefs of artifact bodies (000:255): a settled job whose result carries an
//! `artifact_body` has it written in full to `<home>/artifacts/delegations/<job>/brief.md`
//! (folder 0700, file 0600), the file a truncated inline copy in a prompt points at; once
//! the job's run has ended, the briefs of all its jobs are removed: at once when this
//! daemon's settlement ended it, else by the pool's sweep (a run a human's kill, cancel or
//! answer ended, or one another daemon finished).
//!
//! Owns only these files; never touches the store or decides anything (the daemon calls it
//! after a run and after a settlement commits). A failure is logged, never fatal: the body
//! stays in the store (`job show`).

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use crate::home::Home;

/// Writes `body` as the brief of `job_id` under the artifacts folder `artifacts`.
pub(crate) fn write(artifacts: &Path, job_id: &str, body: &str) {
    let path = Home::brief_path(artifacts, job_id);
    let written = path
        .parent()
        .map_or(Ok(()), |dir| {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
        })
        .and_then(|()| {
            fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&path)
        })
        .and_then(|mut f| f.write_all(body.as_bytes()));
    if let Err(e) = written {
        tracing::warn!(job = %job_id, "writing the brief {}: {e}", path.display());
    }
}

/// Removes the briefs of `job_ids` (a run that ended), each with its folder.
pub(crate) fn remove(artifacts: &Path, job_ids: &[String]) {
    for id in job_ids {
        let path = Home::brief_path(artifacts, id);
        if let Some(dir) = path.parent()
            && dir.exists()
            && let Err(e) = fs::remove_dir_all(dir)
        {
            tracing::warn!(job = %id, "removing the brief {}: {e}", dir.display());
        }
    }
}

/// The job ids that have a brief folder under `artifacts`.
pub(crate) fn listed(artifacts: &Path) -> Vec<String> {
    let Some(dir) = Home::brief_path(artifacts, "-")
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
    else {
        return Vec::new();
    };
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}
