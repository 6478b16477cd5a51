//! `config.toml`: typed sections with the seeds' defaults, strict parsing (unknown keys and
//! bad values name the key and the file), and rendering of the effective config.
//!
//! Owns only configuration values; the engine, daemon and chat read them, never the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::domain::RuntimeKind;
use crate::duration;

/// A duration written as "10m" in TOML, held as milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Duration(pub i64);

impl Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&duration::format_ms(self.0))
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        duration::parse_ms(&text)
            .map(Duration)
            .map_err(serde::de::Error::custom)
    }
}

/// An optional duration that `config show` still lists: unset is written (and read) as
/// `""`, the seed's "all keys are empty by default".
mod unset_as_empty {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Duration;

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_str(&crate::duration::format_ms(d.0)),
            None => s.serialize_str(""),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = String::deserialize(d)?;
        if text.trim().is_empty() {
            return Ok(None);
        }
        crate::duration::parse_ms(&text)
            .map(|ms| Some(Duration(ms)))
            .map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DaemonConfig {
    /// Jobs run at once.
    pub parallel: usize,
    /// Safety poll interval; wake-ups normally come from store changes.
    pub tick: Duration,
    /// How long running jobs may finish after SIGINT/SIGTERM before they are terminated.
    pub shutdown_grace: Duration,
    /// The kill deadline of a job that sets no timeout of its own.
    pub job_timeout: Duration,
    /// Host labels this host's daemons carry (`daemon run --labels` overrides): jobs pinned
    /// with `job run --on LABEL` run only on a daemon that carries the label.
    pub labels: Vec<String>,
    /// How long a daemon's heartbeat in the store's registry stays good. It beats three
    /// times per lease; once a lease runs out, another daemon recovers its running jobs.
    pub lease: Duration,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            parallel: 2,
            tick: Duration(1_000),
            shutdown_grace: Duration(10_000),
            job_timeout: Duration(4 * 3_600_000),
            labels: Vec::new(),
            lease: Duration(15_000),
        }
    }
}

/// Every `[orchestrate]` knob of the result-contract seed, with its defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OrchestrateConfig {
    pub max_delegation_depth: u32,
    pub max_delegation_total_jobs: u32,
    pub max_delegation_width: u32,
    pub max_delegation_walltime: Duration,
    /// 0 = unlimited.
    pub max_delegation_token_budget: u64,
    /// 0 = unlimited.
    pub max_delegation_cost_usd: f64,
    pub max_delegation_non_progress_streak: u32,
    pub max_verify_replan_attempts: u32,
    pub max_repair_attempts: u32,
    pub escalation_ttl: Duration,
    pub escalation_handle: String,
    pub inline_artifact_bodies: bool,
    /// Per-body cap when inlining; 0 = the engine's built-in cap.
    pub inline_artifact_max_bytes: u64,
    pub inject_upstream_dep_context: bool,
    #[serde(with = "unset_as_empty")]
    pub default_delegation_timeout: Option<Duration>,
    #[serde(with = "unset_as_empty")]
    pub default_plan_timeout: Option<Duration>,
    #[serde(with = "unset_as_empty")]
    pub default_implement_timeout: Option<Duration>,
    #[serde(with = "unset_as_empty")]
    pub default_review_timeout: Option<Duration>,
    #[serde(with = "unset_as_empty")]
    pub default_gate_timeout: Option<Duration>,
    #[serde(with = "unset_as_empty")]
    pub default_repair_timeout: Option<Duration>,
    /// What a failed result check does to a settled result.
    pub result_checks: ResultChecks,
    /// The least severe `changes_requested` review that still blocks; milder ones resolve
    /// as approved-with-notes.
    pub blocking_severity: crate::contract::Severity,
}

/// `[orchestrate].result_checks`: what the deterministic result checks do on failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultChecks {
    /// Not run.
    Off,
    /// An event and a mark on the job; the result stands.
    #[default]
    Warn,
    /// The job fails with the checks' reason (after the repair attempt).
    Block,
}

