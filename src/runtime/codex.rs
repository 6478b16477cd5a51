//! The codex adapter: `codex exec --json` with stdin closed, the sandbox from the autonomy
//! policy, effort as `-c model_reasoning_effort`, and the JSONL event stream it prints.
//!
//! Owns only codex's arguments and events; process handling is in `process.rs`, the
//! shared line scaffold in `activity.rs`. Plain-text output (no event at all) is the
//! fallback of CLIs older than `--json`.
//!
//! Usage: every job runs a fresh `codex exec` session (gitmoot never resumes codex
//! threads), so the last `turn.completed` of a run is that session's whole usage — the
//! delta this job consumed. A repair run is another fresh session and adds its own.

use serde_json::Value;

use super::activity::{ActivityKind, EventSink, LiveUsage};
use super::{
    Prepared, ProcessOutput, Request, RuntimeOutput, TokenUsage, exit_failure, in_git_work_tree,
    json_lines, num,
};
use crate::domain::{AutonomyPolicy, RuntimeKind};

/// `--sandbox` for a policy; `auto` leaves codex's own configuration in charge.
pub fn sandbox(policy: AutonomyPolicy) -> Option<&'static str> {
    match policy {
        AutonomyPolicy::Auto => None,
        AutonomyPolicy::ReadOnly => Some("read-only"),
        AutonomyPolicy::WorkspaceWrite => Some("workspace-write"),
        AutonomyPolicy::DangerFullAccess => Some("danger-full-access"),
    }
}

