//! Text arguments too big for a command line: a prompt or message given inline, in a file
//! (`--prompt-file PATH`) or on stdin (`-`).
//!
//! Owns reading that text and the one-line errors about it; what the text means belongs to
//! the verb that asked for it.

use std::io::Read;
use std::path::PathBuf;

use crate::Invalid;

/// The text of `inline` or `file`: exactly one of them, `-` meaning stdin for either.
/// `what` names the argument in errors ("prompt", "message").
pub fn text(inline: Option<String>, file: Option<PathBuf>, what: &str) -> anyhow::Result<String> {
    let from_stdin = |label: &str| -> anyhow::Result<String> {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| Invalid(format!("reading the {what} from {label}: {e}")))?;
        String::from_utf8(bytes)
            .map_err(|_| Invalid(format!("the {what} on {label} is not UTF-8 text")).into())
    };
    match (inline, file) {
        (Some(_), Some(_)) => Err(Invalid(format!(
            "give the {what} as an argument or with --{what}-file, not both"
        ))
        .into()),
        (Some(t), None) if t == "-" => from_stdin("stdin"),
        (Some(t), None) => Ok(t),
        (None, Some(p)) if p.as_os_str() == "-" => from_stdin("stdin"),
        (None, Some(p)) => {
            let bytes = std::fs::read(&p)
                .map_err(|e| Invalid(format!("--{what}-file {}: {e}", p.display())))?;
            String::from_utf8(bytes).map_err(|_| {
                Invalid(format!("--{what}-file {}: not UTF-8 text", p.display())).into()
            })
        }
        (None, None) => Err(Invalid(format!(
            "a {what} is required: give it as an argument, with --{what}-file PATH, or - to read stdin"
        ))
        .into()),
    }
}
