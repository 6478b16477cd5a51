//! The result-contract text appended to every job prompt, and the pieces the repair
//! prompt reuses. Written for the agent: what to return and what each field means.
//!
//! Owns wording only; the rules themselves are enforced in `validate`.

// The texts are macros so `concat!` can join them at compile time without copies.
macro_rules! shape {
    () => {
        r#"{
  "gitmoot_result": {
    "decision": "approved | changes_requested | blocked | implemented | failed | skipped",
    "summary": "One or two sentences on the outcome.",
    "evidence": "executed | static_only",
    "checks_blocked": "toolchain | dependencies | sandbox | network | service | other",
    "severity": "P0 | P1 | P2 | P3",
    "findings": [],
    "changes_made": [],
    "tests_run": [],
    "needs": [],
    "delegations": [],
    "artifact_body": "",
    "human_questions": []
  }
}
"#
    };
}

macro_rules! field_rules {
    () => {
        r#"Rules:
- decision and summary are required. decision is one of:
  approved (a review found nothing blocking), changes_requested (a review found issues to
  fix first), blocked (you cannot go on without a human or an outside change), implemented
  (the requested change is done), failed (the attempt errored), skipped (there was nothing
  to do; a review with nothing to flag is approved, not skipped).
- No other top-level keys are accepted (next_agents no longer exists: use delegations).
- evidence: "executed" only if you ran the commands you cite and read their real output;
  otherwise "static_only" (the default when omitted). Never infer a pass or a failure from
  being unable to run something.
- checks_blocked (optional): the main reason some checks could not run.
- severity: required with changes_requested, set to your most severe finding (P0 highest);
  optional on approved reviews that report non-blocking findings; omit it otherwise.
- findings: strings or objects (title, severity, file, detail ... as you see fit).
- changes_made, tests_run, needs: strings (objects are accepted too). List only files you
  really changed (repo-relative paths) and commands you really ran. Use needs for missing
  credentials, unclear scope, unavailable tools or decisions only a human can make.
- delegations: follow-up jobs for other agents. Each entry:
    id (required, unique, no surrounding spaces), action (required: "ask" or "review";
    implementation legs are refused), prompt (required),
    agent (a registered agent name, not a runtime such as codex/claude/kimi) OR
    ephemeral {runtime: codex|claude|kimi, model, effort, template, role, capabilities,
    autonomy_policy (default read-only; the implement capability needs workspace-write or
    danger-full-access)} -- exactly one of the two;
    optional: deps (ids of sibling delegations that must succeed first; no self
    references, no cycles), failure_policy (block_parent | continue | escalate |
    escalate_human), synthesis_rule (summary | vote | quorum | verify), quorum (integer K,
    required for quorum, 1..number of delegations), timeout (positive duration such as
    "10m"), retry (integer >= 0), worktree, artifacts (names; needs a top-level
    artifact_body), fingerprint (dedupe key), model, effort, phase.
  A skipped result cannot carry delegations.
- artifact_body: the payload children can read; required when any delegation lists
  artifacts.
- human_questions: ask a human instead of guessing, only when you truly cannot proceed:
  [{"id": "unique-id", "prompt": "the question", "choices": ["optional", "options"]}].
"#
    };
}

/// The envelope an agent returns, with every top-level field.
pub(crate) const SHAPE: &str = shape!();

/// What each field accepts; shared by the job prompt and the repair prompt.
pub(crate) const FIELD_RULES: &str = field_rules!();

/// The contract text appended to every job prompt.
pub fn instructions() -> &'static str {
    concat!(
        "When you finish, end your reply with exactly one JSON object of this shape ",
        "(prose before it is fine; do not emit a second gitmoot_result):\n\n",
        shape!(),
        "\n",
        field_rules!(),
        "Redact secrets everywhere. Keep the result short, truthful and tied to work you did.\n"
    )
}
