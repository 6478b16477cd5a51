//! The built-in coordinator recipes `review-panel` and `verifier`: templates that emit a
//! ready-made ephemeral `delegations[]` for a goal. The recipe plays the coordinator's
//! first round itself (no model call: the set is fixed), so the root is submitted and
//! settled with the recipe's result in one transaction; the legs then run as any
//! delegation does and the coordinator agent synthesizes them in its continuation, whose
//! prompt carries the recipe's synthesis rule through the goal anchor.
//!
//! Owns only the recipes' shapes and prompts; dispatch, bounds and the continuation are
//! the engine's ordinary path (`submit_root`, `settle`).

use crate::store::Tx;

use super::{EngineError, Env, Outcome, Settlement, SubmitRoot, settle, submit_root};
use crate::Invalid;
use crate::contract::{self, Delegation, EphemeralSpec, FailurePolicy, SynthesisRule};
use crate::domain::{Action, AutonomyPolicy, Capability, RuntimeKind};

/// Which built-in recipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recipe {
    /// Three independent read-only reviewers, each with its own lens, on mixed runtimes.
    ReviewPanel,
    /// One producer leg, then one independent verify leg on a different runtime.
    Verifier,
}

impl Recipe {
    pub fn as_str(self) -> &'static str {
        match self {
            Recipe::ReviewPanel => "review-panel",
            Recipe::Verifier => "verifier",
        }
    }
}

/// The review panel's lenses: (leg id, what that reviewer looks for).
pub const PANEL_LENSES: [(&str, &str); 3] = [
    (
        "correctness-security",
        "correctness and security: wrong behaviour, unsafe input handling, secrets, injection, privilege",
    ),
    (
        "performance-maintainability",
        "performance and maintainability: needless work, complexity, duplication, unclear structure",
    ),
    (
        "tests-edge-cases",
        "tests and edge cases: missing or weak tests, empty/huge/concurrent inputs, error paths",
    ),
];

/// The runtimes the legs use when none are given.
pub const DEFAULT_RUNTIMES: [RuntimeKind; 3] =
    [RuntimeKind::Claude, RuntimeKind::Codex, RuntimeKind::Kimi];

/// What to run a recipe on.
#[derive(Debug, Clone)]
pub struct RecipeRun {
    pub recipe: Recipe,
    pub goal: String,
    /// The registered coordinator that synthesizes the legs.
    pub agent: String,
    pub repo: Option<String>,
    /// Leg runtimes in order, reused round-robin; empty = `DEFAULT_RUNTIMES`.
    pub runtimes: Vec<RuntimeKind>,
    /// Verifier only: a failed verify pauses for a human instead of a corrective round.
    pub escalate_human: bool,
}

/// What a recipe started.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Started {
    pub root_id: String,
    pub recipe: &'static str,
    pub legs: Vec<String>,
}

fn leg(
    id: &str,
    runtime: RuntimeKind,
    action: Action,
    capabilities: Vec<Capability>,
    prompt: String,
) -> Delegation {
    let mut d = Delegation::to_agent(id, "", action, prompt);
    d.agent = None;
    d.ephemeral = Some(EphemeralSpec {
        runtime,
        model: None,
        effort: None,
        template: None,
        role: Some(id.to_string()),
        capabilities,
        autonomy_policy: AutonomyPolicy::ReadOnly,
    });
    d
}