pub fn build(req: &Request<'_>) -> Prepared {
    let mut args: Vec<String> = vec!["exec".into(), "--json".into()];
    if let Some(mode) = sandbox(req.policy) {
        args.extend(["--sandbox".into(), mode.into()]);
    }
    if !in_git_work_tree(req.cwd) {
        args.push("--skip-git-repo-check".into());
    }
    if let Some(m) = req.model {
        args.extend(["--model".into(), m.into()]);
    }
    if let Some(e) = req.effort {
        args.extend([
            "-c".into(),
            format!("model_reasoning_effort={}", toml_string(e)),
        ]);
    }
    // With a prompt argument stdin must be closed, or codex appends it as a <stdin> block;
    // a prompt too long for one argument is read from stdin via `-` instead.
    let stdin = req.prompt_input(&mut args, Some("-"));
    Prepared {
        invocation: req.invocation(args, stdin),
        temp: vec![],
        git_layer: None,
    }
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Reads the event stream: agent messages joined, usage from the last `turn.completed`,
/// the error from codex's own `error` / `turn.failed` events before stderr. Lines that
/// are not JSON (codex interleaves log lines) are skipped. Output with no codex event at
/// all (an older CLI that predates `--json` prints plain text) is read as plain text: the
/// whole stdout is the answer and the run contributes no usage.
pub(crate) fn interpret(out: &ProcessOutput) -> RuntimeOutput {
    let stdout = out.stdout_text();
    if !json_lines(&stdout).any(|ev| ev.get("type").is_some_and(Value::is_string)) {
        return RuntimeOutput::plain(RuntimeKind::Codex, out);
    }
    let mut texts: Vec<String> = Vec::new();
    let mut usage = TokenUsage::default();
    let mut last_error: Option<String> = None;
    let mut failed = false;
    for ev in json_lines(&stdout) {
        match ev.get("type").and_then(Value::as_str).unwrap_or_default() {
            "item.completed" => {
                let item = ev.get("item").unwrap_or(&Value::Null);
                let kind = item
                    .get("type")
                    .or_else(|| item.get("item_type"))
                    .and_then(Value::as_str);
                if kind == Some("agent_message")
                    && let Some(t) = item.get("text").and_then(Value::as_str)
                {
                    texts.push(t.to_string());
                }
            }
            "turn.completed" => {
                let u = ev.get("usage").unwrap_or(&Value::Null);
                usage = TokenUsage {
                    tokens_in: num(u, "input_tokens"),
                    tokens_out: num(u, "output_tokens"),
                    ..TokenUsage::default()
                };
                failed = false;
            }
            "turn.failed" => {
                failed = true;
                if let Some(m) = ev
                    .pointer("/error/message")
                    .or_else(|| ev.get("message"))
                    .and_then(Value::as_str)
                {
                    last_error = Some(m.to_string());
                }
            }
            "error" => {
                if let Some(m) = ev.get("message").and_then(Value::as_str) {
                    last_error = Some(m.to_string());
                }
            }
            _ => {}
        }
    }
    let error = match (exit_failure(RuntimeKind::Codex, out), failed) {
        (None, false) => None,
        (exit, _) => Some(match (&last_error, exit) {
            (Some(m), _) => format!("codex: {m}"),
            (None, Some(e)) => e,
            (None, None) => "codex: the turn failed".into(),
        }),
    };
    RuntimeOutput::streamed(&texts, usage, error)
}

/// One `--json` event: commands as they start and finish, file changes, tool calls,
/// agent messages, errors and the per-turn usage.
pub(crate) fn read_event(ev: &Value, sink: &mut EventSink<'_>) {
    let item = ev.get("item").unwrap_or(&Value::Null);
    let item_type = item
        .get("type")
        .or_else(|| item.get("item_type"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let field = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or_default();
    match (
        ev.get("type").and_then(Value::as_str).unwrap_or_default(),
        item_type,
    ) {
        ("item.started", "command_execution") => {
            let cmd = field("command");
            sink.push(ActivityKind::Command, &format!("$ {cmd}"), Some(cmd));
        }
        ("item.started", "mcp_tool_call") => {
            let call = format!("{}.{}", field("server"), field("tool"));
            let args = item.get("arguments").map(Value::to_string);
            sink.push(ActivityKind::ToolCall, &call, args.as_deref());
        }
        ("item.completed", "agent_message") => {
            sink.push(ActivityKind::Message, field("text"), Some(field("text")));
        }
        ("item.completed", "command_execution") => {
            let output = field("aggregated_output");
            let code = item.get("exit_code").and_then(Value::as_i64);
            let first = output.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let summary = match code {
                Some(0) if first.is_empty() => "exit 0 (no output)".to_string(),
                Some(c) => format!("exit {c}: {first}"),
                None => format!("{}: {first}", field("status")),
            };
            sink.push(ActivityKind::ToolResult, &summary, Some(output));
        }
        ("item.completed", "file_change") => {
            for change in item
                .get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let path = change
                    .get("path")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let how = change
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("update");
                sink.push(ActivityKind::FileChange, &format!("✎ {path} ({how})"), None);
            }
        }
        ("item.completed", "mcp_tool_call") => {
            let result = item.get("result").map(Value::to_string).unwrap_or_default();
            sink.push(ActivityKind::ToolResult, &result, Some(&result));
        }
        ("item.completed", "web_search") => {
            sink.push(
                ActivityKind::ToolCall,
                &format!("search {}", field("query")),
                None,
            );
        }
        ("item.completed", "error") => {
            sink.push(
                ActivityKind::Error,
                field("message"),
                Some(field("message")),
            );
        }
        ("turn.completed", _) => {
            let u = ev.get("usage").unwrap_or(&Value::Null);
            *sink.current = LiveUsage {
                tokens_in: num(u, "input_tokens"),
                tokens_out: num(u, "output_tokens"),
                ..LiveUsage::default()
            };
            *sink.run_done = true;
            let summary = format!(
                "{} in ({} cached) · {} out",
                num(u, "input_tokens"),
                num(u, "cached_input_tokens"),
                num(u, "output_tokens")
            );
            sink.push(ActivityKind::Usage, &summary, None);
        }
        ("turn.failed", _) | ("error", _) => {
            let m = ev
                .pointer("/error/message")
                .or_else(|| ev.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("error");
            sink.push(ActivityKind::Error, m, Some(m));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Stdin;
    use crate::runtime::test_support::{assert_clean, output, request};

    #[test]
    fn arguments_follow_policy_model_effort_and_git() {
        let dir = crate::ids::scratch_dir("codex");
        let mut req = request(RuntimeKind::Codex, "ask", &dir);
        req.policy = AutonomyPolicy::WorkspaceWrite;
        req.model = Some("gpt-5");
        req.effort = Some("high");
        assert_eq!(
            build(&req).invocation.args,
            [
                "exec",
                "--json",
                "--sandbox",
                "workspace-write",
                "--skip-git-repo-check",
                "--model",
                "gpt-5",
                "-c",
                "model_reasoning_effort=\"high\"",
                "--",
                "ask"
            ]
        );
        std::fs::create_dir(dir.join(".git")).unwrap();
        req.policy = AutonomyPolicy::Auto;
        req.model = None;
        req.effort = None;
        let p = build(&req);
        assert_eq!(p.invocation.args, ["exec", "--json", "--", "ask"]);
        assert_eq!(p.invocation.stdin, Stdin::Null);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn events_give_text_and_the_last_usage_and_log_lines_are_skipped() {
        let stream = concat!(
            "WARNING: proceeding, even though we could not update PATH\n",
            "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n",
            "{\"type\":\"turn.started\"}\n",
            "2026-12-02T10:00:00Z ERROR codex_core: something noisy\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"i0\",\"type\":\"reasoning\",\"text\":\"thinking\"}}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"i1\",\"type\":\"agent_message\",\"text\":\"{\\\"gitmoot_result\\\":{}}\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1200,\"cached_input_tokens\":1000,\"output_tokens\":80}}\n",
        );
        assert_clean(interpret, stream, "{\"gitmoot_result\":{}}", 1200, 80);
    }

    #[test]
    fn plain_text_with_no_event_is_the_answer_and_reports_no_usage() {
        let text = "codex\nchecked\n{\"gitmoot_result\":{\"decision\":\"approved\",\"summary\":\"s\"}}\ntokens used: 9\n";
        let r = interpret(&output(text, "", 0));
        assert_eq!(r.text, text);
        assert_eq!(r.usage, TokenUsage::default());
        assert_eq!(r.error, None);
    }

    #[test]
    fn a_failed_run_prefers_codex_error_event_over_stderr() {
        let stream = concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}\n",
            "{\"type\":\"error\",\"message\":\"Reconnecting... 5/5 (stream disconnected)\"}\n",
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected before completion\"}}\n",
        );
        let r = interpret(&output(
            stream,
            "Reading additional input from stdin...",
            101,
        ));
        assert_eq!(
            r.error.as_deref(),
            Some("codex: stream disconnected before completion")
        );
        let r = interpret(&output("", "Not inside a trusted directory", 1));
        assert_eq!(
            r.error.as_deref(),
            Some("codex exited with code 1: Not inside a trusted directory")
        );
    }
}