impl Default for OrchestrateConfig {
    fn default() -> Self {
        Self {
            max_delegation_depth: 8,
            max_delegation_total_jobs: 64,
            max_delegation_width: 16,
            max_delegation_walltime: Duration(2 * 3_600_000),
            max_delegation_token_budget: 0,
            max_delegation_cost_usd: 0.0,
            max_delegation_non_progress_streak: 2,
            max_verify_replan_attempts: 2,
            max_repair_attempts: 1,
            escalation_ttl: Duration(24 * 3_600_000),
            escalation_handle: String::new(),
            inline_artifact_bodies: false,
            inline_artifact_max_bytes: 0,
            inject_upstream_dep_context: false,
            default_delegation_timeout: None,
            default_plan_timeout: None,
            default_implement_timeout: None,
            default_review_timeout: None,
            default_gate_timeout: None,
            default_repair_timeout: None,
            result_checks: ResultChecks::Warn,
            blocking_severity: crate::contract::Severity::P3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChatConfig {
    pub auto_respond: bool,
    pub auto_respond_cap: u32,
    pub auto_respond_cooldown: Duration,
    pub moot_max_seats: u32,
    pub moot_message_cap: u32,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            auto_respond: false,
            auto_respond_cap: 4,
            auto_respond_cooldown: Duration(120_000),
            moot_max_seats: 6,
            moot_message_cap: 30,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryConfig {
    pub ingest_auto_confirm: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuntimeConfig {
    /// The binary; found on PATH when absent.
    pub path: Option<PathBuf>,
    pub default_model: Option<String>,
    pub default_effort: Option<String>,
    /// Daemon environment variables passed to this runtime's agents on top of the minimal
    /// set (a trailing `*` matches a prefix: `"AWS_*"`).
    pub env: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RepoConfig {
    /// The local git checkout; read-only legs run in detached worktrees of it.
    pub path: Option<PathBuf>,
    /// 0 = the daemon's global parallelism.
    pub max_parallel: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TuiConfig {
    pub theme: String,
    pub mouse: bool,
}

impl Default for TuiConfig {
    fn default() -> Self {
        Self {
            theme: "default".into(),
            mouse: true,
        }
    }
}

/// `[agents.<name>]`: per-agent switches for agents registered with `gitmoot agent add`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// Opts the agent into the auto-respond sweep (with `[chat].auto_respond`), like
    /// `agent add --chat-autorespond`; either one enrolls it.
    pub chat_autorespond: bool,
}

/// `[notify]`: how a human is told that a tree paused for them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    /// Run with `sh -c` by the daemon once per opened human gate, the gate as JSON on
    /// stdin; empty = no command.
    pub command: String,
    /// The command is killed after this long.
    pub command_timeout: Duration,
    /// The control room rings the terminal bell on a new attention item.
    pub bell: bool,
    /// The control room sends a desktop notification (OSC 9 and OSC 777) on a new
    /// attention item.
    pub desktop: bool,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        Self {
            command: String::new(),
            command_timeout: Duration(30_000),
            bell: true,
            desktop: true,
        }
    }
}

/// `[store]`: where the store lives when it is not the home's SQLite file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `postgres://…` (or `sqlite:PATH`); `--store` and `$GITMOOT_STORE` come first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl StoreConfig {
    fn is_default(&self) -> bool {
        self.url.is_none()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub daemon: DaemonConfig,
    pub orchestrate: OrchestrateConfig,
    pub chat: ChatConfig,
    pub memory: MemoryConfig,
    pub runtimes: BTreeMap<String, RuntimeConfig>,
    pub repos: BTreeMap<String, RepoConfig>,
    pub tui: TuiConfig,
    pub notify: NotifyConfig,
    pub agents: BTreeMap<String, AgentConfig>,
    #[serde(skip_serializing_if = "StoreConfig::is_default")]
    pub store: StoreConfig,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config {path}: {cause}")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(transparent)]
    Invalid(#[from] crate::Invalid),
}

impl ConfigError {
    /// Bad input (exit 2) rather than a file that could not be read.
    pub fn is_invalid(&self) -> bool {
        matches!(self, Self::Invalid(_))
    }
}

impl Config {
    /// Loads `path`; a missing file means every default.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        match std::fs::read(path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|e| {
                    crate::Invalid(format!(
                        "config {}: not UTF-8 text (invalid byte at offset {})",
                        path.display(),
                        e.utf8_error().valid_up_to()
                    ))
                })?;
                Ok(Self::parse(&text, path)?)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Self::default().with_env_overrides())
            }
            Err(cause) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                cause,
            }),
        }
    }

    /// The `[store] url` of the file at `path`, read on its own: commands that never read
    /// the rest of the config keep working while another key is broken. A file too broken
    /// to read that has a `[store]` table is an error, since guessing the store is worse.
    pub fn store_url(path: &Path) -> Result<Option<String>, ConfigError> {
        let text = match std::fs::read(path).map(String::from_utf8) {
            Ok(Ok(t)) => t,
            // Not text at all: the full load names the file and the offset.
            Ok(Err(_)) => return Self::load(path).map(|c| c.store.url),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(cause) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    cause,
                });
            }
        };
        let Ok(table) = toml::from_str::<toml::Table>(&text) else {
            if text.lines().any(|l| l.trim_start().starts_with("[store]")) {
                return Self::parse(&text, path)
                    .map(|c| c.store.url)
                    .map_err(Into::into);
            }
            return Ok(None);
        };
        match table.get("store").and_then(|s| s.get("url")) {
            None => Ok(None),
            Some(toml::Value::String(url)) => Ok(Some(url.clone())),
            Some(_) => Err(crate::Invalid(format!(
                "config {}: [store].url: expected a URL string",
                path.display()
            ))
            .into()),
        }
    }

    /// Parses and validates TOML text; errors are one line naming the file and the key.
    pub fn parse(text: &str, path: &Path) -> Result<Self, crate::Invalid> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let place = e
                .span()
                .map(|span| key_at(text, span.start))
                .unwrap_or_default();
            let message = e.message().replace('\n', " ");
            let hint = if place.starts_with("[agents.") {
                "; agents are registered with `gitmoot agent add NAME --runtime …` \
                 (`--chat-autorespond` enrolls one in auto-respond too)"
            } else {
                ""
            };
            crate::Invalid(format!(
                "config {}: {place}{}{hint}",
                path.display(),
                message.trim()
            ))
        })?;
        config.validate().map_err(|(key, why)| {
            crate::Invalid(format!("config {}: {key}: {why}", path.display()))
        })?;
        Ok(config.with_env_overrides())
    }

    fn validate(&self) -> Result<(), (String, String)> {
        let positive = |key: &str, v: u64| {
            if v == 0 {
                Err((key.to_string(), "must be at least 1, got 0".to_string()))
            } else {
                Ok(())
            }
        };
        positive("[daemon].parallel", self.daemon.parallel as u64)?;
        positive("[daemon].tick", self.daemon.tick.0 as u64)?;
        positive("[daemon].job_timeout", self.daemon.job_timeout.0 as u64)?;
        positive("[daemon].lease", self.daemon.lease.0 as u64)?;
        for label in &self.daemon.labels {
            check_label(label).map_err(|e| ("[daemon].labels".to_string(), e.0))?;
        }
        let o = &self.orchestrate;
        positive(
            "[orchestrate].max_delegation_depth",
            o.max_delegation_depth.into(),
        )?;
        positive(
            "[orchestrate].max_delegation_total_jobs",
            o.max_delegation_total_jobs.into(),
        )?;
        positive(
            "[orchestrate].max_delegation_width",
            o.max_delegation_width.into(),
        )?;
        positive(
            "[orchestrate].max_delegation_walltime",
            o.max_delegation_walltime.0 as u64,
        )?;
        positive("[orchestrate].escalation_ttl", o.escalation_ttl.0 as u64)?;
        if !(o.max_delegation_cost_usd >= 0.0 && o.max_delegation_cost_usd.is_finite()) {
            return Err((
                "[orchestrate].max_delegation_cost_usd".into(),
                format!("must be a number >= 0, got {}", o.max_delegation_cost_usd),
            ));
        }
        positive("[chat].moot_max_seats", self.chat.moot_max_seats.into())?;
        positive("[chat].moot_message_cap", self.chat.moot_message_cap.into())?;
        positive(
            "[notify].command_timeout",
            self.notify.command_timeout.0 as u64,
        )?;
        for name in self.runtimes.keys() {
            name.parse::<RuntimeKind>()
                .map_err(|e| (format!("[runtimes.{name}]"), e.0))?;
        }
        for name in self.repos.keys() {
            if !is_repo_name(name) {
                return Err((
                    format!("[repos.\"{name}\"]"),
                    "repo must look like owner/name".into(),
                ));
            }
        }
        Ok(())
    }

    /// The seed's environment overrides for the two structural bounds.
    fn with_env_overrides(mut self) -> Self {
        let read = |var: &str| {
            std::env::var(var)
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|v| *v > 0)
        };
        if let Some(v) = read("GITMOOT_MAX_DELEGATION_DEPTH") {
            self.orchestrate.max_delegation_depth = v;
        }
        if let Some(v) = read("GITMOOT_MAX_DELEGATION_TOTAL_JOBS") {
            self.orchestrate.max_delegation_total_jobs = v;
        }
        self
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("the config always serialises")
    }

    /// Agents `[agents.<name>] chat_autorespond = true` enrolls.
    pub fn autorespond_agents(&self) -> Vec<String> {
        self.agents
            .iter()
            .filter(|(_, a)| a.chat_autorespond)
            .map(|(name, _)| name.clone())
            .collect()
    }

    pub fn runtime(&self, kind: RuntimeKind) -> RuntimeConfig {
        self.runtimes
            .get(kind.as_str())
            .cloned()
            .unwrap_or_default()
    }
}

