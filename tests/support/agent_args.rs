//! The `agent add` argument list of a scripted shell agent, shared by both support modules
//! and the tests that drive the binary their own way, so the registration is spelled once.

/// `agent add NAME --runtime shell --command COMMAND EXTRA…`.
pub fn shell_agent_args<'a>(name: &'a str, command: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "agent",
        "add",
        name,
        "--runtime",
        "shell",
        "--command",
        command,
    ];
    args.extend_from_slice(extra);
    args
}
