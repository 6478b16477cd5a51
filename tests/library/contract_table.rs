//! Table-driven tests of the result contract: every locate, decode and validation rule and
//! every error text, on outputs shaped the way agents really write them (prose around the
//! JSON, fenced blocks, several candidates, decoys).

use gitmoot::contract::{
    ChecksBlocked, Decision, Evidence, FailurePolicy, GitmootResult, MISSING, Severity,
    SynthesisRule, parse,
};
use gitmoot::domain::{Action, AutonomyPolicy, Capability, JobState, RuntimeKind};

/// What a case must produce.
enum Expect {
    /// Accepted; the closure asserts on the normalised result.
    Ok(fn(&GitmootResult)),
    /// Accepted with exactly this summary.
    Summary(&'static str),
    /// Accepted, and the decision settles the job in this state, approving or not.
    Settles(JobState, bool),
    /// Rejected with exactly these error lines, in this order.
    Errors(&'static [&'static str]),
}

struct Case {
    name: &'static str,
    raw: String,
    expect: Expect,
}

/// A `gitmoot_result` envelope around a body of fields.
fn env(body: &str) -> String {
    format!(r#"{{"gitmoot_result": {{{body}}}}}"#)
}

/// How agents usually end: some prose, then a fenced JSON block.
fn fenced(body: &str) -> String {
    format!(
        "I looked at the diff and ran the suite.\n\n```json\n{}\n```\n\nLet me know if more is needed.",
        env(body)
    )
}

/// An approved body plus extra fields.
fn ok_with(extra: &str) -> String {
    fenced(&format!(
        r#""decision": "approved", "summary": "Looks good.", {extra}"#
    ))
}

/// An approved coordinator body with the given delegations array contents.
fn dels(items: &str) -> String {
    ok_with(&format!(r#""delegations": [{items}]"#))
}

const D_A: &str =
    r#"{"id": "a", "agent": "reviewer", "action": "review", "prompt": "Review the plan."}"#;

fn cases() -> Vec<Case> {
    use Expect::{Errors, Ok, Settles, Summary};
    let c = |name, raw: String, expect| Case { name, raw, expect };
    vec![
        // ---- locating the object ----
        c(
            "whole output is the object",
            env(r#""decision":"approved","summary":"ok""#),
            Ok(|r| {
                assert_eq!(r.decision, Decision::Approved);
                assert_eq!(r.summary, "ok");
            }),
        ),
        c(
            "whole output with surrounding whitespace",
            format!(
                "\n\n  {}  \n",
                env(r#""decision":"approved","summary":"ok""#)
            ),
            Summary("ok"),
        ),
        c(
            "prose before and after",
            format!(
                "Done. {} Thanks!",
                env(r#""decision":"implemented","summary":"Added it.""#)
            ),
            Ok(|r| assert_eq!(r.decision, Decision::Implemented)),
        ),
        c(
            "fenced json block",
            fenced(r#""decision":"approved","summary":"Fenced.""#),
            Summary("Fenced."),
        ),
        c(
            "fenced block without language",
            format!(
                "```\n{}\n```",
                env(r#""decision":"approved","summary":"Plain fence.""#)
            ),
            Summary("Plain fence."),
        ),
        c(
            "first of two valid candidates wins",
            format!(
                "{}\nand later\n{}",
                env(r#""decision":"approved","summary":"first""#),
                env(r#""decision":"failed","summary":"second""#)
            ),
            Summary("first"),
        ),
        c(
            "invalid first candidate, valid second wins",
            format!(
                "draft: {}\nfinal: {}",
                env(r#""decision":"done","summary":"draft""#),
                env(r#""decision":"approved","summary":"final""#)
            ),
            Summary("final"),
        ),
        c(
            "decoy object naming the key in a value is skipped",
            format!(
                r#"Note {{"hint": "I will return \"gitmoot_result\" below", "n": 1}} then {}"#,
                env(r#""decision":"approved","summary":"real""#)
            ),
            Summary("real"),
        ),
        c(
            "decoy braces in prose mentioning the key",
            format!(
                r#"The {{"gitmoot_result" object}} goes last: {}"#,
                env(r#""decision":"approved","summary":"after decoy""#)
            ),
            Summary("after decoy"),
        ),
        c(
            "code braces before the result",
            format!(
                "fn main() {{ if x {{ y(); }} }}\n{}",
                env(r#""decision":"approved","summary":"code first""#)
            ),
            Summary("code first"),
        ),
        c(
            "braces inside strings are ignored",
            env(r#""decision":"approved","summary":"use {x} and } or {{ freely""#),
            Summary("use {x} and } or {{ freely"),
        ),
        c(
            "escaped quotes inside strings",
            env(r#""decision":"approved","summary":"said \"}\" and \\ ok""#),
            Ok(|r| assert_eq!(r.summary, r#"said "}" and \ ok"#)),
        ),
        c(
            "unbalanced quote in prose before the result",
            format!(
                "It's a \"quoted {{ thing. {}",
                env(r#""decision":"approved","summary":"after quote""#)
            ),
            Summary("after quote"),
        ),
        c(
            "result nested in another envelope",
            format!(
                r#"{{"type": "result", "payload": {}}}"#,
                env(r#""decision":"approved","summary":"nested""#)
            ),
            Summary("nested"),
        ),
        c(
            "whole output starts with brace but has trailing prose",
            format!(
                "{} -- end of answer",
                env(r#""decision":"approved","summary":"trailing""#)
            ),
            Summary("trailing"),
        ),
        c(
            "broken outer brace around a valid object",
            format!(
                "{{ broken {} ",
                env(r#""decision":"approved","summary":"inner""#)
            ),
            Summary("inner"),
        ),
        c(
            "extra envelope keys are ignored",
            r#"{"version": 2, "gitmoot_result": {"decision":"approved","summary":"ok"}}"#.into(),
            Summary("ok"),
        ),
        c(
            "no JSON at all",
            "I could not finish the task, sorry.".into(),
            Errors(&[MISSING]),
        ),
        c(
            "JSON without the key",
            r#"{"decision":"approved","summary":"flat"}"#.into(),
            Errors(&[MISSING]),
        ),
        c(
            "truncated result",
            r#"Result: {"gitmoot_result": {"decision":"approved","summary":"cut"#.into(),
            Errors(&[MISSING]),
        ),
        c("empty output", String::new(), Errors(&[MISSING])),
        c(
            "only candidate invalid reports its errors",
            fenced(r#""decision":"done","summary":"x""#),
            Errors(&[
                r#"unsupported gitmoot_result decision "done" (expected one of approved, changes_requested, blocked, implemented, failed, skipped)"#,
            ]),
        ),
        c(
            "two invalid candidates report the first",
            format!(
                "{}\n{}",
                env(r#""decision":"approved""#),
                env(r#""summary":"x""#)
            ),
            Errors(&["gitmoot_result summary is required"]),
        ),
        c(
            "gitmoot_result not an object",
            r#"{"gitmoot_result": "done"}"#.into(),
            Errors(&["gitmoot_result must be a JSON object (got string)"]),
        ),
        // ---- decision and summary ----
        c(
            "decision missing",
            fenced(r#""summary":"x""#),
            Errors(&["gitmoot_result decision is required"]),
        ),
        c(
            "decision null",
            fenced(r#""decision":null,"summary":"x""#),
            Errors(&["gitmoot_result decision is required"]),
        ),
        c(
            "decision wrong case",
            fenced(r#""decision":"Approved","summary":"x""#),
            Errors(&[
                r#"unsupported gitmoot_result decision "Approved" (expected one of approved, changes_requested, blocked, implemented, failed, skipped)"#,
            ]),
        ),
        c(
            "decision a number",
            fenced(r#""decision":1,"summary":"x""#),
            Errors(&["gitmoot_result decision must be a string (got number)"]),
        ),
        c(
            "summary missing",
            fenced(r#""decision":"approved""#),
            Errors(&["gitmoot_result summary is required"]),
        ),
        c(
            "summary blank",
            fenced(r#""decision":"approved","summary":"   ""#),
            Errors(&["gitmoot_result summary is required"]),
        ),
        c(
            "summary not a string",
            fenced(r#""decision":"approved","summary":["a"]"#),
            Errors(&["gitmoot_result summary must be a string (got array)"]),
        ),
        c(
            "decision approved settles succeeded",
            fenced(r#""decision":"approved","summary":"x""#),
            Settles(JobState::Succeeded, true),
        ),
        c(
            "decision implemented approves",
            fenced(r#""decision":"implemented","summary":"x""#),
            Settles(JobState::Succeeded, true),
        ),
        c(
            "decision blocked settles blocked",
            fenced(r#""decision":"blocked","summary":"x","needs":["a token"]"#),
            Settles(JobState::Blocked, false),
        ),
        c(
            "decision failed settles failed",
            fenced(r#""decision":"failed","summary":"x""#),
            Settles(JobState::Failed, false),
        ),
        c(
            "decision skipped settles succeeded, not approving",
            fenced(r#""decision":"skipped","summary":"nothing to do""#),
            Settles(JobState::Succeeded, false),
        ),
        c(
            "decision changes_requested does not approve",
            fenced(
                r#""decision":"changes_requested","summary":"fix","severity":"P2","findings":["x"]"#,
            ),
            Settles(JobState::Succeeded, false),
        ),
        // ---- top-level whitelist ----
        c(
            "next_agents rejected with the delegations hint",
            ok_with(r#""next_agents": ["reviewer"]"#),
            Errors(&[
                r#"unsupported gitmoot_result field "next_agents": delegations replaced it; list follow-up work as delegations[] entries with id, agent, action and prompt"#,
            ]),
        ),
        c(
            "unknown field named",
            ok_with(r#""confidence": 0.9"#),
            Errors(&[
                r#"unsupported gitmoot_result field "confidence" (allowed: decision, summary, findings, changes_made, tests_run, needs, delegations, artifact_body, human_questions, evidence, checks_blocked, severity, learnings)"#,
            ]),
        ),
        c(
            "every unknown field reported in order",
            ok_with(r#""zeta": 1, "alpha": 2"#),
            Errors(&[
                r#"unsupported gitmoot_result field "zeta" (allowed: decision, summary, findings, changes_made, tests_run, needs, delegations, artifact_body, human_questions, evidence, checks_blocked, severity, learnings)"#,
                r#"unsupported gitmoot_result field "alpha" (allowed: decision, summary, findings, changes_made, tests_run, needs, delegations, artifact_body, human_questions, evidence, checks_blocked, severity, learnings)"#,
            ]),
        ),
        // ---- evidence ----
        c(
            "evidence absent is static_only",
            ok_with(r#""tests_run": []"#),
            Ok(|r| assert_eq!(r.evidence, Evidence::StaticOnly)),
        ),
        c(
            "evidence null is static_only",
            ok_with(r#""evidence": null"#),
            Ok(|r| assert_eq!(r.evidence, Evidence::StaticOnly)),
        ),
        c(
            "evidence executed",
            ok_with(r#""evidence": "executed", "tests_run": ["cargo test"]"#),
            Ok(|r| assert_eq!(r.evidence, Evidence::Executed)),
        ),
        c(
            "evidence static_only explicit",
            ok_with(r#""evidence": "static_only""#),
            Ok(|r| assert_eq!(r.evidence, Evidence::StaticOnly)),
        ),
        c(
            "evidence unknown rejected",
            ok_with(r#""evidence": "ran""#),
            Errors(&[
                r#"unsupported gitmoot_result evidence "ran" (expected one of executed, static_only)"#,
            ]),
        ),
        c(
            "evidence boolean rejected",
            ok_with(r#""evidence": true"#),
            Errors(&["gitmoot_result evidence must be a string (got boolean)"]),
        ),
        // ---- checks_blocked ----
        c(
            "checks_blocked toolchain",
            ok_with(r#""checks_blocked": "toolchain""#),
            Ok(|r| assert_eq!(r.checks_blocked, Some(ChecksBlocked::Toolchain))),
        ),
        c(
            "checks_blocked dependencies",
            ok_with(r#""checks_blocked": "dependencies""#),
            Ok(|r| assert_eq!(r.checks_blocked, Some(ChecksBlocked::Dependencies))),
        ),
        c(
            "checks_blocked sandbox",
            ok_with(r#""checks_blocked": "sandbox""#),
            Ok(|r| assert_eq!(r.checks_blocked, Some(ChecksBlocked::Sandbox))),
        ),
        c(
            "checks_blocked network with executed",
            ok_with(
                r#""checks_blocked": "network", "evidence": "executed", "tests_run": ["unit only"]"#,
            ),
            Ok(|r| {
                assert_eq!(
                    (r.checks_blocked, r.evidence),
                    (Some(ChecksBlocked::Network), Evidence::Executed)
                )
            }),
        ),
        c(
            "checks_blocked service",
            ok_with(r#""checks_blocked": "service""#),
            Ok(|r| assert_eq!(r.checks_blocked, Some(ChecksBlocked::Service))),
        ),
        c(
            "checks_blocked other",
            ok_with(r#""checks_blocked": "other""#),
            Ok(|r| assert_eq!(r.checks_blocked, Some(ChecksBlocked::Other))),
        ),
        c(
            "checks_blocked absent",
            ok_with(r#""findings": []"#),
            Ok(|r| assert_eq!(r.checks_blocked, None)),
        ),
        c(
            "checks_blocked misspelt rejected",
            ok_with(r#""checks_blocked": "netwrok""#),
            Errors(&[
                r#"unsupported gitmoot_result checks_blocked "netwrok" (expected one of toolchain, dependencies, sandbox, network, service, other)"#,
            ]),
        ),
        // ---- severity ----
        c(
            "changes_requested with P1",
            fenced(
                r#""decision":"changes_requested","summary":"fix","severity":"P1","findings":[{"title":"race","severity":"high"}]"#,
            ),
            Ok(|r| assert_eq!(r.severity, Some(Severity::P1))),
        ),
        c(
            "changes_requested with P0",
            fenced(r#""decision":"changes_requested","summary":"fix","severity":"P0""#),
            Ok(|r| assert_eq!(r.severity, Some(Severity::P0))),
        ),
        c(
            "changes_requested with P3",
            fenced(r#""decision":"changes_requested","summary":"fix","severity":"P3""#),
            Ok(|r| assert_eq!(r.severity, Some(Severity::P3))),
        ),
        c(
            "changes_requested without severity",
            fenced(r#""decision":"changes_requested","summary":"fix","findings":["x"]"#),
            Errors(&[
                "gitmoot_result decision changes_requested requires severity P0, P1, P2 or P3 (the highest-severity finding)",
            ]),
        ),
        c(
            "changes_requested with unknown severity names only that",
            fenced(r#""decision":"changes_requested","summary":"fix","severity":"high""#),
            Errors(&[
                r#"unsupported gitmoot_result severity "high" (expected one of P0, P1, P2, P3)"#,
            ]),
        ),
        c(
            "severity lower case rejected",
            ok_with(r#""severity": "p2""#),
            Errors(&[
                r#"unsupported gitmoot_result severity "p2" (expected one of P0, P1, P2, P3)"#,
            ]),
        ),
        c(
            "approved may carry P2",
            ok_with(r#""severity": "P2", "findings": ["nit"]"#),
            Ok(|r| assert_eq!(r.severity, Some(Severity::P2))),
        ),
        // ---- findings ----
        c(
            "findings strings and objects kept",
            ok_with(r#""findings": ["plain", {"title": "t", "url": "https://x"}]"#),
            Ok(|r| {
                assert_eq!(r.findings.len(), 2);
                assert_eq!(r.findings[1]["title"], "t");
            }),
        ),
        c(
            "findings null is empty",
            ok_with(r#""findings": null"#),
            Ok(|r| assert!(r.findings.is_empty())),
        ),
        c(
            "findings not an array",
            ok_with(r#""findings": "none""#),
            Errors(&["gitmoot_result findings must be an array (got string)"]),
        ),
        // ---- narrative string lists ----
        c(
            "tests_run object canonicalised, metacharacters verbatim",
            ok_with(
                r#""tests_run": [{"result": "pass", "name": "diff scope", "command": "git show --stat | head -n 5 && echo $HOME"}]"#,
            ),
            Ok(|r| {
                assert_eq!(
                    r.tests_run,
                    [
                        r#"{"command":"git show --stat | head -n 5 && echo $HOME","name":"diff scope","result":"pass"}"#
                    ]
                )
            }),
        ),
        c(
            "nested order and nested duplicates kept verbatim",
            ok_with(r#""changes_made": [{"z": {"b": 1, "a": 2, "b": 3}, "a": "src/x.rs"}]"#),
            Ok(|r| {
                assert_eq!(
                    r.changes_made,
                    [r#"{"a":"src/x.rs","z":{"b":1,"a":2,"b":3}}"#]
                )
            }),
        ),
        c(
            "nested whitespace compacted, string bytes kept",
            ok_with(r#""tests_run": [{"cmd": "a   b", "args": [1,  2, { "k" : "v" }]}]"#),
            Ok(|r| assert_eq!(r.tests_run, [r#"{"args":[1,2,{"k":"v"}],"cmd":"a   b"}"#])),
        ),
        c(
            "top-level duplicate key named",
            ok_with(r#""tests_run": [{"name": "a", "name": "b"}]"#),
            Errors(&[r#"gitmoot_result tests_run[0] has duplicate key "name""#]),
        ),
        c(
            "null element becomes empty entry",
            ok_with(r#""needs": ["token", null]"#),
            Ok(|r| assert_eq!(r.needs, ["token", ""])),
        ),
        c(
            "blank strings kept verbatim",
            ok_with(r#""changes_made": ["  ", "src/lib.rs"]"#),
            Ok(|r| assert_eq!(r.changes_made, ["  ", "src/lib.rs"])),
        ),
        c(
            "content-free objects kept",
            ok_with(r#""needs": [{}, {"name": ""}]"#),
            Ok(|r| assert_eq!(r.needs, ["{}", r#"{"name":""}"#])),
        ),
        c(
            "number element named",
            ok_with(r#""changes_made": ["src/a.rs", 42]"#),
            Errors(&["gitmoot_result changes_made[1] must be a string or an object (got number)"]),
        ),
        c(
            "boolean element named",
            ok_with(r#""needs": [true]"#),
            Errors(&["gitmoot_result needs[0] must be a string or an object (got boolean)"]),
        ),
        c(
            "nested array element named",
            ok_with(r#""tests_run": [["cargo", "test"]]"#),
            Errors(&["gitmoot_result tests_run[0] must be a string or an object (got array)"]),
        ),
        c(
            "empty array element rejected",
            ok_with(r#""tests_run": [[]]"#),
            Errors(&["gitmoot_result tests_run[0] must be a string or an object (got array)"]),
        ),
        c(
            "bare string instead of a list",
            ok_with(r#""tests_run": "cargo test""#),
            Errors(&[
                "gitmoot_result tests_run must be an array of strings or objects (got string)",
            ]),
        ),
        c(
            "list null is empty",
            ok_with(r#""changes_made": null"#),
            Ok(|r| assert!(r.changes_made.is_empty())),
        ),
        c(
            "every bad list element reported together",
            ok_with(r#""changes_made": [1], "tests_run": [false, {"a":1,"a":2}], "needs": 3"#),
            Errors(&[
                "gitmoot_result changes_made[0] must be a string or an object (got number)",
                "gitmoot_result tests_run[0] must be a string or an object (got boolean)",
                r#"gitmoot_result tests_run[1] has duplicate key "a""#,
                "gitmoot_result needs must be an array of strings or objects (got number)",
            ]),
        ),
        // ---- artifacts / artifact_body ----
        c(
            "artifacts without artifact_body",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "artifacts": ["plan.md"]}"#,
            ),
            Errors(&["artifact_body is required when delegations request artifacts"]),
        ),
        c(
            "artifacts with blank artifact_body",
            ok_with(
                r#""artifact_body": "  ", "delegations": [{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "artifacts": ["plan.md"]}]"#,
            ),
            Errors(&["artifact_body is required when delegations request artifacts"]),
        ),
        c(
            "artifacts with artifact_body",
            ok_with(
                r#""artifact_body": "The plan.", "delegations": [{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "artifacts": ["plan.md"]}]"#,
            ),
            Ok(|r| {
                assert_eq!(r.artifact_body.as_deref(), Some("The plan."));
                assert_eq!(r.delegations[0].artifacts, ["plan.md"]);
            }),
        ),
        c(
            "artifact_body not a string",
            ok_with(r#""artifact_body": {"x": 1}"#),
            Errors(&["gitmoot_result artifact_body must be a string (got object)"]),
        ),
        c(
            "artifacts object element rejected",
            ok_with(
                r#""artifact_body": "b", "delegations": [{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "artifacts": [{"path": "x"}]}]"#,
            ),
            Errors(&[r#"delegations[0] (id "a"): artifacts[0] must be a string (got object)"#]),
        ),
        // ---- skipped ----
        c(
            "skipped with delegations",
            fenced(&format!(
                r#""decision":"skipped","summary":"n/a","delegations":[{D_A}]"#
            )),
            Errors(&["gitmoot_result decision skipped cannot be used with delegations"]),
        ),
        c(
            "skipped with empty delegations",
            fenced(r#""decision":"skipped","summary":"n/a","delegations":[]"#),
            Ok(|r| assert_eq!(r.decision, Decision::Skipped)),
        ),
        // ---- human_questions ----
        c(
            "question with choices",
            ok_with(
                r#""human_questions": [{"id": "db", "prompt": "Which database?", "choices": ["sqlite", "postgres"]}]"#,
            ),
            Ok(|r| {
                assert_eq!(r.human_questions[0].id, "db");
                assert_eq!(r.human_questions[0].choices, ["sqlite", "postgres"]);
            }),
        ),
        c(
            "question id required",
            ok_with(r#""human_questions": [{"prompt": "Which?"}]"#),
            Errors(&["human_questions[0] id is required"]),
        ),
        c(
            "question prompt required",
            ok_with(r#""human_questions": [{"id": "q1", "prompt": " "}]"#),
            Errors(&[r#"human_questions[0] (id "q1") prompt is required"#]),
        ),
        c(
            "question ids unique",
            ok_with(
                r#""human_questions": [{"id": "q1", "prompt": "a"}, {"id": "q1", "prompt": "b"}]"#,
            ),
            Errors(&[r#"human_questions[1] id "q1" is not unique"#]),
        ),
        c(
            "question choices strings only",
            ok_with(
                r#""human_questions": [{"id": "q1", "prompt": "a", "choices": ["x", {"label": "y"}]}]"#,
            ),
            Errors(&[r#"human_questions[0] (id "q1"): choices[1] must be a string (got object)"#]),
        ),
        c(
            "question not an object",
            ok_with(r#""human_questions": ["Which db?"]"#),
            Errors(&["human_questions[0] must be an object with id and prompt (got string)"]),
        ),
        c(
            "questions not an array",
            ok_with(r#""human_questions": {"id": "q"}"#),
            Errors(&["gitmoot_result human_questions must be an array (got object)"]),
        ),
        c(
            "every question error reported",
            ok_with(
                r#""human_questions": [{"prompt": "a"}, {"id": "q", "prompt": ""}, {"id": "q", "prompt": "c"}]"#,
            ),
            Errors(&[
                "human_questions[0] id is required",
                r#"human_questions[1] (id "q") prompt is required"#,
                r#"human_questions[2] id "q" is not unique"#,
            ]),
        ),
        // ---- delegations: required fields ----
        c(
            "full delegation with every field",
            dels(
                r#"{"id": "plan", "agent": "planner", "action": "ask", "prompt": "  Plan it.  "},
            {"id": "rev", "agent": "reviewer", "action": "review", "prompt": "Review", "deps": ["plan"], "failure_policy": "escalate_human",
             "synthesis_rule": "quorum", "quorum": 2, "timeout": "10m", "retry": 2, "worktree": "wt-a", "fingerprint": "fp1",
             "model": "opus", "effort": "high", "phase": "review", "owner_note": "ignored"}"#,
            ),
            Ok(|r| {
                let (plan, rev) = (&r.delegations[0], &r.delegations[1]);
                assert_eq!(plan.prompt, "Plan it.");
                assert_eq!(plan.failure_policy, FailurePolicy::BlockParent);
                assert_eq!(plan.synthesis_rule, None);
                assert_eq!(rev.agent.as_deref(), Some("reviewer"));
                assert_eq!(rev.action, Action::Review);
                assert_eq!(rev.deps, ["plan"]);
                assert_eq!(rev.failure_policy, FailurePolicy::EscalateHuman);
                assert_eq!(
                    (rev.synthesis_rule, rev.quorum),
                    (Some(SynthesisRule::Quorum), Some(2))
                );
                assert_eq!((rev.timeout_ms, rev.retry), (Some(600_000), 2));
                assert_eq!(
                    (rev.worktree.as_deref(), rev.fingerprint.as_deref()),
                    (Some("wt-a"), Some("fp1"))
                );
                assert_eq!(
                    (
                        rev.model.as_deref(),
                        rev.effort.as_deref(),
                        rev.phase.as_deref()
                    ),
                    (Some("opus"), Some("high"), Some("review"))
                );
            }),
        ),
        c(
            "delegation id missing",
            dels(r#"{"agent": "r", "action": "ask", "prompt": "p"}"#),
            Errors(&[r#"delegations[0] (id "<missing>"): id is required"#]),
        ),
        c(
            "delegation id blank",
            dels(r#"{"id": "  ", "agent": "r", "action": "ask", "prompt": "p"}"#),
            Errors(&[r#"delegations[0] (id "<missing>"): id is required"#]),
        ),
        c(
            "delegation id with whitespace",
            dels(r#"{"id": " a", "agent": "r", "action": "ask", "prompt": "p"}"#),
            Errors(&[
                r#"delegations[0] (id " a"): id must not have leading or trailing whitespace"#,
            ]),
        ),
        c(
            "delegation action missing",
            dels(r#"{"id": "a", "agent": "r", "prompt": "p"}"#),
            Errors(&[r#"delegations[0] (id "a"): action is required"#]),
        ),
        c(
            "delegation action implement refused",
            dels(r#"{"id": "a", "agent": "r", "action": "implement", "prompt": "p"}"#),
            Errors(&[
                r#"delegations[0] (id "a"): action "implement" is refused: delegation legs may only ask or review"#,
            ]),
        ),
        c(
            "delegation action unknown",
            dels(r#"{"id": "a", "agent": "r", "action": "deploy", "prompt": "p"}"#),
            Errors(&[r#"delegations[0] (id "a"): action "deploy" must be one of ask, review"#]),
        ),
        c(
            "delegation action with whitespace",
            dels(r#"{"id": "a", "agent": "r", "action": "ask ", "prompt": "p"}"#),
            Errors(&[
                r#"delegations[0] (id "a"): action must not have leading or trailing whitespace"#,
            ]),
        ),
        c(
            "delegation prompt missing",
            dels(r#"{"id": "a", "agent": "r", "action": "ask"}"#),
            Errors(&[r#"delegations[0] (id "a"): prompt is required"#]),
        ),
        c(
            "delegation prompt blank",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "\n"}"#),
            Errors(&[r#"delegations[0] (id "a"): prompt is required"#]),
        ),
        c(
            "required-field errors across the batch together",
            dels(
                r#"{"agent": "r"}, {"id": "b", "agent": "r", "action": "ask"}, {"id": "c", "agent": "r", "prompt": "p"}"#,
            ),
            Errors(&[
                r#"delegations[0] (id "<missing>"): id is required"#,
                r#"delegations[0] (id "<missing>"): action is required"#,
                r#"delegations[0] (id "<missing>"): prompt is required"#,
                r#"delegations[1] (id "b"): prompt is required"#,
                r#"delegations[2] (id "c"): action is required"#,
            ]),
        ),
        c(
            "delegations not an array",
            ok_with(r#""delegations": {"id": "a"}"#),
            Errors(&["gitmoot_result delegations must be an array (got object)"]),
        ),
        c(
            "delegation not an object",
            dels(r#""review it""#),
            Errors(&["delegations[0] must be an object (got string)"]),
        ),
        // ---- delegations: target ----
        c(
            "agent and ephemeral both set",
            dels(
                r#"{"id": "a", "agent": "r", "ephemeral": {"runtime": "codex"}, "action": "ask", "prompt": "p"}"#,
            ),
            Errors(&[r#"delegation "a" sets both agent and ephemeral; exactly one is allowed"#]),
        ),
        c(
            "neither agent nor ephemeral",
            dels(r#"{"id": "a", "action": "ask", "prompt": "p"}"#),
            Errors(&[r#"delegation "a" must set exactly one of agent or ephemeral"#]),
        ),
        c(
            "misnamed target key is ignored, then missing",
            dels(r#"{"id": "a", "to": "reviewer", "action": "ask", "prompt": "p"}"#),
            Errors(&[r#"delegation "a" must set exactly one of agent or ephemeral"#]),
        ),
        c(
            "blank agent counts as missing",
            dels(r#"{"id": "a", "agent": " ", "action": "ask", "prompt": "p"}"#),
            Errors(&[r#"delegation "a" must set exactly one of agent or ephemeral"#]),
        ),
        c(
            "ephemeral spec accepted with defaults",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "kimi", "model": "k2", "role": "verifier"}, "action": "review", "prompt": "p"}"#,
            ),
            Ok(|r| {
                let spec = r.delegations[0].ephemeral.as_ref().expect("ephemeral");
                assert_eq!(spec.runtime, RuntimeKind::Kimi);
                assert_eq!(spec.autonomy_policy, AutonomyPolicy::ReadOnly);
                assert_eq!(
                    (spec.model.as_deref(), spec.role.as_deref()),
                    (Some("k2"), Some("verifier"))
                );
            }),
        ),
        c(
            "ephemeral runtime required",
            dels(r#"{"id": "a", "ephemeral": {"model": "m"}, "action": "ask", "prompt": "p"}"#),
            Errors(&[r#"delegation "a" ephemeral runtime is required"#]),
        ),
        c(
            "ephemeral runtime shell refused",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "shell"}, "action": "ask", "prompt": "p"}"#,
            ),
            Errors(&[
                r#"delegation "a" ephemeral runtime "shell" is invalid; expected one of codex/claude/kimi"#,
            ]),
        ),
        c(
            "ephemeral runtime unknown",
            dels(r#"{"id": "a", "ephemeral": {"runtime": "gpt"}, "action": "ask", "prompt": "p"}"#),
            Errors(&[
                r#"delegation "a" ephemeral runtime "gpt" is invalid; expected one of codex/claude/kimi"#,
            ]),
        ),
        c(
            "ephemeral implement capability with default policy",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "codex", "capabilities": ["review", "implement"]}, "action": "review", "prompt": "p"}"#,
            ),
            Errors(&[
                r#"delegation "a" ephemeral the implement capability needs a write policy, but the policy is read-only; set --policy workspace-write (edits files) or --policy danger-full-access (edits and runs anything)"#,
            ]),
        ),
        c(
            "ephemeral implement capability with auto policy",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "codex", "capabilities": ["implement"], "autonomy_policy": "auto"}, "action": "review", "prompt": "p"}"#,
            ),
            Errors(&[
                r#"delegation "a" ephemeral the implement capability needs a write policy, but the policy is auto; set --policy workspace-write (edits files) or --policy danger-full-access (edits and runs anything)"#,
            ]),
        ),
        c(
            "ephemeral implement capability with write policy",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "claude", "capabilities": ["implement"], "autonomy_policy": "workspace-write"}, "action": "review", "prompt": "p"}"#,
            ),
            Ok(|r| {
                let spec = r.delegations[0].ephemeral.as_ref().expect("ephemeral");
                assert_eq!(spec.capabilities, [Capability::Implement]);
                assert_eq!(spec.autonomy_policy, AutonomyPolicy::WorkspaceWrite);
            }),
        ),
        c(
            "ephemeral autonomy_policy unknown",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "codex", "autonomy_policy": "yolo"}, "action": "ask", "prompt": "p"}"#,
            ),
            Errors(&[r#"delegation "a" ephemeral autonomy_policy "yolo" is invalid"#]),
        ),
        c(
            "ephemeral capability unknown",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "codex", "capabilities": ["deploy"]}, "action": "ask", "prompt": "p"}"#,
            ),
            Errors(&[
                r#"delegation "a" ephemeral capability "deploy" is invalid; expected one of ask, review, implement"#,
            ]),
        ),
        c(
            "ephemeral capabilities strings only",
            dels(
                r#"{"id": "a", "ephemeral": {"runtime": "codex", "capabilities": [{"name": "ask"}]}, "action": "ask", "prompt": "p"}"#,
            ),
            Errors(&[
                r#"delegations[0] (id "a"): ephemeral.capabilities[0] must be a string (got object)"#,
            ]),
        ),
        c(
            "ephemeral not an object",
            dels(r#"{"id": "a", "ephemeral": "codex", "action": "ask", "prompt": "p"}"#),
            Errors(&[
                r#"delegations[0] (id "a"): ephemeral must be an object with a runtime (got string)"#,
            ]),
        ),
        // ---- delegations: graph ----
        c(
            "unknown dep",
            dels(&format!(
                r#"{D_A}, {{"id": "b", "agent": "r", "action": "ask", "prompt": "p", "deps": ["a", "zz"]}}"#
            )),
            Errors(&[r#"delegation "b" references unknown dep "zz""#]),
        ),
        c(
            "self dep",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "deps": ["a"]}"#),
            Errors(&[r#"delegation "a" depends on itself"#]),
        ),
        c(
            "two-node cycle",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "deps": ["b"]}, {"id": "b", "agent": "r", "action": "ask", "prompt": "p", "deps": ["a"]}"#,
            ),
            Errors(&["delegations form a dependency cycle: a -> b -> a"]),
        ),
        c(
            "three-node cycle",
            dels(
                r#"{"id": "x", "agent": "r", "action": "ask", "prompt": "p"}, {"id": "a", "agent": "r", "action": "ask", "prompt": "p", "deps": ["b", "x"]}, {"id": "b", "agent": "r", "action": "ask", "prompt": "p", "deps": ["c"]}, {"id": "c", "agent": "r", "action": "ask", "prompt": "p", "deps": ["a"]}"#,
            ),
            Errors(&["delegations form a dependency cycle: a -> b -> c -> a"]),
        ),
        c(
            "diamond is a DAG",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p"}, {"id": "b", "agent": "r", "action": "ask", "prompt": "p", "deps": ["a"]}, {"id": "c", "agent": "r", "action": "ask", "prompt": "p", "deps": ["a"]}, {"id": "d", "agent": "r", "action": "review", "prompt": "p", "deps": ["b", "c"]}"#,
            ),
            Ok(|r| assert_eq!(r.delegations[3].deps, ["b", "c"])),
        ),
        c(
            "deps trimmed, blanks ignored",
            dels(&format!(
                r#"{D_A}, {{"id": "b", "agent": "r", "action": "ask", "prompt": "p", "deps": [" a ", "", null]}}"#
            )),
            Errors(&[r#"delegations[1] (id "b"): deps[2] must be a string (got null)"#]),
        ),
        c(
            "deps trimmed and blank entries dropped",
            dels(&format!(
                r#"{D_A}, {{"id": "b", "agent": "r", "action": "ask", "prompt": "p", "deps": [" a ", ""]}}"#
            )),
            Ok(|r| assert_eq!(r.delegations[1].deps, ["a"])),
        ),
        c(
            "deps object element rejected",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "deps": [{"id": "b"}]}"#,
            ),
            Errors(&[r#"delegations[0] (id "a"): deps[0] must be a string (got object)"#]),
        ),
        c(
            "deps not an array",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "deps": "b"}"#),
            Errors(&[r#"delegations[0] (id "a"): deps must be an array of strings (got string)"#]),
        ),
        c(
            "duplicate delegation ids",
            dels(&format!("{D_A}, {D_A}")),
            Errors(&[r#"delegation id "a" is not unique"#]),
        ),
        // ---- delegations: lifecycle fields ----
        c(
            "failure_policy values, case-insensitive",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "failure_policy": "continue"}, {"id": "b", "agent": "r", "action": "ask", "prompt": "p", "failure_policy": "ESCALATE"}, {"id": "c", "agent": "r", "action": "ask", "prompt": "p", "failure_policy": "Block_Parent"}"#,
            ),
            Ok(|r| {
                let got: Vec<FailurePolicy> =
                    r.delegations.iter().map(|d| d.failure_policy).collect();
                assert_eq!(
                    got,
                    [
                        FailurePolicy::Continue,
                        FailurePolicy::Escalate,
                        FailurePolicy::BlockParent
                    ]
                );
            }),
        ),
        c(
            "failure_policy unknown",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "failure_policy": "retry"}"#,
            ),
            Errors(&[r#"delegation "a" failure_policy "retry" is invalid"#]),
        ),
        c(
            "synthesis_rule values",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "vote"}, {"id": "b", "agent": "r", "action": "review", "prompt": "p", "synthesis_rule": "Verify"}, {"id": "c", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "summary"}"#,
            ),
            Ok(|r| {
                let got: Vec<Option<SynthesisRule>> =
                    r.delegations.iter().map(|d| d.synthesis_rule).collect();
                assert_eq!(
                    got,
                    [
                        Some(SynthesisRule::Vote),
                        Some(SynthesisRule::Verify),
                        Some(SynthesisRule::Summary)
                    ]
                );
            }),
        ),
        c(
            "synthesis_rule unknown",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "majority"}"#,
            ),
            Errors(&[r#"delegation "a" synthesis_rule "majority" is invalid"#]),
        ),
        c(
            "quorum rule needs quorum",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum"}"#,
            ),
            Errors(&[r#"delegation "a" synthesis_rule quorum requires quorum > 0"#]),
        ),
        c(
            "quorum zero",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": 0}"#,
            ),
            Errors(&[r#"delegation "a" quorum must be > 0 (got 0)"#]),
        ),
        c(
            "quorum negative",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": -1}"#,
            ),
            Errors(&[r#"delegation "a" quorum must be > 0 (got -1)"#]),
        ),
        c(
            "quorum fraction",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": 0.5}"#,
            ),
            Errors(&[
                r#"delegation "a" quorum must be an integer count of approving legs (got 0.5)"#,
            ]),
        ),
        c(
            "quorum as string",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": "2"}"#,
            ),
            Errors(&[
                r#"delegation "a" quorum must be an integer count of approving legs (got "2")"#,
            ]),
        ),
        c(
            "quorum above the number of delegations",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": 3}, {"id": "b", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": 2}"#,
            ),
            Errors(&[
                "synthesis_rule quorum requires quorum (3) to be <= the number of delegations (2)",
            ]),
        ),
        c(
            "quorum equal to the number of delegations",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": 2}, {"id": "b", "agent": "r", "action": "ask", "prompt": "p", "synthesis_rule": "quorum", "quorum": 2}"#,
            ),
            Ok(|r| assert_eq!(r.delegations[0].quorum, Some(2))),
        ),
        c(
            "timeout duration stored as ms",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "timeout": "1h30m"}"#,
            ),
            Ok(|r| assert_eq!(r.delegations[0].timeout_ms, Some(5_400_000))),
        ),
        c(
            "timeout zero",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "timeout": "0s"}"#),
            Errors(&[r#"delegation "a" timeout "0s" must be positive"#]),
        ),
        c(
            "timeout unparseable",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "timeout": "soon"}"#),
            Errors(&[
                r#"delegation "a" timeout "soon" is invalid: invalid duration "soon" (use forms like 90s, 10m, 1h30m)"#,
            ]),
        ),
        c(
            "timeout negative",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "timeout": "-5m"}"#),
            Errors(&[
                r#"delegation "a" timeout "-5m" is invalid: invalid duration "-5m" (use forms like 90s, 10m, 1h30m)"#,
            ]),
        ),
        c(
            "timeout a number",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "timeout": 600}"#),
            Errors(&[r#"delegations[0] (id "a"): timeout must be a string (got number)"#]),
        ),
        c(
            "timeout_ms (the stored form) accepted",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "timeout_ms": 90000}"#,
            ),
            Ok(|r| assert_eq!(r.delegations[0].timeout_ms, Some(90_000))),
        ),
        c(
            "timeout and timeout_ms together",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "timeout": "1m", "timeout_ms": 60000}"#,
            ),
            Errors(&[r#"delegation "a" sets both timeout and timeout_ms; give one"#]),
        ),
        c(
            "retry negative",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "retry": -1}"#),
            Errors(&[r#"delegation "a" retry must be >= 0"#]),
        ),
        c(
            "retry as string",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "retry": "2"}"#),
            Errors(&[r#"delegation "a" retry must be an integer >= 0 (got "2")"#]),
        ),
        c(
            "retry zero explicit",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "retry": 0}"#),
            Ok(|r| assert_eq!(r.delegations[0].retry, 0)),
        ),
        c(
            "model not a string",
            dels(r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "model": 4}"#),
            Errors(&[r#"delegations[0] (id "a"): model must be a string (got number)"#]),
        ),
        c(
            "blank pass-through fields are absent",
            dels(
                r#"{"id": "a", "agent": "r", "action": "ask", "prompt": "p", "model": "", "phase": " ", "effort": null}"#,
            ),
            Ok(|r| {
                let d = &r.delegations[0];
                assert_eq!(
                    (d.model.as_deref(), d.phase.as_deref(), d.effort.as_deref()),
                    (None, None, None)
                );
            }),
        ),
        // ---- everything at once: entries, then graph, quorum, artifacts ----
        c(
            "report order: entries, graph, quorum, artifacts",
            dels(
                r#"{"id": "a", "agent": "r", "action": "implement", "prompt": "p", "deps": ["b"]},
            {"id": "b", "agent": "r", "action": "ask", "prompt": "p", "deps": ["a"], "synthesis_rule": "quorum", "quorum": 5, "artifacts": ["x"]},
            {"id": "c", "agent": "r", "action": "ask", "prompt": "p", "deps": ["c", "nope"]}"#,
            ),
            Errors(&[
                r#"delegations[0] (id "a"): action "implement" is refused: delegation legs may only ask or review"#,
                r#"delegation "c" depends on itself"#,
                r#"delegation "c" references unknown dep "nope""#,
                "delegations form a dependency cycle: a -> b -> a",
                "synthesis_rule quorum requires quorum (5) to be <= the number of delegations (3)",
                "artifact_body is required when delegations request artifacts",
            ]),
        ),
    ]
}

#[test]
fn every_rule_and_error_text() {
    let cases = cases();
    assert!(cases.len() >= 80, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let got = parse(&case.raw);
        match (&case.expect, got) {
            (Expect::Ok(check), Ok(result)) => {
                if let Err(panic) = std::panic::catch_unwind(|| check(&result)) {
                    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
                    failures.push(format!("{}: check failed: {msg}", case.name));
                }
            }
            (Expect::Settles(state, approves), Ok(r)) => {
                let got = (r.decision.job_state(), r.decision.approves());
                if got != (*state, *approves) {
                    failures.push(format!(
                        "{}: settles {got:?}, want {:?}",
                        case.name,
                        (state, approves)
                    ));
                }
            }
            (Expect::Summary(want), Ok(r)) => {
                if r.summary != *want {
                    failures.push(format!(
                        "{}: summary {:?}, want {want:?}",
                        case.name, r.summary
                    ));
                }
            }
            (Expect::Ok(_) | Expect::Settles(..) | Expect::Summary(_), Err(e)) => {
                failures.push(format!("{}: expected Ok, got {:#?}", case.name, e.lines()))
            }
            (Expect::Errors(want), Ok(r)) => {
                failures.push(format!("{}: expected {want:?}, got Ok({r:?})", case.name))
            }
            (Expect::Errors(want), Err(e)) => {
                if e.lines() != *want {
                    failures.push(format!(
                        "{}:\n  want {want:#?}\n  got  {:#?}",
                        case.name,
                        e.lines()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_display_joined_with_semicolons() {
    let err = parse(&fenced(r#""decision":"nope""#)).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"unsupported gitmoot_result decision "nope" (expected one of approved, changes_requested, blocked, implemented, failed, skipped); gitmoot_result summary is required"#
    );
}
