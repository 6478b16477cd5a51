//! The shell adapter: the agent's command run with `sh -c`, the prompt on stdin and in the
//! file named by `$GITMOOT_PROMPT_FILE`, stdout as the output, no token usage. Like every
//! runtime it runs confined to its policy (see `contain.rs`).
//!
//! Owns only the shell contract of SPEC §6; process handling is in `process.rs`.

use super::{
    Invocation, Prepared, ProcessOutput, Request, RuntimeError, RuntimeOutput, Stdin, write_private,
};
use crate::domain::RuntimeKind;

pub fn build(req: &Request<'_>) -> Result<Prepared, RuntimeError> {
    let command = req
        .command
        .filter(|c| !c.trim().is_empty())
        .ok_or(RuntimeError::NoCommand)?;
    let file = write_private(req.scratch, "prompt", req.prompt)?;
    let mut env = req.env.clone();
    env.push(("GITMOOT_PROMPT_FILE".into(), file.0.display().to_string()));
    Ok(Prepared {
        invocation: Invocation {
            env,
            ..req.invocation(
                vec!["-c".into(), command.into()],
                Stdin::Bytes(req.prompt.as_bytes().to_vec()),
            )
        },
        temp: vec![file],
        git_layer: None,
    })
}

/// Stdout is the output; a non-zero exit fails with the code and the stderr tail.
pub(crate) fn interpret(out: &ProcessOutput) -> RuntimeOutput {
    RuntimeOutput::plain(RuntimeKind::Shell, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::test_support::output;

    #[test]
    fn a_non_zero_exit_names_the_code_and_the_stderr_tail() {
        let r = interpret(&output("partial", "line1\nfatal: no such file\n", 4));
        assert_eq!(
            r.error.as_deref(),
            Some("shell exited with code 4: line1 | fatal: no such file")
        );
        assert_eq!(r.text, "partial");
    }
}
