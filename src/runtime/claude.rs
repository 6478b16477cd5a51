//! The Claude Code adapter: `claude -p --output-format json`, permission mode from the
//! autonomy policy, and the one-object JSON envelope it prints even on failure.
//!
//! Owns only claude's arguments and envelope; process handling is in `process.rs`.

use serde_json::Value;

use super::{
    ARG_PROMPT_MAX, Invocation, Prepared, ProcessOutput, Request, RuntimeOutput, Stdin, TokenUsage,
    exit_failure, num,
};
use crate::domain::{AutonomyPolicy, RuntimeKind};

/// `--permission-mode` for a policy; `auto` leaves Claude's own configuration in charge.
pub fn permission_mode(policy: AutonomyPolicy) -> Option<&'static str> {
    match policy {
        AutonomyPolicy::Auto => None,
        AutonomyPolicy::ReadOnly => Some("plan"),
        AutonomyPolicy::WorkspaceWrite => Some("acceptEdits"),
        AutonomyPolicy::DangerFullAccess => Some("bypassPermissions"),
    }
}

pub fn build(req: &Request<'_>) -> Prepared {
    let mut args: Vec<String> = vec!["-p".into(), "--output-format".into(), "json".into()];
    if let Some(m) = req.model {
        args.extend(["--model".into(), m.into()]);
    }
    if let Some(e) = req.effort {
        args.extend(["--effort".into(), e.into()]);
    }
    if let Some(mode) = permission_mode(req.policy) {
        args.extend(["--permission-mode".into(), mode.into()]);
    }
    // Without a prompt argument, `claude -p` reads the prompt from stdin.
    let stdin = if req.prompt.len() > ARG_PROMPT_MAX {
        Stdin::Bytes(req.prompt.as_bytes().to_vec())
    } else {
        args.extend(["--".into(), req.prompt.into()]);
        Stdin::Null
    };
    Prepared {
        invocation: Invocation {
            program: req.binary.clone(),
            args,
            env: req.env.clone(),
            cwd: Some(req.cwd.to_path_buf()),
            stdin,
        },
        temp: vec![],
    }
}

/// Reads the envelope: `result` is the text, `is_error` fails the job with that text,
/// usage counts cache reads and writes as input.
pub fn interpret(out: &ProcessOutput) -> RuntimeOutput {
    let stdout = out.stdout_text();
    let envelope = envelope_of(&stdout);
    let Some(env) = envelope else {
        return RuntimeOutput {
            error: exit_failure(RuntimeKind::Claude, out),
            text: stdout,
            ..RuntimeOutput::default()
        };
    };
    let text = env
        .get("result")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let usage = env.get("usage").cloned().unwrap_or(Value::Null);
    let tokens = TokenUsage {
        tokens_in: num(&usage, "input_tokens")
            + num(&usage, "cache_creation_input_tokens")
            + num(&usage, "cache_read_input_tokens"),
        tokens_out: num(&usage, "output_tokens"),
    };
    let is_error = env
        .get("is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let error = if is_error {
        Some(if text.trim().is_empty() {
            exit_failure(RuntimeKind::Claude, out)
                .unwrap_or_else(|| "claude reported an error with no message".into())
        } else {
            format!("claude: {}", text.trim())
        })
    } else {
        exit_failure(RuntimeKind::Claude, out)
    };
    RuntimeOutput {
        text,
        usage: tokens,
        vendor_cost_usd: env.get("total_cost_usd").and_then(Value::as_f64),
        error,
        truncated: false,
    }
}

/// The whole stdout as one object, else the last `type: "result"` line.
fn envelope_of(stdout: &str) -> Option<Value> {
    let is_result = |v: &Value| v.get("type").and_then(Value::as_str) == Some("result");
    if let Ok(v) = serde_json::from_str::<Value>(stdout.trim())
        && v.is_object()
    {
        return Some(v);
    }
    stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(is_result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::test_support::{output, request};

    #[test]
    fn arguments_follow_model_effort_and_policy() {
        let cwd = std::path::Path::new("/tmp");
        let mut req = request(RuntimeKind::Claude, "review it", cwd);
        req.model = Some("opus");
        req.effort = Some("high");
        req.policy = AutonomyPolicy::ReadOnly;
        let p = build(&req);
        assert_eq!(
            p.invocation.args,
            [
                "-p",
                "--output-format",
                "json",
                "--model",
                "opus",
                "--effort",
                "high",
                "--permission-mode",
                "plan",
                "--",
                "review it"
            ]
        );
        assert_eq!(p.invocation.stdin, Stdin::Null);
        req.policy = AutonomyPolicy::Auto;
        req.model = None;
        req.effort = None;
        assert_eq!(
            build(&req).invocation.args,
            ["-p", "--output-format", "json", "--", "review it"]
        );
    }

    #[test]
    fn a_huge_prompt_goes_on_stdin() {
        let big = "x".repeat(ARG_PROMPT_MAX + 1);
        let req = request(RuntimeKind::Claude, &big, std::path::Path::new("/tmp"));
        let p = build(&req);
        assert!(!p.invocation.args.contains(&big));
        assert_eq!(p.invocation.stdin, Stdin::Bytes(big.into_bytes()));
    }

    #[test]
    fn not_logged_in_fails_with_the_envelope_text() {
        let env = r#"{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","session_id":"0b1","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"num_turns":1,"duration_ms":147}"#;
        let r = interpret(&output(env, "", 1));
        assert_eq!(
            r.error.as_deref(),
            Some("claude: Not logged in · Please run /login")
        );
    }

    #[test]
    fn success_gives_text_usage_and_cost() {
        let env = r#"{"type":"result","subtype":"success","is_error":false,"result":"done {\"gitmoot_result\":{}}","total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":42}}"#;
        let r = interpret(&output(env, "", 0));
        assert_eq!(r.error, None);
        assert_eq!(r.text, "done {\"gitmoot_result\":{}}");
        assert_eq!(
            r.usage,
            TokenUsage {
                tokens_in: 115,
                tokens_out: 42
            }
        );
        assert_eq!(r.vendor_cost_usd, Some(0.0123));
    }

    #[test]
    fn no_envelope_and_a_bad_exit_names_the_stderr() {
        let r = interpret(&output("", "error: unknown option '--x'", 1));
        assert_eq!(
            r.error.as_deref(),
            Some("claude exited with code 1: error: unknown option '--x'")
        );
    }
}
