//! Result checks (the evidence gate), the repair prompt and the prompt instructions, on
//! results parsed from realistic outputs.

use gitmoot::contract::{
    CheckFailure, ContractErrors, instructions, parse, repair_failed_reason, repair_prompt,
    result_checks, review_checks,
};
use gitmoot::domain::Action;

fn parsed(body: &str) -> gitmoot::contract::GitmootResult {
    let raw = format!("Review done.\n```json\n{{\"gitmoot_result\": {{{body}}}}}\n```");
    parse(&raw).unwrap_or_else(|e| panic!("{body}: {e}"))
}

fn ids(failures: &[CheckFailure]) -> Vec<&'static str> {
    failures.iter().map(|f| f.id).collect()
}

#[test]
fn static_only_reviews_pass_every_check() {
    let honest = parsed(
        r#""decision": "approved", "summary": "Read src/store; could not run cargo (no toolchain).",
           "checks_blocked": "toolchain""#,
    );
    assert!(review_checks(&honest).is_empty());
    assert!(result_checks(Action::Review, &honest).is_empty());
}

#[test]
fn executed_claim_needs_something_that_was_run() {
    let bare = parsed(
        r#""decision": "approved", "summary": "Everything looks fine.", "evidence": "executed""#,
    );
    assert_eq!(
        ids(&review_checks(&bare)),
        ["review-executed-claim-is-substantiated"]
    );

    let empty_entries = parsed(
        r#""decision": "approved", "summary": "Fine.", "evidence": "executed",
           "tests_run": [{}, {"name": "", "command": ""}, null, "  "]"#,
    );
    assert_eq!(
        ids(&review_checks(&empty_entries)),
        ["review-executed-claim-is-substantiated"]
    );

    let ran = parsed(
        r#""decision": "approved", "summary": "Fine.", "evidence": "executed",
           "tests_run": [{"name": "unit", "command": "cargo test", "result": "pass"}]"#,
    );
    assert!(review_checks(&ran).is_empty());

    let nested = parsed(
        r#""decision": "approved", "summary": "Fine.", "evidence": "executed",
           "tests_run": [{"name": "", "detail": {"exit": 0}}]"#,
    );
    assert!(
        review_checks(&nested).is_empty(),
        "a populated nested value counts"
    );
}

#[test]
fn changes_requested_verdict_must_name_a_finding() {
    let none = parsed(
        r#""decision": "changes_requested", "summary": "Fix it.", "severity": "P1", "findings": [{}]"#,
    );
    assert_eq!(ids(&review_checks(&none)), ["review-verdict-has-evidence"]);
    let named = parsed(
        r#""decision": "changes_requested", "summary": "Fix it.", "severity": "P1",
           "findings": [{"title": "unchecked unwrap", "file": "src/a.rs"}]"#,
    );
    assert!(review_checks(&named).is_empty());
}

#[test]
fn blocked_and_implement_checks_ignore_content_free_entries() {
    let blocked = parsed(r#""decision": "blocked", "summary": "Stuck.", "needs": [{}, ""]"#);
    assert_eq!(
        ids(&result_checks(Action::Ask, &blocked)),
        ["blocked-blockers-actionable"]
    );
    let unblockable =
        parsed(r#""decision": "blocked", "summary": "Stuck.", "needs": [{"name": "GH_TOKEN"}]"#);
    assert!(result_checks(Action::Ask, &unblockable).is_empty());

    let hollow = parsed(
        r#""decision": "implemented", "summary": "Done.", "changes_made": [{"name": ""}], "tests_run": []"#,
    );
    let failures = result_checks(Action::Implement, &hollow);
    assert_eq!(
        ids(&failures),
        ["implement-changes-listed", "implement-tests-listed"]
    );
    assert_eq!(
        CheckFailure::summarize(&failures),
        "2 result check(s) failed: implement-changes-listed (implemented but changes_made lists no change); \
         implement-tests-listed (implemented but tests_run lists no test)"
    );
    // The same result from an ask job is not an implementation claim.
    assert!(result_checks(Action::Ask, &hollow).is_empty());
}

#[test]
fn repair_prompt_lists_every_error_shape_and_previous_output() {
    let previous = "Here: {\"gitmoot_result\": {\"decision\": \"done\"}}";
    let errors = parse(previous).unwrap_err();
    let prompt = repair_prompt(&errors, previous);
    assert!(
        prompt.starts_with(
            "Your previous response did not contain a valid gitmoot_result JSON object."
        )
    );
    for line in errors.lines() {
        assert!(
            prompt.contains(&format!("\n- {line}\n")),
            "missing bullet {line}"
        );
    }
    assert!(prompt.contains("\"gitmoot_result\": {"), "expected shape");
    assert!(prompt.contains("delegations"), "delegation help");
    assert!(prompt.trim_end().ends_with(previous));
    assert!(!prompt.contains("[truncated]"));
}

#[test]
fn repair_prompt_truncates_previous_output_on_a_char_boundary() {
    let previous = "ü".repeat(10_000); // 20,000 bytes
    let errors = ContractErrors(vec!["gitmoot_result summary is required".into()]);
    let prompt = repair_prompt(&errors, &previous);
    let quoted = prompt
        .split("Previous raw output:\n")
        .nth(1)
        .expect("previous output section");
    let body = quoted
        .strip_suffix("\n[truncated]\n")
        .expect("truncation marker");
    assert_eq!(body.len(), 12_000);
    assert!(body.chars().all(|c| c == 'ü'));
    assert_eq!(
        repair_failed_reason(&errors),
        "repair output malformed: gitmoot_result summary is required"
    );
}

#[test]
fn instructions_name_every_field_and_decision() {
    let text = instructions();
    for word in [
        "decision",
        "summary",
        "findings",
        "changes_made",
        "tests_run",
        "needs",
        "delegations",
        "artifact_body",
        "human_questions",
        "evidence",
        "checks_blocked",
        "severity",
        "approved",
        "changes_requested",
        "blocked",
        "implemented",
        "failed",
        "skipped",
        "executed",
        "static_only",
        "failure_policy",
        "synthesis_rule",
        "quorum",
        "timeout",
        "retry",
        "ephemeral",
        "deps",
        "artifacts",
        "fingerprint",
        "phase",
        "worktree",
    ] {
        assert!(text.contains(word), "instructions do not mention {word}");
    }
}
