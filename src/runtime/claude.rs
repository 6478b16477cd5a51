//! The Claude Code adapter: `claude -p --output-format stream-json --verbose`, permission
//! mode from the autonomy policy, the live event stream and the final `result` envelope
//! it prints even on failure.
//!
//! Owns only claude's arguments, events and envelope; process handling is in `process.rs`,
//! the shared line scaffold in `activity.rs`.

use serde_json::Value;

use super::activity::{ActivityKind, EventSink, LiveUsage, compact, content_text};
use super::{Prepared, ProcessOutput, Request, RuntimeOutput, TokenUsage, exit_failure, num};
use crate::domain::{AutonomyPolicy, RuntimeKind};

/// `--permission-mode` for a policy; `auto` leaves Claude's own configuration in charge.
pub(crate) fn permission_mode(policy: AutonomyPolicy) -> Option<&'static str> {
    match policy {
        AutonomyPolicy::Auto => None,
        AutonomyPolicy::ReadOnly => Some("plan"),
        AutonomyPolicy::WorkspaceWrite => Some("acceptEdits"),
        AutonomyPolicy::DangerFullAccess => Some("bypassPermissions"),
    }
}

pub fn build(req: &Request<'_>) -> Prepared {
    // stream-json prints each step as it happens and ends with the same `result` object
    // that `--output-format json` prints; claude refuses it in `-p` mode without --verbose.
    let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
        .map(String::from)
        .to_vec();
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
    let stdin = req.prompt_input(&mut args, None);
    Prepared {
        invocation: req.invocation(args, stdin),
        temp: vec![],
        git_layer: None,
    }
}

/// The preflight warning for a claude agent that would bypass permissions while gitmoot
/// runs as root, where Claude Code refuses to start.
pub(crate) fn root_bypass_warning(runtime: RuntimeKind, policy: AutonomyPolicy) -> Option<String> {
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    (root && runtime == RuntimeKind::Claude && policy == AutonomyPolicy::DangerFullAccess).then(
        || {
            "warning: running as root, Claude Code refuses bypassPermissions (policy \
             danger-full-access); its jobs will fail. Run the daemon as another user or use \
             --policy workspace-write"
                .to_string()
        },
    )
}