/// The recipe's legs and the coordinator's synthesis instruction.
fn shape(r: &RecipeRun) -> Result<(Vec<Delegation>, String), Invalid> {
    let runtimes = if r.runtimes.is_empty() {
        DEFAULT_RUNTIMES.to_vec()
    } else {
        r.runtimes.clone()
    };
    if let Some(shell) = runtimes.iter().find(|k| **k == RuntimeKind::Shell) {
        return Err(Invalid(format!(
            "orchestrate {}: --runtime {shell} cannot back an ephemeral leg (codex, claude or kimi)",
            r.recipe.as_str()
        )));
    }
    let goal = r.goal.trim();
    match r.recipe {
        Recipe::ReviewPanel => {
            let legs = PANEL_LENSES
                .iter()
                .enumerate()
                .map(|(i, (id, lens))| {
                    leg(
                        id,
                        runtimes[i % runtimes.len()],
                        Action::Review,
                        vec![Capability::Ask, Capability::Review],
                        format!(
                            "You are one reviewer of a three-lens review panel. Your lens: {lens}.\n\
                             Review only through that lens; other reviewers cover the rest.\n\n\
                             Goal under review:\n{goal}\n\n\
                             Return changes_requested with one finding per blocking issue (give each a \
                             severity P0-P3 and set the top-level severity to the highest), else approved."
                        ),
                    )
                })
                .collect();
            let synthesis =
                "Synthesis (review-panel recipe): merge the three reviewers' findings, removing \
                 duplicates (the same issue seen through two lenses is one finding). Return \
                 changes_requested if any blocking issue remains, else approved."
                    .to_string();
            Ok((legs, synthesis))
        }
        Recipe::Verifier => {
            let producer_rt = runtimes[0];
            let Some(verifier_rt) = runtimes.iter().copied().find(|k| *k != producer_rt) else {
                return Err(Invalid(format!(
                    "orchestrate verifier: the verify leg must run on a different runtime than the producer ({producer_rt}); give a second --runtime"
                )));
            };
            let producer = leg(
                "produce",
                producer_rt,
                Action::Ask,
                vec![Capability::Ask],
                format!(
                    "Produce the result this goal asks for. Say exactly what you did and what you ran.\n\n\
                     Goal:\n{goal}"
                ),
            );
            let mut verify = leg(
                "verify",
                verifier_rt,
                Action::Review,
                vec![Capability::Ask, Capability::Review],
                format!(
                    "You are an independent verifier. Check the producer's result (leg `produce`) against \
                     the original goal; do not trust its self-reported tests_run: re-run the build and \
                     the tests yourself. Return changes_requested with structured findings on any \
                     objective failure, else approved.\n\nOriginal goal:\n{goal}"
                ),
            );
            verify.deps = vec!["produce".into()];
            verify.synthesis_rule = Some(SynthesisRule::Verify);
            verify.failure_policy = if r.escalate_human {
                FailurePolicy::EscalateHuman
            } else {
                FailurePolicy::Escalate
            };
            let synthesis = "Synthesis (verifier recipe): the verify leg's verdict decides. If it approved, \
                 return the producer's result as the final answer; if it requested changes, say what \
                 failed and what would fix it."
                .to_string();
            Ok((vec![producer, verify], synthesis))
        }
    }
}

/// Submits the coordinator root and settles its first round with the recipe's set, in
/// the caller's transaction; the legs are queued (or refused by the usual bounds) by the
/// engine's ordinary delegation path.
pub fn start(tx: &Tx<'_>, env: Env<'_>, r: RecipeRun) -> Result<Started, EngineError> {
    if r.goal.trim().is_empty() {
        return Err(Invalid(format!("orchestrate {} requires a goal", r.recipe.as_str())).into());
    }
    let (legs, synthesis) = shape(&r)?;
    if crate::store::agents::get(tx, &r.agent)?.is_none() {
        return Err(Invalid(format!(
            "orchestrate {}: coordinator agent {:?} is not registered; pass --agent NAME or register it with `gitmoot agent add {} --runtime …`",
            r.recipe.as_str(),
            r.agent,
            r.agent
        ))
        .into());
    }
    let prompt = format!(
        "Built-in {} recipe. Goal:\n{}\n\n{synthesis}",
        r.recipe.as_str(),
        r.goal.trim()
    );
    let root_id = submit_root(
        tx,
        env.clock,
        SubmitRoot {
            repo: r.repo.clone(),
            ..SubmitRoot::new(
                r.agent.clone(),
                Action::Ask,
                prompt,
                format!("orchestrate:{}", r.recipe.as_str()),
            )
        },
    )?;
    let ids: Vec<String> = legs.iter().map(|d| d.id.clone()).collect();
    let doc = serde_json::json!({"gitmoot_result": {
        "decision": "approved",
        "summary": format!(
            "the built-in {} recipe fanned out {} ephemeral leg(s): {}",
            r.recipe.as_str(),
            ids.len(),
            ids.join(", ")
        ),
        "delegations": legs,
    }});
    // Through the contract's own parser, so the recipe's set obeys every rule an agent's does.
    let result = contract::parse(&doc.to_string())
        .map_err(|e| Invalid(format!("orchestrate {}: {e}", r.recipe.as_str())))?;
    settle(tx, env, &root_id, Settlement::of(Outcome::Parsed(result)))?;
    Ok(Started {
        root_id,
        recipe: r.recipe.as_str(),
        legs: ids,
    })
}
