//! The Kimi Code adapter: `kimi -p <prompt> --output-format stream-json`, every job a fresh
//! session, and the stream of JSON messages it prints.
//!
//! Owns only kimi's arguments and messages; process handling is in `process.rs`. Kimi's
//! headless mode has no permission switch, so the autonomy policy is not mapped here;
//! the dispatch gate has already refused `implement` without a write policy.

use serde_json::Value;

use super::activity::{ActivityKind, EventSink, LiveUsage, compact, content_text};
use super::{
    ARG_PROMPT_MAX, Prepared, ProcessOutput, Request, RuntimeError, RuntimeOutput, Stdin,
    TokenUsage, exit_failure, json_lines, num, write_private,
};
use crate::domain::RuntimeKind;

pub fn build(req: &Request<'_>) -> Result<Prepared, RuntimeError> {
    let mut args: Vec<String> = Vec::new();
    let mut temp = Vec::new();
    if let Some(m) = req.model {
        args.extend(["--model".into(), m.into()]);
    }
    // A prompt too long for one argument is handed over as a file in a folder kimi may read.
    let prompt = if req.prompt.len() > ARG_PROMPT_MAX {
        let dir = super::private_dir(req.scratch, "kimi")?;
        let file = write_private(&dir.0, "prompt", req.prompt)?;
        args.extend(["--add-dir".into(), dir.0.display().to_string()]);
        let text = format!(
            "Your full instructions are in the file {}. Read that file first and follow it exactly.",
            file.0.display()
        );
        temp.push(file);
        temp.push(dir);
        text
    } else {
        req.prompt.to_string()
    };
    args.extend([
        "-p".into(),
        prompt,
        "--output-format".into(),
        "stream-json".into(),
    ]);
    Ok(Prepared {
        invocation: req.invocation(args, Stdin::Null),
        temp,
        git_layer: None,
    })
}

/// Joins the assistant messages' text (a string or a list of text parts) and takes the
/// last `usage` object seen.
pub(crate) fn interpret(out: &ProcessOutput) -> RuntimeOutput {
    let stdout = out.stdout_text();
    let mut texts: Vec<String> = Vec::new();
    let mut usage = TokenUsage::default();
    for msg in json_lines(&stdout) {
        if msg.get("role").and_then(Value::as_str) == Some("assistant") {
            match msg.get("content") {
                Some(Value::String(s)) => texts.push(s.clone()),
                Some(Value::Array(parts)) => texts.extend(
                    parts
                        .iter()
                        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .map(str::to_string),
                ),
                _ => {}
            }
        }
        if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
            usage = TokenUsage {
                tokens_in: num(u, "input_tokens").max(num(u, "prompt_tokens")),
                tokens_out: num(u, "output_tokens").max(num(u, "completion_tokens")),
                ..TokenUsage::default()
            };
        }
    }
    let error = exit_failure(RuntimeKind::Kimi, out).map(|e| {
        let lower = e.to_lowercase();
        if ["login", "authenticat", "unauthorized"]
            .iter()
            .any(|w| lower.contains(w))
        {
            format!("Kimi Code authentication required (run `kimi login`): {e}")
        } else {
            e
        }
    });
    RuntimeOutput::streamed(&texts, usage, error)
}

/// One stream-json message: assistant text and tool calls, tool results, usage.
pub(crate) fn read_event(msg: &Value, sink: &mut EventSink<'_>) {
    match msg.get("role").and_then(Value::as_str) {
        Some("assistant") => {
            match msg.get("content") {
                Some(Value::String(s)) => sink.push(ActivityKind::Message, s, Some(s)),
                Some(Value::Array(parts)) => {
                    for p in parts {
                        if p.get("type").and_then(Value::as_str) == Some("text") {
                            let t = p.get("text").and_then(Value::as_str).unwrap_or_default();
                            sink.push(ActivityKind::Message, t, Some(t));
                        }
                    }
                }
                _ => {}
            }
            for call in msg
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let f = call.get("function").unwrap_or(call);
                let name = f.get("name").and_then(Value::as_str).unwrap_or("tool");
                let args = compact(f.get("arguments").unwrap_or(&Value::Null));
                sink.push(
                    ActivityKind::ToolCall,
                    &format!("{name} {args}"),
                    Some(&args),
                );
            }
        }
        Some("tool") => {
            let text = content_text(msg.get("content").unwrap_or(&Value::Null));
            sink.push(ActivityKind::ToolResult, &text, Some(&text));
        }
        _ => {}
    }
    if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
        *sink.current = LiveUsage {
            tokens_in: num(u, "input_tokens").max(num(u, "prompt_tokens")),
            tokens_out: num(u, "output_tokens").max(num(u, "completion_tokens")),
            ..LiveUsage::default()
        };
        let summary = format!(
            "{} in · {} out",
            sink.current.tokens_in, sink.current.tokens_out
        );
        sink.push(ActivityKind::Usage, &summary, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::test_support::{assert_clean, output, request};

    #[test]
    fn arguments_carry_the_model_and_the_prompt() {
        let mut req = request(RuntimeKind::Kimi, "ask", std::path::Path::new("/tmp"));
        req.model = Some("kimi-k2");
        req.effort = Some("high");
        assert_eq!(
            build(&req).unwrap().invocation.args,
            [
                "--model",
                "kimi-k2",
                "-p",
                "ask",
                "--output-format",
                "stream-json"
            ]
        );
    }

    #[test]
    fn a_huge_prompt_travels_in_a_file_that_is_removed_after() {
        let dir = std::env::temp_dir().join(format!("gm-kimi-{}", crate::ids::random_hex(4)));
        let big = "y".repeat(ARG_PROMPT_MAX + 1);
        let mut req = request(RuntimeKind::Kimi, &big, &dir);
        req.scratch = &dir;
        let p = build(&req).unwrap();
        let args = &p.invocation.args;
        assert_eq!(args[0], "--add-dir");
        assert!(args[3].contains("Read that file first"), "{}", args[3]);
        let file = p.temp[0].0.clone();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), big);
        drop(p);
        assert!(!file.exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn messages_give_text_and_usage() {
        let stream = concat!(
            "{\"role\":\"assistant\",\"content\":\"Looking at the code.\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\"}]}\n",
            "{\"role\":\"tool\",\"content\":\"src/\",\"tool_call_id\":\"c1\"}\n",
            "{\"role\":\"assistant\",\"content\":[{\"type\":\"think\",\"think\":\"hmm\"},{\"type\":\"text\",\"text\":\"{\\\"gitmoot_result\\\":{}}\"}]}\n",
            "{\"usage\":{\"input_tokens\":300,\"output_tokens\":20}}\n",
        );
        assert_clean(
            interpret,
            stream,
            "Looking at the code.\n{\"gitmoot_result\":{}}",
            300,
            20,
        );
    }

    #[test]
    fn auth_failures_say_how_to_log_in() {
        let r = interpret(&output("", "Error: unauthorized", 1));
        assert!(
            r.error
                .unwrap()
                .starts_with("Kimi Code authentication required")
        );
    }
}
