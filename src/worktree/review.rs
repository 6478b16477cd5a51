//! `job review`: a write job's work sent back to the same agent with the operator's comments,
//! as the job's next attempt in the same worktree and branch; the work's tree at that moment
//! is kept so `job diff --since-review` shows only what the round changed.
//!
//! Owns the round's prompt and record; queueing the job again is the engine's.

use serde::Serialize;

use super::WorktreeError;
use super::snapshot::snapshot;
use crate::engine::{self, Env};
use crate::store::Store;
use crate::store::worktrees;

/// The header of a review round's prompt; the original task follows the marker.
const HEADER: &str = "Review comments";
const ORIGINAL: &str = "\n\n---\nThe original task:\n";

/// What a review round queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reviewed {
    pub job: String,
    pub round: i64,
    pub attempt: u32,
}

/// The job's first prompt, under any review rounds it had.
fn original(prompt: &str) -> &str {
    match prompt.strip_prefix(HEADER) {
        Some(rest) => rest.split_once(ORIGINAL).map_or(prompt, |(_, o)| o),
        None => prompt,
    }
}

/// Sends the job's work back to its agent with `comments` at the top of its prompt.
pub fn review(
    store: &mut Store,
    env: Env<'_>,
    here: &[String],
    id: &str,
    comments: &str,
) -> Result<Reviewed, WorktreeError> {
    if comments.trim().is_empty() {
        return Err(crate::invalid!("job review needs comments").into());
    }
    let (job, w, path, _) = super::open_here(&store.conn(), here, id, "review")?;
    let snap = snapshot(&path)?;
    let round = w.review_rounds + 1;
    let branch = w.branch.clone().unwrap_or_default();
    let prompt = format!(
        "{HEADER} (round {round}) on your work so far in this worktree (branch {branch}); \
         address each one, keep what is right, and report in your gitmoot_result:\n\n{}{ORIGINAL}{}",
        comments.trim(),
        original(&job.prompt)
    );
    let note = format!("sent back for review round {round}");
    let attempt = store.write(|tx| {
        let attempt = engine::review::send_back(tx, env, &job.id, prompt, &note)?;
        worktrees::put(
            tx,
            &worktrees::WriteTree {
                review_rounds: round,
                review_tree: Some(snap.tree.clone()),
                updated_ms: env.clock.now_ms(),
                ..w.clone()
            },
        )?;
        Ok::<_, WorktreeError>(attempt)
    })?;
    Ok(Reviewed {
        job: job.id,
        round,
        attempt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_round_keeps_the_first_task_once() {
        let first = format!("{HEADER} (round 1) …:\n\nfix a{ORIGINAL}build it");
        assert_eq!(original(&first), "build it");
        assert_eq!(original("build it"), "build it");
    }
}
