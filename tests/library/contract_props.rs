//! Property tests of the result contract: any valid result, serialised and wrapped in
//! noise, is found and round-trips; arbitrary bytes never panic the parser.

use gitmoot::contract::{
    ChecksBlocked, Decision, Delegation, EphemeralSpec, Evidence, FailurePolicy, GitmootResult,
    HumanQuestion, Severity, SynthesisRule, parse, to_json,
};
use gitmoot::domain::{Action, AutonomyPolicy, Capability, RuntimeKind};
use gitmoot_test_support::engine::EVERY_DECISION;
use proptest::prelude::*;
use proptest::sample::select;

/// Text that never contains `"gitmoot_result"` (no underscore) but has every byte that
/// matters to the locator: braces, quotes, backslashes, newlines, backticks.
fn noise() -> impl Strategy<Value = String> {
    "[a-z {}\"\\\\\n`:,\\[\\]]{0,80}"
}

/// A trimmed, non-blank word or phrase, with JSON-significant characters inside.
fn text() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9 {}\"\\\\é/.-]{0,15}[A-Za-z0-9]".prop_map(String::from)
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(text())
}

fn list_entry() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[ -~]{0,20}", text()]
}

fn ephemeral() -> impl Strategy<Value = EphemeralSpec> {
    (
        select(vec![
            RuntimeKind::Codex,
            RuntimeKind::Claude,
            RuntimeKind::Kimi,
        ]),
        opt_text(),
        opt_text(),
        opt_text(),
        opt_text(),
        proptest::collection::vec(select(Capability::ALL.to_vec()), 0..3),
        select(AutonomyPolicy::ALL.to_vec()),
    )
        .prop_map(
            |(runtime, model, effort, template, role, capabilities, policy)| {
                // The implement capability needs a write policy; keep the spec valid.
                let autonomy_policy = if capabilities.contains(&Capability::Implement) {
                    AutonomyPolicy::WorkspaceWrite
                } else {
                    policy
                };
                EphemeralSpec {
                    runtime,
                    model,
                    effort,
                    template,
                    role,
                    capabilities,
                    autonomy_policy,
                }
            },
        )
}

/// One delegation whose deps point only at earlier siblings (so the batch is a DAG).
fn delegation(index: usize, n: usize) -> impl Strategy<Value = Delegation> {
    (
        prop_oneof![
            text().prop_map(|a| (Some(a), None)),
            ephemeral().prop_map(|e| (None, Some(e)))
        ],
        select(vec![Action::Ask, Action::Review]),
        text(),
        proptest::sample::subsequence((0..index).collect::<Vec<_>>(), 0..=index),
        select(vec![
            FailurePolicy::BlockParent,
            FailurePolicy::Continue,
            FailurePolicy::Escalate,
            FailurePolicy::EscalateHuman,
        ]),
        proptest::option::of(select(vec![
            SynthesisRule::Summary,
            SynthesisRule::Vote,
            SynthesisRule::Quorum,
            SynthesisRule::Verify,
        ])),
        1..=n as u32,
        proptest::option::of(1i64..10_000_000),
        0u32..4,
        (opt_text(), opt_text(), opt_text(), opt_text(), opt_text()),
        proptest::collection::vec(text(), 0..2),
    )
        .prop_map(
            move |(
                (agent, ephemeral),
                action,
                prompt,
                deps,
                failure_policy,
                synthesis_rule,
                k,
                timeout_ms,
                retry,
                (worktree, fingerprint, model, effort, phase),
                artifacts,
            )| Delegation {
                id: format!("d{index}"),
                agent,
                ephemeral,
                action,
                prompt,
                deps: deps.into_iter().map(|d| format!("d{d}")).collect(),
                failure_policy,
                synthesis_rule,
                quorum: (synthesis_rule == Some(SynthesisRule::Quorum)).then_some(k),
                timeout_ms,
                retry,
                worktree,
                artifacts,
                fingerprint,
                model,
                effort,
                phase,
            },
        )
}

