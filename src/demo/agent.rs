//! The demo's scripted agents: `gitmoot demo-agent ROLE`, run by the shell runtime, read
//! the job from the environment gitmoot sets (`GITMOOT_JOB_KIND`, `GITMOOT_DELEGATION_ID`,
//! `GITMOOT_ATTEMPT`) and the prompt from stdin, wait a little like a real agent, and print
//! prose around a fenced `gitmoot_result` — the same shape real agents produce.
//!
//! `script` is pure so the scene is testable without processes; `run` does the I/O.

use std::io::{Read, Write};

use serde_json::{Value, json};

/// The parts the demo casts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// Coordinator: fans out, then synthesises in its continuation.
    Lead,
    /// Read-only investigation legs.
    Scout,
    /// Code review legs.
    Reviewer,
    /// A leg that needs a human decision before the plan can go on.
    Planner,
    /// A leg that fails on its first attempt (escalate_human), passes when retried.
    Runner,
    /// The independent verify leg.
    Verifier,
    /// A slow leg, for the tree the demo kills.
    Sleeper,
    /// Writes code in a worktree of its own (an implement job).
    Coder,
}

/// What the scripted agent sees of its job.
#[derive(Debug, Clone, Default)]
pub struct JobView {
    pub kind: String,
    pub delegation_id: String,
    pub attempt: u32,
    pub prompt: String,
}

/// The shortest soak, so the killed tree is killed mid-run even with `--speed 0`.
const SOAK_FLOOR_MS: u64 = 1_500;

/// How long a role "thinks", in milliseconds at speed 1.
pub(crate) fn think_ms(role: Role, job: &JobView) -> u64 {
    match role {
        Role::Sleeper => 4_000,
        Role::Coder => 1_000,
        Role::Lead if job.kind == "root" => 900,
        Role::Lead => 1_200,
        Role::Runner => 1_600,
        _ => 700 + (job.delegation_id.len() as u64 * 90),
    }
}

fn wrap(prose: &str, result: Value) -> String {
    let body = serde_json::to_string_pretty(&json!({ "gitmoot_result": result })).expect("json");
    format!("{prose}\n\n```json\n{body}\n```\n")
}

/// The output a role gives for a job.
pub fn script(role: Role, job: &JobView) -> String {
    match role {
        Role::Lead => lead(job),
        // The question promoted from the chat thread gets its own answer.
        Role::Scout if job.prompt.contains(super::QUICK_MARK) => wrap(
            "Small question, answered directly.",
            json!({
                "decision": "approved",
                "summary": "Rate limits live in gateway/limits.toml: 600 requests a minute per token",
                "findings": ["gateway/limits.toml"],
                "changes_made": [],
                "tests_run": [],
                "needs": [],
                "delegations": []
            }),
        ),
        Role::Scout => wrap(
            "I read the modules involved and traced the call paths.",
            json!({
                "decision": "approved",
                "summary": format!("{}: the session store is only touched from auth/, two call sites", label(job)),
                "findings": ["auth/session.rs owns token refresh", "billing reads sessions through one helper"],
                "changes_made": [],
                "tests_run": [],
                "needs": [],
                "delegations": []
            }),
        ),
        Role::Reviewer => wrap(
            "Reviewed the diff and ran the focused tests.",
            json!({
                "decision": "approved",
                "summary": "Token refresh change is safe; one nit about logging",
                "findings": [{"file": "auth/session.rs", "line": 88, "note": "log the refresh failure reason"}],
                "changes_made": [],
                "tests_run": ["cargo test -p auth session::refresh"],
                "needs": [],
                "evidence": "executed",
                "delegations": []
            }),
        ),
        Role::Planner => wrap(
            "The migration can go two ways and the trade-off is a product call.",
            json!({
                "decision": "approved",
                "summary": "Migration drafted; needs a human choice of rollout",
                "findings": ["sessions table has 40M rows"],
                "changes_made": [],
                "tests_run": [],
                "needs": [],
                "delegations": [],
                "human_questions": [{
                    "id": "rollout",
                    "prompt": "How should the sessions migration roll out?",
                    "choices": ["online, batched", "maintenance window"]
                }]
            }),
        ),
        Role::Runner if job.attempt < 2 => wrap(
            "The integration suite did not finish.",
            json!({
                "decision": "failed",
                "summary": "integration suite flaked: redis container never became ready",
                "findings": ["tests/integration/session_ttl.rs timed out waiting for redis"],
                "changes_made": [],
                "tests_run": ["cargo test --test integration"],
                "needs": ["a reachable redis"],
                "delegations": []
            }),
        ),
        Role::Runner => wrap(
            "Re-ran with the local redis as instructed.",
            json!({
                "decision": "approved",
                "summary": "integration suite green on retry (42 passed)",
                "findings": [],
                "changes_made": [],
                "tests_run": ["cargo test --test integration"],
                "needs": [],
                "evidence": "executed",
                "delegations": []
            }),
        ),
        Role::Verifier => wrap(
            "Checked the combined plan against the goal.",
            json!({
                "decision": "approved",
                "summary": "plan covers refresh, migration and tests; goal met",
                "findings": [],
                "changes_made": [],
                "tests_run": ["cargo test -p auth"],
                "needs": [],
                "evidence": "executed",
                "delegations": []
            }),
        ),
        Role::Coder => wrap(
            "Made the change in my worktree.",
            super::coder::result(super::coder::is_review_round(&job.prompt)),
        ),
        Role::Sleeper => wrap(
            "Soak finished.",
            json!({"decision": "approved", "summary": "soak run complete", "delegations": []}),
        ),
    }
}

fn label(job: &JobView) -> String {
    if job.delegation_id.is_empty() {
        "survey".into()
    } else {
        job.delegation_id.clone()
    }
}

