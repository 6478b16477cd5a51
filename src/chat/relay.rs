//! The seat relay: a unix-socket server the daemon runs in the home (`<home>/run`) so sandboxed moot seats
//! (whose runtime sees the home read-only) can still `chat send` / `chat wait`. Each seat
//! gets a token bound to (agent, thread); the server checks the peer's uid (SO_PEERCRED),
//! the token, the binding and the agent's repo scope, then runs the same send/wait code
//! as the direct path with the author forced to the bound agent.
//!
//! Wire: one request and one response per connection, each a 4-byte big-endian length
//! and that many bytes of JSON. Tokens live in memory only and are never written down.

use crate::store::Tx;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::messages::{self, SendOptions};
use super::{ChatError, Result, threads, wait};
use crate::clock::SystemClock;
use crate::home::Home;
use crate::store::chat::Message;
use crate::store::{Store, agents};

/// Environment variables that route a seat's `chat send`/`chat wait` through the relay.
pub const ENV_SOCKET: &str = "GITMOOT_RELAY_SOCKET";
pub const ENV_TOKEN: &str = "GITMOOT_RELAY_TOKEN";

const MAX_FRAME: u32 = 8 * 1024 * 1024;
const IO_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Request {
    pub op: String,
    pub token: String,
    pub thread: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<i64>,
    /// `(kind, id)` refs of a send.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<(String, String)>,
    #[serde(default)]
    pub since_seq: i64,
}

/// A message as the relay carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireMessage {
    pub seq: i64,
    pub kind: String,
    pub author: String,
    pub body: String,
    #[serde(default)]
    pub mentions: Vec<String>,
}