fn delegations() -> impl Strategy<Value = Vec<Delegation>> {
    (0usize..4).prop_flat_map(|n| (0..n).map(|i| delegation(i, n)).collect::<Vec<_>>())
}

fn finding() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        text().prop_map(serde_json::Value::String),
        (text(), text()).prop_map(|(t, s)| serde_json::json!({"title": t, "severity": s, "n": 3})),
    ]
}

fn result() -> impl Strategy<Value = GitmootResult> {
    (
        select(EVERY_DECISION.to_vec()),
        text(),
        proptest::collection::vec(finding(), 0..3),
        (
            proptest::collection::vec(list_entry(), 0..3),
            proptest::collection::vec(list_entry(), 0..3),
            proptest::collection::vec(list_entry(), 0..3),
        ),
        delegations(),
        opt_text(),
        proptest::collection::vec((text(), proptest::collection::vec(text(), 0..3)), 0..3),
        select(vec![Evidence::Executed, Evidence::StaticOnly]),
        proptest::option::of(select(vec![
            ChecksBlocked::Toolchain,
            ChecksBlocked::Dependencies,
            ChecksBlocked::Sandbox,
            ChecksBlocked::Network,
            ChecksBlocked::Service,
            ChecksBlocked::Other,
        ])),
        select(vec![Severity::P0, Severity::P1, Severity::P2, Severity::P3]),
    )
        .prop_map(
            |(
                decision,
                summary,
                findings,
                (changes_made, tests_run, needs),
                delegations,
                body,
                questions,
                evidence,
                checks_blocked,
                sev,
            )| {
                let delegations = if decision == Decision::Skipped {
                    Vec::new()
                } else {
                    delegations
                };
                let needs_body = delegations.iter().any(|d| !d.artifacts.is_empty());
                GitmootResult {
                    decision,
                    summary,
                    findings,
                    changes_made,
                    tests_run,
                    needs,
                    delegations,
                    artifact_body: if needs_body {
                        Some(body.unwrap_or_else(|| "brief".into()))
                    } else {
                        body
                    },
                    human_questions: questions
                        .into_iter()
                        .enumerate()
                        .map(|(i, (prompt, choices))| HumanQuestion {
                            id: format!("q{i}"),
                            prompt,
                            choices,
                        })
                        .collect(),
                    evidence,
                    checks_blocked,
                    severity: (decision == Decision::ChangesRequested || sev == Severity::P3)
                        .then_some(sev),
                    learnings: vec![],
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn valid_results_wrapped_in_noise_round_trip(r in result(), before in noise(), after in noise(), fence in any::<bool>()) {
        let json = to_json(&r);
        let raw = if fence {
            format!("{before}\n```json\n{json}\n```\n{after}")
        } else {
            format!("{before}{json}{after}")
        };
        prop_assert_eq!(parse(&raw), Ok(r.clone()));
        // The compact form (as a runtime would print it) is found too.
        let compact = serde_json::to_string(&serde_json::json!({"gitmoot_result": r})).unwrap();
        prop_assert_eq!(parse(&format!("{before}{compact}{after}")), Ok(r));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn json_shaped_garbage_never_panics(tokens in proptest::collection::vec(select(vec![
        "{", "}", "[", "]", ":", ",", "\"", "\\", "\"gitmoot_result\"", "\"decision\"", "\"approved\"",
        "\"summary\"", "\"x\"", "\"delegations\"", "\"deps\"", "\"id\"", "null", "1", "-1", "0.5", "true", " ",
        "\"tests_run\"", "\"quorum\"", "\"synthesis_rule\"", "\"quorum\"", "\"ephemeral\"", "\"runtime\"",
    ]), 0..120)) {
        let raw: String = tokens.concat();
        if let Ok(r) = parse(&raw) {
            prop_assert_eq!(parse(&to_json(&r)), Ok(r));
        }
    }
}