fn lead(job: &JobView) -> String {
    let slow = job.prompt.contains(super::SOAK_MARK);
    match job.kind.as_str() {
        "root" if slow => wrap(
            "Starting two soak runs.",
            json!({
                "decision": "approved",
                "summary": "fanning out two soak runs",
                "delegations": [
                    {"id": "soak-1", "agent": "sleeper", "action": "ask", "prompt": "Soak the staging cluster for an hour."},
                    {"id": "soak-2", "agent": "sleeper", "action": "ask", "prompt": "Soak the canary for an hour."}
                ]
            }),
        ),
        "root" => wrap(
            "I'll split this into a survey, two parallel checks, the test run and an independent verify.",
            json!({
                "decision": "approved",
                "summary": "Planned the session-refresh rollout as five legs",
                "delegations": [
                    {"id": "survey", "agent": "scout", "action": "ask",
                     "prompt": "Map every reader and writer of the sessions table."},
                    {"id": "api-review", "agent": "reviewer", "action": "review", "deps": ["survey"],
                     "prompt": "Review the token refresh change in auth/session.rs."},
                    {"id": "migration", "agent": "planner", "action": "ask", "deps": ["survey"],
                     "prompt": "Draft the sessions table migration and its rollout."},
                    {"id": "integration", "agent": "runner", "action": "ask", "failure_policy": "escalate_human",
                     "prompt": "Run the integration suite against the change."},
                    {"id": "verify", "agent": "verifier", "action": "review", "deps": ["api-review", "migration"],
                     "synthesis_rule": "verify",
                     "prompt": "Independently check the combined plan against the original goal."}
                ]
            }),
        ),
        "finalize" => wrap(
            "Wrapping up with what finished.",
            json!({
                "decision": "blocked",
                "summary": "stopped by the operator; partial results kept",
                "delegations": []
            }),
        ),
        _ => {
            let choice = ["online, batched", "maintenance window"]
                .into_iter()
                .find(|c| job.prompt.contains(c))
                .unwrap_or("the default rollout");
            wrap(
                "All legs are in; here is the synthesis.",
                json!({
                    "decision": "approved",
                    "summary": format!("Rollout plan ready: refresh fix reviewed, migration {choice}, integration green"),
                    "findings": ["ship behind the session_refresh_v2 flag"],
                    "changes_made": [],
                    "tests_run": [],
                    "needs": [],
                    "delegations": []
                }),
            )
        }
    }
}

/// Reads the job from the environment and stdin, waits, prints the scripted output.
pub fn run(role: Role, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut prompt = String::new();
    std::io::stdin().read_to_string(&mut prompt)?;
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let job = JobView {
        kind: env("GITMOOT_JOB_KIND"),
        delegation_id: env("GITMOOT_DELEGATION_ID"),
        attempt: env("GITMOOT_ATTEMPT").parse().unwrap_or(1),
        prompt,
    };
    let speed: f64 = std::env::var("GITMOOT_DEMO_SPEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let mut wait_ms = if speed > 0.0 {
        (think_ms(role, &job) as f64 / speed) as u64
    } else {
        0
    };
    if role == Role::Sleeper {
        // The soak must still be running when the director kills it, at any speed.
        wait_ms = wait_ms.max(SOAK_FLOOR_MS);
    }
    std::thread::sleep(std::time::Duration::from_millis(wait_ms));
    if role == Role::Runner && job.attempt == 1 {
        wait_for_cue(&env("GITMOOT_DEMO_CUE"));
    }
    if role == Role::Coder {
        super::coder::work(super::coder::is_review_round(&job.prompt))?;
    }
    write!(out, "{}", script(role, &job))?;
    Ok(())
}

/// The runner's first attempt fails only after the director's cue (`scene::cue_path`);
/// a lost director costs at most a minute, never a hung leg.
fn wait_for_cue(path: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !path.is_empty()
        && !std::path::Path::new(path).exists()
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::GitmootResult;

    fn result_of(text: &str) -> GitmootResult {
        let start = text.find("```json\n").unwrap() + 8;
        let end = text.rfind("\n```").unwrap();
        let v: Value = serde_json::from_str(&text[start..end]).unwrap();
        serde_json::from_value(v["gitmoot_result"].clone()).unwrap()
    }

    #[test]
    fn the_lead_fans_out_five_legs_with_deps_then_synthesises_the_answer() {
        let root = result_of(&script(
            Role::Lead,
            &JobView {
                kind: "root".into(),
                ..Default::default()
            },
        ));
        assert_eq!(root.delegations.len(), 5);
        let verify = root.delegations.iter().find(|d| d.id == "verify").unwrap();
        assert_eq!(verify.deps, ["api-review", "migration"]);
        let cont = JobView {
            kind: "continuation".into(),
            prompt: "answer: maintenance window".into(),
            ..Default::default()
        };
        assert!(
            result_of(&script(Role::Lead, &cont))
                .summary
                .contains("maintenance window")
        );
    }

    #[test]
    fn the_runner_fails_first_and_passes_on_retry() {
        let first = JobView {
            attempt: 1,
            ..Default::default()
        };
        assert_eq!(
            result_of(&script(Role::Runner, &first)).decision.as_str(),
            "failed"
        );
        let retry = JobView {
            attempt: 2,
            ..Default::default()
        };
        assert_eq!(
            result_of(&script(Role::Runner, &retry)).decision.as_str(),
            "approved"
        );
    }

    #[test]
    fn the_planner_asks_with_choices() {
        let r = result_of(&script(Role::Planner, &JobView::default()));
        assert_eq!(r.human_questions[0].choices.len(), 2);
    }
}
