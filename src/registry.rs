//! The agent registry's rules: what makes an agent valid, and the one dispatch gate every
//! entry point uses (`job run`, `chat task`, delegation preflight, auto-respond, moot).
//!
//! Pure checks over `Agent` values; the store only records what passed here.

use crate::Invalid;
use crate::domain::{Action, AutonomyPolicy, Capability, RuntimeKind, implement_policy_guidance};
use crate::store::agents::Agent;

/// Checks a new agent before it is written.
pub(crate) fn validate(a: &Agent) -> Result<(), Invalid> {
    if !is_agent_name(&a.name) {
        return Err(Invalid(format!(
            "agent name {:?} is invalid: use letters, digits, '-' and '_', starting with a letter or digit",
            a.name
        )));
    }
    match (a.runtime, a.command.as_deref().map(str::trim)) {
        (RuntimeKind::Shell, None | Some("")) => {
            return Err(Invalid(
                "runtime shell needs --command CMD (the command run with sh -c)".into(),
            ));
        }
        (RuntimeKind::Shell, _) | (_, None) => {}
        (other, Some(_)) => {
            return Err(Invalid(format!(
                "--command applies to the shell runtime only, not {other}"
            )));
        }
    }
    if a.capabilities.is_empty() {
        return Err(Invalid("an agent needs at least one capability".into()));
    }
    if a.can(Capability::Implement) && !a.policy.can_write() {
        return Err(Invalid(implement_policy_guidance(a.policy)));
    }
    for repo in &a.repos {
        if !crate::config::is_repo_name(repo) {
            return Err(Invalid(format!(
                "--repo {repo:?} must look like owner/name"
            )));
        }
    }
    Ok(())
}

/// Names that are safe as mentions (`@name`), file names and CLI arguments.
pub(crate) fn is_agent_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && s.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The shared dispatch gate: the agent may do `action` on `repo`.
pub(crate) fn check_dispatch(
    agent: &Agent,
    action: Action,
    repo: Option<&str>,
) -> Result<(), Invalid> {
    if !agent.allowed_on(repo) {
        return Err(Invalid(format!(
            "agent {:?} is not allowed on repo {} (it is scoped to {})",
            agent.name,
            repo.unwrap_or("-"),
            agent.repos.join(", ")
        )));
    }
    if !agent.can(action.into()) {
        let caps: Vec<&str> = agent.capabilities.iter().map(|c| c.as_str()).collect();
        return Err(Invalid(format!(
            "agent {:?} lacks the {action} capability (it has: {})",
            agent.name,
            caps.join(", ")
        )));
    }
    if action == Action::Implement && !agent.policy.can_write() {
        return Err(Invalid(implement_policy_guidance(agent.policy)));
    }
    Ok(())
}

/// The default capabilities and policy of `agent add`.
pub(crate) const DEFAULT_CAPABILITIES: [Capability; 2] = [Capability::Ask, Capability::Review];
pub(crate) const DEFAULT_POLICY: AutonomyPolicy = AutonomyPolicy::ReadOnly;

#[cfg(test)]
mod tests {
    use super::*;

    fn agent() -> Agent {
        Agent {
            name: "rev".into(),
            runtime: RuntimeKind::Codex,
            command: None,
            model: None,
            effort: None,
            capabilities: DEFAULT_CAPABILITIES.to_vec(),
            policy: DEFAULT_POLICY,
            repos: vec!["acme/api".into()],
            chat_autorespond: false,
            created_ms: 0,
        }
    }

    #[test]
    fn the_gate_checks_scope_capability_and_policy() {
        let a = agent();
        assert!(check_dispatch(&a, Action::Review, Some("acme/api")).is_ok());
        assert!(check_dispatch(&a, Action::Review, None).is_ok());
        let e = check_dispatch(&a, Action::Review, Some("acme/web")).unwrap_err();
        assert!(e.0.contains("not allowed on repo acme/web"), "{e}");
        let e = check_dispatch(&a, Action::Implement, Some("acme/api")).unwrap_err();
        assert!(e.0.contains("lacks the implement capability"), "{e}");
    }

    #[test]
    fn names_are_mention_safe() {
        assert!(is_agent_name("codex-1"));
        assert!(!is_agent_name("-x"));
        assert!(!is_agent_name("a b"));
        assert!(!is_agent_name(""));
    }
}
