//! Model stand-ins on 127.0.0.1: the Anthropic Messages API (for claude) and the OpenAI
//! Responses API (for codex), both streaming Server-Sent Events. On a conversation's first
//! turn they ask for one shell tool call (`ls`); once the tool's result comes back they
//! answer with a `gitmoot_result`. Failure modes: HTTP 500, a stream cut mid-way, and an
//! answer without a `gitmoot_result`. The final answer can be held until the test
//! releases it, so a test can look at a job while it is certainly still running.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};

use serde_json::{Value, json};

use super::Netns;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST /v1/messages` (Claude Code).
    Messages,
    /// `POST /v1/responses` (Codex).
    Responses,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Tool call, then the result.
    Normal,
    /// Every model request answers HTTP 500.
    Http500,
    /// The first model reply stops half-way through, connection closed.
    CutMidway,
    /// Tool call, then a final answer with no `gitmoot_result`.
    NoResult,
}

/// The summary the stand-in's `gitmoot_result` carries.
pub const SUMMARY: &str = "listed the files";

struct State {
    api: Api,
    mode: Mode,
    requests: Mutex<Vec<Value>>,
    /// The shell command the first turn asks for.
    command: String,
    /// (held, released): the final answer waits while `held && !released`.
    gate: (Mutex<(bool, bool)>, Condvar),
}

pub struct Standin {
    pub port: u16,
    state: Arc<State>,
}

impl Standin {
    /// Starts serving inside `ns`; `hold` keeps the final answer back until `release`.
    pub fn start(ns: &Netns, api: Api, mode: Mode, hold: bool) -> Self {
        Self::with_command(ns, api, mode, hold, "ls")
    }

    /// As `start`, asking for `command` as the tool call (Claude Code: `write:NAME:CONTENT`
    /// asks for a `Write` of NAME in its working directory instead of a `Bash` call).
    pub fn with_command(ns: &Netns, api: Api, mode: Mode, hold: bool, command: &str) -> Self {
        let state = Arc::new(State {
            api,
            mode,
            command: command.to_string(),
            requests: Mutex::new(Vec::new()),
            gate: (Mutex::new((hold, false)), Condvar::new()),
        });
        let listener = ns.run(|| TcpListener::bind("127.0.0.1:0").expect("binding the stand-in"));
        let port = listener.local_addr().unwrap().port();
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                std::thread::spawn(move || {
                    let _ = serve(&st, conn);
                });
            }
        });
        Self { port, state }
    }

    /// Lets a held final answer go.
    pub fn release(&self) {
        let (lock, cv) = &self.state.gate;
        lock.lock().unwrap().1 = true;
        cv.notify_all();
    }

    /// Bodies of the model requests received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.state.requests.lock().unwrap().clone()
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        self.release();
    }
}

struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
}

fn read_request(r: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        body.resize(length, 0);
        r.read_exact(&mut body)?;
    }
    Ok(Some(Request { method, path, body }))
}

fn serve(st: &State, conn: TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut w = conn;
    while let Some(req) = read_request(&mut reader)? {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let model_call = req.method == "POST"
            && (req.path.starts_with("/v1/messages") && !req.path.contains("count_tokens")
                || req.path.starts_with("/v1/responses"));
        if !model_call {
            let reply = if req.path.starts_with("/v1/messages/count_tokens") {
                json!({"input_tokens": 10})
            } else {
                json!({"data": [], "models": []})
            };
            respond_json(&mut w, 200, &reply)?;
            continue;
        }
        st.requests.lock().unwrap().push(body.clone());
        // Side requests without tools (titles, summaries) get a plain short answer.
        let main = body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
        if st.mode == Mode::Http500 && main {
            let err = match st.api {
                Api::Messages => {
                    json!({"type": "error", "error": {"type": "api_error", "message": "stand-in: internal error"}})
                }
                Api::Responses => {
                    json!({"error": {"type": "server_error", "message": "stand-in: internal error"}})
                }
            };
            respond_json(&mut w, 500, &err)?;
            return Ok(());
        }
        let answered_tool = has_tool_result(st.api, &body);
        let events = match (main, answered_tool) {
            (false, _) => text_reply(st.api, "ok"),
            (true, false) => tool_call_reply(st.api, &st.command, &body),
            (true, true) => {
                let (lock, cv) = &st.gate;
                let mut g = lock.lock().unwrap();
                while g.0 && !g.1 {
                    g = cv.wait(g).unwrap();
                }
                drop(g);
                let text = match st.mode {
                    Mode::NoResult => "I listed the files and I am done.".to_string(),
                    _ => format!(
                        "The folder holds the files.\n\n{}",
                        json!({"gitmoot_result": {"decision": "approved", "summary": SUMMARY}})
                    ),
                };
                text_reply(st.api, &text)
            }
        };
        w.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
        )?;
        let cut = st.mode == Mode::CutMidway && main;
        let keep = if cut { events.len() / 2 } else { events.len() };
        for (name, data) in &events[..keep] {
            write!(w, "event: {name}\ndata: {data}\n\n")?;
            w.flush()?;
        }
        return Ok(());
    }
    Ok(())
}

fn respond_json(w: &mut TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    let text = body.to_string();
    let reason = if status == 200 {
        "OK"
    } else {
        "Internal Server Error"
    };
    write!(
        w,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
        text.len()
    )?;
    w.flush()
}

/// Whether the conversation already carries the answer to a tool call.
fn has_tool_result(api: Api, body: &Value) -> bool {
    match api {
        Api::Messages => body["messages"].as_array().into_iter().flatten().any(|m| {
            m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["type"] == "tool_result")
        }),
        Api::Responses => body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| i["type"] == "function_call_output"),
    }
}

type Events = Vec<(&'static str, Value)>;

const USAGE_IN: u64 = 1200;
const USAGE_OUT: u64 = 40;

/// A Messages text block at index 0 opened and filled with `text` (its stop comes after).
fn text_block_opened(text: &str) -> Events {
    vec![
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
    ]
}

fn text_reply(api: Api, text: &str) -> Events {
    match api {
        Api::Messages => {
            let mut ev = message_start();
            ev.extend(text_block_opened(text));
            ev.extend(message_end(0, "end_turn"));
            ev
        }
        Api::Responses => {
            let item = json!({"type": "message", "id": "msg_standin", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]});
            responses(item)
        }
    }
}

/// The working directory Claude Code names in its system prompt.
fn working_dir(body: &Value) -> String {
    let text = body.to_string();
    let lower = text.to_lowercase();
    let Some(at) = lower.find("working directory: ") else {
        return String::new();
    };
    text[at + "working directory: ".len()..]
        .chars()
        .take_while(|c| !matches!(c, '\\' | '"' | '\n'))
        .collect::<String>()
        .trim()
        .to_string()
}

/// A `write:NAME:CONTENT` command asks Claude Code for a `Write` tool call creating NAME in
/// its working directory.
fn write_call(command: &str, body: &Value) -> Option<Value> {
    let rest = command.strip_prefix("write:")?;
    let (name, content) = rest.split_once(':')?;
    let path = format!("{}/{name}", working_dir(body));
    Some(json!({"file_path": path, "content": content}))
}

fn tool_call_reply(api: Api, command: &str, body: &Value) -> Events {
    match api {
        Api::Messages if command.starts_with("write:") => {
            let input = write_call(command, body).unwrap_or_default();
            let mut ev = message_start();
            ev.extend(text_block_opened("Let me write the file."));
            ev.push((
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ));
            ev.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_standin1", "name": "Write", "input": {}}}),
            ));
            ev.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta",
                    "partial_json": input.to_string()}}),
            ));
            ev.extend(message_end(1, "tool_use"));
            ev
        }
        Api::Messages => {
            let mut ev = message_start();
            ev.extend(text_block_opened("Let me look at the folder."));
            ev.push((
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ));
            ev.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_standin1", "name": "Bash", "input": {}}}),
            ));
            ev.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta",
                    "partial_json": json!({"command": command, "description": "List files"}).to_string()}}),
            ));
            ev.extend(message_end(1, "tool_use"));
            ev
        }
        Api::Responses => responses(json!({
            "type": "function_call", "id": "fc_standin1", "call_id": "call_standin1",
            "name": "exec_command", "arguments": json!({"cmd": command}).to_string(), "status": "completed"
        })),
    }
}

fn message_start() -> Events {
    vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{}", rand_id()), "type": "message",
            "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": USAGE_IN, "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 2000, "output_tokens": 1}}}),
    )]
}

fn message_end(last_index: u64, stop: &str) -> Events {
    vec![
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": last_index}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": USAGE_OUT}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn responses(item: Value) -> Events {
    let id = format!("resp_{}", rand_id());
    vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": id}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": id, "usage": {
                "input_tokens": USAGE_IN, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": USAGE_OUT, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": USAGE_IN + USAGE_OUT}}}),
        ),
    ]
}

fn rand_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!("{:08x}", N.fetch_add(1, Ordering::Relaxed))
}