impl From<&Message> for WireMessage {
    fn from(m: &Message) -> Self {
        Self {
            seq: m.seq,
            kind: m.kind.to_string(),
            author: m.author_name.clone(),
            body: m.body.clone(),
            mentions: m.mentions.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Response {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<WireMessage>,
    #[serde(default)]
    pub messages: Vec<WireMessage>,
    #[serde(default)]
    pub last_seq: i64,
    #[serde(default)]
    pub cap_reached: bool,
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl Response {
    fn err(e: impl Into<String>) -> Self {
        Self {
            error: Some(e.into()),
            ..Self::default()
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Binding {
    agent: String,
    thread_id: String,
}

type Tokens = Arc<Mutex<HashMap<String, Binding>>>;

/// Longest socket path the kernel accepts (`sun_path` is 108 bytes with its NUL).
const SOCKET_PATH_MAX: usize = 107;

/// Where the relay's socket lives: `<home>/run`, private like the home itself; when that
/// path is too long for a socket, a per-home folder under `$XDG_RUNTIME_DIR` (also private
/// to the user). Never the shared temp dir, where another user could take the name first.
pub fn socket_dir(home: &Home) -> PathBuf {
    let in_home = home.root().join("run");
    // "relay-<pid>.sock" with the widest pid.
    let room = in_home.as_os_str().len() + "/relay-4294967295.sock".len();
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(xdg) if room > SOCKET_PATH_MAX => {
            let hash = crate::ids::sha256_hex(home.root().as_os_str().as_encoded_bytes());
            PathBuf::from(xdg).join(format!("gitmoot-{}", &hash[..12]))
        }
        _ => in_home,
    }
}

/// Creates `dir` 0700 and refuses one that another user owns.
fn private_socket_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != me {
        return Err(io::Error::other(format!(
            "{} is not a folder of this user",
            dir.display()
        )));
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Removes sockets of relays whose daemon died without cleaning up (`relay-<pid>.sock`
/// with a dead pid).
fn remove_stale_sockets(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("relay-"))
            .and_then(|n| n.strip_suffix(".sock"))
            .and_then(|n| n.parse::<i32>().ok());
        if let Some(pid) = pid
            && !crate::pid::is_alive(pid)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

pub struct Relay;

/// A running relay; dropping it stops the server and removes the socket.
pub struct RelayHandle {
    path: PathBuf,
    tokens: Tokens,
    stop: Arc<AtomicBool>,
    /// The serving thread's socket, kept to wake its blocking `accept` on stop: a connect
    /// cannot, once the socket file is gone with a removed home.
    waker: UnixListener,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    /// Binds `<socket_dir>/relay-<pid>.sock` (dir 0700, socket 0600) and serves it on a thread
    /// with its own connection to the home's store.
    pub fn start(home: &Home) -> Result<RelayHandle> {
        let dir = socket_dir(home);
        let io = |e: io::Error| ChatError::relay(format!("chat relay: {e}"));
        private_socket_dir(&dir).map_err(io)?;
        remove_stale_sockets(&dir);
        let path = dir.join(format!("relay-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).map_err(io)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        let store = Arc::new(Mutex::new(Store::open_home(home)?));
        let tokens: Tokens = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (tokens.clone(), stop.clone());
        let waker = listener.try_clone().map_err(io)?;
        let thread = std::thread::Builder::new()
            .name("chat-relay".into())
            .spawn(move || serve(listener, store, t, s))
            .map_err(io)?;
        tracing::info!("daemon: chat relay listening at {}", path.display());
        Ok(RelayHandle {
            path,
            tokens,
            stop,
            waker,
            thread: Some(thread),
        })
    }
}

impl RelayHandle {
    pub fn socket_path(&self) -> &Path {
        &self.path
    }

    /// A fresh token bound to one seat: `agent` may post and wait on `thread_id` only.
    pub fn issue_token(&self, agent: &str, thread_id: &str) -> String {
        let token = crate::ids::random_hex(32);
        self.tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                token.clone(),
                Binding {
                    agent: agent.to_string(),
                    thread_id: thread_id.to_string(),
                },
            );
        token
    }

    /// Revokes a token (when its seat job ends, on every exit path).
    pub fn release(&self, token: &str) {
        self.tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
    }

    /// The environment a seat's runtime needs to reach the relay with `token`.
    pub(crate) fn seat_env(&self, token: &str) -> Vec<(String, String)> {
        vec![
            (ENV_SOCKET.into(), self.path.display().to_string()),
            (ENV_TOKEN.into(), token.to_string()),
        ]
    }
}

impl Drop for RelayHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so the thread sees the flag: shutting a listening
        // socket down makes a pending accept(2) return at once on Linux.
        // SAFETY: shutdown(2) on a descriptor this handle owns for its whole life.
        unsafe {
            libc::shutdown(self.waker.as_raw_fd(), libc::SHUT_RDWR);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
        // The per-home folder under $XDG_RUNTIME_DIR goes too once empty; `<home>/run`
        // stays with the home.
        if let Some(dir) = self.path.parent()
            && dir.file_name().is_some_and(|n| n != "run")
        {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn serve(listener: UnixListener, store: Arc<Mutex<Store>>, tokens: Tokens, stop: Arc<AtomicBool>) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = conn else { continue };
        let (store, tokens) = (store.clone(), tokens.clone());
        std::thread::spawn(move || {
            let _ = handle(stream, &store, &tokens);
        });
    }
}

fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes passed; the fd is open.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred.uid)
}

fn read_frame(stream: &mut UnixStream) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let n = u32::from_be_bytes(len);
    if n > MAX_FRAME {
        return Err(io::Error::other(format!(
            "relay frame too large ({n} bytes)"
        )));
    }
    let mut buf = vec![0u8; n as usize];
    stream.read_exact(&mut buf)?;
    Ok(buf)
}

fn write_frame(stream: &mut UnixStream, data: &[u8]) -> io::Result<()> {
    stream.write_all(&(data.len() as u32).to_be_bytes())?;
    stream.write_all(data)?;
    stream.flush()
}

fn handle(mut stream: UnixStream, store: &Mutex<Store>, tokens: &Tokens) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let response = match peer_uid(&stream) {
        Err(_) => Response::err("peer credential check failed"),
        Ok(uid) if uid != me => Response::err("relay peer uid not permitted"),
        Ok(_) => match read_frame(&mut stream).map(|b| serde_json::from_slice::<Request>(&b)) {
            Ok(Ok(req)) => answer(req, store, tokens),
            Ok(Err(_)) => Response::err("malformed relay request"),
            Err(e) => Response::err(e.to_string()),
        },
    };
    let bytes = serde_json::to_vec(&response).map_err(io::Error::other)?;
    write_frame(&mut stream, &bytes)
}

fn answer(req: Request, store: &Mutex<Store>, tokens: &Tokens) -> Response {
    let binding = tokens
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&req.token)
        .cloned();
    let Some(b) = binding else {
        return Response::err("chat relay: invalid or expired token");
    };
    if req.op == "send"
        && let Some(a) = req.as_agent.as_deref().filter(|a| !a.is_empty())
        && a != b.agent
    {
        return Response::err(format!(
            "chat relay: token bound to {:?} cannot send as {a:?}",
            b.agent
        ));
    }
    let mut store = store.lock().unwrap_or_else(|p| p.into_inner());
    let guard = |conn: &Tx<'_>, thread: &crate::store::chat::Thread| -> Result<()> {
        if thread.id != b.thread_id {
            return Err(ChatError::relay(
                "chat relay: token not valid for this thread",
            ));
        }
        let allowed =
            agents::get(conn, &b.agent)?.is_some_and(|a| a.allowed_on(Some(&thread.repo)));
        if !allowed {
            return Err(ChatError::relay(format!(
                "chat relay: agent {:?} is not allowed on {:?}",
                b.agent, thread.repo
            )));
        }
        Ok(())
    };
    let prefixed = |e: ChatError| {
        let text = e.to_string();
        if text.starts_with("chat relay:") || matches!(e, ChatError::Refused { .. }) {
            Response::err(text)
        } else {
            Response::err(format!("chat relay: {text}"))
        }
    };
    match req.op.as_str() {
        "send" => {
            let opts = SendOptions {
                as_agent: Some(b.agent.clone()),
                reply_to: req.reply_to,
                refs: req.refs.clone(),
            };
            let body = req.body.unwrap_or_default();
            match messages::send_message_with(
                &mut store,
                &SystemClock,
                &req.thread,
                req.repo.as_deref(),
                &body,
                &opts,
                &guard,
            ) {
                Ok(sent) => Response {
                    ok: true,
                    last_seq: sent.message.seq,
                    message: Some(WireMessage::from(&sent.message)),
                    warnings: sent
                        .unknown_mentions
                        .iter()
                        .map(|n| messages::unknown_mention_warning(n))
                        .collect(),
                    ..Response::default()
                },
                Err(e) => prefixed(e),
            }
        }
        "wait" => {
            let snap = threads::resolve(&store.conn(), &req.thread, req.repo.as_deref())
                .and_then(|t| guard(&store.conn(), &t).map(|_| t))
                .and_then(|t| wait::snapshot(&store.conn(), &t, req.since_seq));
            match snap {
                Ok(s) => Response {
                    ok: true,
                    messages: s.messages.iter().map(WireMessage::from).collect(),
                    last_seq: s.last_seq,
                    cap_reached: s.cap_reached,
                    ..Response::default()
                },
                Err(e) => prefixed(e),
            }
        }
        other => Response::err(format!("chat relay: unknown op {other:?}")),
    }
}

/// One request to the relay at `socket`; a server-side refusal comes back as the error.
pub fn call(socket: &Path, req: &Request) -> Result<Response> {
    let mut stream = UnixStream::connect(socket)
        .map_err(|e| ChatError::relay(format!("dial chat relay: {e}")))?;
    stream.set_read_timeout(Some(IO_TIMEOUT)).ok();
    stream.set_write_timeout(Some(IO_TIMEOUT)).ok();
    let bytes = serde_json::to_vec(req)?;
    write_frame(&mut stream, &bytes)
        .map_err(|e| ChatError::relay(format!("write chat relay request: {e}")))?;
    let reply = read_frame(&mut stream)
        .map_err(|e| ChatError::relay(format!("read chat relay response: {e}")))?;
    let resp: Response = serde_json::from_slice(&reply)
        .map_err(|e| ChatError::relay(format!("read chat relay response: {e}")))?;
    match (&resp.ok, &resp.error) {
        (true, _) => Ok(resp),
        (false, Some(e)) => Err(ChatError::relay(e.clone())),
        (false, None) => Err(ChatError::relay("chat relay returned no message")),
    }
}

/// The relay endpoint from the environment, when a seat runs under one.
pub(crate) fn from_env() -> Option<(PathBuf, String)> {
    let socket = std::env::var_os(ENV_SOCKET).filter(|v| !v.is_empty())?;
    let token = std::env::var(ENV_TOKEN).ok().filter(|v| !v.is_empty())?;
    Some((PathBuf::from(socket), token))
}

/// `chat wait` over the relay: the loop and the deadline stay on the client.
pub fn wait_remote(
    socket: &Path,
    token: &str,
    thread: &str,
    repo: Option<&str>,
    since: i64,
    timeout: Duration,
) -> Result<Response> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let resp = call(
            socket,
            &Request {
                op: "wait".into(),
                token: token.into(),
                thread: thread.into(),
                repo: repo.map(String::from),
                since_seq: since,
                ..Request::default()
            },
        )?;
        if !resp.messages.is_empty() || resp.cap_reached || std::time::Instant::now() >= deadline {
            return Ok(resp);
        }
        std::thread::sleep(
            Duration::from_millis(250)
                .min(deadline.saturating_duration_since(std::time::Instant::now())),
        );
    }
}