/// Reads the envelope: `result` is the text, `is_error` fails the job with that text;
/// input and output tokens are what budgets count, cache reads and writes are kept as
/// their own figures.
pub(crate) fn interpret(out: &ProcessOutput) -> RuntimeOutput {
    let stdout = out.stdout_text();
    let envelope = envelope_of(&stdout);
    let Some(env) = envelope else {
        // Refusals such as the root/bypass one are a plain-text line on stdout: name it
        // rather than only the exit code.
        let error = exit_failure(RuntimeKind::Claude, out).map(|e| {
            match stdout.lines().map(str::trim).rfind(|l| !l.is_empty()) {
                Some(line) if out.stderr_summary().is_empty() => format!("{e}: {line}"),
                _ => e,
            }
        });
        return RuntimeOutput {
            error,
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
    let tokens = usage_of(&usage);
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

fn usage_of(usage: &Value) -> TokenUsage {
    TokenUsage {
        tokens_in: num(usage, "input_tokens"),
        tokens_out: num(usage, "output_tokens"),
        cache_read: num(usage, "cache_read_input_tokens"),
        cache_creation: num(usage, "cache_creation_input_tokens"),
    }
}

/// The content parts of a stream-json message (none when it has no content list).
fn content_parts(msg: &Value) -> impl Iterator<Item = &Value> {
    msg.get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// One stream-json event: assistant text and tool calls, tool results, per-message usage
/// (each message id counted once) and the final `result`.
pub(crate) fn read_event(ev: &Value, sink: &mut EventSink<'_>) {
    match ev.get("type").and_then(Value::as_str).unwrap_or_default() {
        "assistant" => {
            let msg = ev.get("message").unwrap_or(&Value::Null);
            for part in content_parts(msg) {
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
                        sink.push(ActivityKind::Message, text, Some(text));
                    }
                    Some("tool_use") => tool_use(part, sink),
                    _ => {}
                }
            }
            let id = msg.get("id").and_then(Value::as_str).unwrap_or_default();
            if let Some(u) = msg.get("usage").filter(|u| u.is_object())
                && !sink.seen.iter().any(|s| s == id)
            {
                sink.seen.push(id.to_string());
                let u = usage_of(u);
                sink.current.tokens_in += u.tokens_in;
                sink.current.tokens_out += u.tokens_out;
                sink.current.cache_read += u.cache_read;
                sink.current.cache_creation += u.cache_creation;
            }
        }
        "user" => {
            for part in content_parts(ev.get("message").unwrap_or(&Value::Null)) {
                if part.get("type").and_then(Value::as_str) == Some("tool_result") {
                    let text = content_text(part.get("content").unwrap_or(&Value::Null));
                    let failed = part.get("is_error").and_then(Value::as_bool) == Some(true);
                    let summary = match (failed, text.trim().is_empty()) {
                        (true, _) => format!("✗ {text}"),
                        (false, true) => "(no output)".to_string(),
                        (false, false) => text.clone(),
                    };
                    sink.push(ActivityKind::ToolResult, &summary, Some(&text));
                }
            }
        }
        "result" => {
            let u = usage_of(ev.get("usage").unwrap_or(&Value::Null));
            let cost = ev.get("total_cost_usd").and_then(Value::as_f64);
            *sink.current = LiveUsage {
                tokens_in: u.tokens_in,
                tokens_out: u.tokens_out,
                cache_read: u.cache_read,
                cache_creation: u.cache_creation,
                cost_usd: cost,
            };
            *sink.run_done = true;
            let mut summary = format!("{} in · {} out", u.tokens_in, u.tokens_out);
            if u.cache_read + u.cache_creation > 0 {
                summary.push_str(&format!(
                    " · cache {} read / {} written",
                    u.cache_read, u.cache_creation
                ));
            }
            if let Some(c) = cost {
                summary.push_str(&format!(" · ${c:.4}"));
            }
            sink.push(ActivityKind::Usage, &summary, None);
            if ev.get("is_error").and_then(Value::as_bool) == Some(true) {
                let text = ev.get("result").and_then(Value::as_str).unwrap_or("error");
                sink.push(ActivityKind::Error, text, Some(text));
            }
        }
        _ => {}
    }
}

/// A `tool_use` block: shell commands as `$ cmd`, edits as `✎ path`, others by name.
fn tool_use(part: &Value, sink: &mut EventSink<'_>) {
    let name = part.get("name").and_then(Value::as_str).unwrap_or("tool");
    let input = part.get("input").unwrap_or(&Value::Null);
    let field = |k: &str| input.get(k).and_then(Value::as_str);
    let detail = serde_json::to_string_pretty(input).unwrap_or_default();
    match name {
        "Bash" => {
            let cmd = field("command").unwrap_or_default();
            sink.push(ActivityKind::ToolCall, &format!("$ {cmd}"), Some(&detail));
        }
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => {
            let path = field("file_path")
                .or_else(|| field("notebook_path"))
                .unwrap_or_default();
            sink.push(
                ActivityKind::FileChange,
                &format!("✎ {path}"),
                Some(&detail),
            );
        }
        _ => {
            let arg = ["file_path", "pattern", "path", "url", "query"]
                .iter()
                .find_map(|k| field(k))
                .map(str::to_string)
                .unwrap_or_else(|| compact(input));
            sink.push(
                ActivityKind::ToolCall,
                &format!("{name} {arg}"),
                Some(&detail),
            );
        }
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
    super::json_lines(stdout).rev().find(is_result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::test_support::{output, request};
    use crate::runtime::{ARG_PROMPT_MAX, Stdin};

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
                "stream-json",
                "--verbose",
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
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--",
                "review it"
            ]
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
                tokens_in: 10,
                tokens_out: 42,
                cache_read: 100,
                cache_creation: 5,
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

    /// What claude prints (plain text, on stdout) when it refuses to bypass permissions as
    /// root.
    const ROOT_BYPASS_REFUSAL: &str =
        "--dangerously-skip-permissions cannot be used with root/sudo privileges";

    #[test]
    fn the_root_bypass_refusal_on_stdout_is_the_reason() {
        let line = format!("{ROOT_BYPASS_REFUSAL} for security reasons");
        let r = interpret(&output(&format!("{line}\n"), "", 1));
        assert_eq!(
            r.error.as_deref(),
            Some(format!("claude exited with code 1: {line}").as_str())
        );
    }
}