/// A host label (`job run --on`, `daemon run --labels`) is a short name: letters, digits,
/// `-`, `_` and `.`.
pub fn check_label(label: &str) -> Result<(), crate::Invalid> {
    let ok = !label.is_empty()
        && label.len() <= 64
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(crate::Invalid(format!(
            "host label {label:?} must be 1-64 letters, digits, '-', '_' or '.'"
        )))
    }
}

/// `owner/name`, each part non-empty and free of whitespace and further slashes.
pub fn is_repo_name(s: &str) -> bool {
    let mut parts = s.split('/');
    matches!((parts.next(), parts.next(), parts.next()), (Some(o), Some(n), None)
        if !o.is_empty() && !n.is_empty() && !s.contains(char::is_whitespace))
}

/// Names the `[section].key` (and line) an error offset falls in.
fn key_at(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line_no = before.matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    let is_header = |l: &&str| l.starts_with('[') && l.ends_with(']');
    // An error on a header line (an unknown section) belongs to that header, not to the
    // section above it.
    let section = Some(line.trim())
        .filter(is_header)
        .or_else(|| before.lines().rev().map(str::trim).find(is_header))
        .unwrap_or("");
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim())
        .filter(|k| !k.starts_with('['));
    match key {
        Some(k) => format!("{section}.{k} (line {line_no}): "),
        None if !section.is_empty() => format!("{section} (line {line_no}): "),
        None => format!("line {line_no}: "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, Path::new("/h/config.toml")).map_err(|e| e.0)
    }

    #[test]
    fn empty_file_gives_the_seed_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c.orchestrate.max_delegation_depth, 8);
        assert_eq!(c.orchestrate.max_delegation_total_jobs, 64);
        assert_eq!(c.orchestrate.max_delegation_width, 16);
        assert_eq!(c.orchestrate.max_delegation_walltime.0, 7_200_000);
        assert_eq!(c.orchestrate.escalation_ttl.0, 86_400_000);
        assert_eq!(c.orchestrate.max_delegation_non_progress_streak, 2);
        assert_eq!(c.orchestrate.max_verify_replan_attempts, 2);
        assert_eq!(c.chat.auto_respond_cap, 4);
        assert_eq!(c.chat.auto_respond_cooldown.0, 120_000);
        assert_eq!(c.chat.moot_max_seats, 6);
        assert_eq!(c.chat.moot_message_cap, 30);
        assert_eq!(c.daemon.parallel, 2);
        assert_eq!(c.daemon.job_timeout.0, 4 * 3_600_000);
    }

    #[test]
    fn every_section_parses() {
        let c = parse(
            r#"
[daemon]
parallel = 4
tick = "500ms"
[orchestrate]
max_delegation_token_budget = 100000
default_review_timeout = "15m"
[chat]
auto_respond = true
[memory]
ingest_auto_confirm = true
[runtimes.codex]
path = "/opt/codex"
default_model = "gpt-5"
[repos."acme/api"]
path = "/src/api"
max_parallel = 3
[tui]
theme = "light"
mouse = false
"#,
        )
        .unwrap();
        assert_eq!(c.daemon.tick.0, 500);
        assert_eq!(
            c.orchestrate.default_review_timeout,
            Some(Duration(900_000))
        );
        assert_eq!(
            c.runtime(RuntimeKind::Codex).default_model.as_deref(),
            Some("gpt-5")
        );
        assert_eq!(c.repos["acme/api"].max_parallel, 3);
        assert!(!c.tui.mouse);
        let again = parse(&c.to_toml()).unwrap();
        assert_eq!(again, c);
    }

    #[test]
    fn each_bad_case_names_the_key_and_the_file() {
        let cases = [
            ("[daemon]\nparalel = 3\n", "[daemon].paralel"),
            ("[daemon]\nparallel = 0\n", "[daemon].parallel"),
            ("[daemon]\nparallel = \"two\"\n", "[daemon].parallel"),
            ("[daemon]\ntick = \"soon\"\n", "[daemon].tick"),
            ("[daemon]\njob_timeout = \"0\"\n", "[daemon].job_timeout"),
            (
                "[orchestrate]\nescalation_ttl = \"0\"\n",
                "[orchestrate].escalation_ttl",
            ),
            (
                "[orchestrate]\nmax_delegation_cost_usd = -1.0\n",
                "[orchestrate].max_delegation_cost_usd",
            ),
            (
                "[orchestrate]\nmax_delegation_depth = -2\n",
                "[orchestrate].max_delegation_depth",
            ),
            ("[chat]\nauto_respond = \"yes\"\n", "[chat].auto_respond"),
            ("[chat]\nmoot_max_seats = 0\n", "[chat].moot_max_seats"),
            ("[runtimes.gpt]\npath = \"/x\"\n", "[runtimes.gpt]"),
            (
                "[repos.\"noslash\"]\npath = \"/x\"\n",
                "[repos.\"noslash\"]",
            ),
            ("[tui]\ncolour = \"red\"\n", "[tui].colour"),
            ("[pipelines]\nx = 1\n", "pipelines"),
        ];
        for (text, key) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(key), "{text:?} gave {err:?}");
            assert!(err.contains("/h/config.toml"), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
