//! The typed sections of `config.toml`, each with the seeds' defaults, and the duration
//! values they hold ("10m" in the file, milliseconds in memory).
//!
//! Values and defaults only: reading and checking the file is `load.rs`'s.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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

    pub(crate) fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_str(&crate::duration::format_ms(d.0)),
            None => s.serialize_str(""),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
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
    /// Where the home's git worktrees live; unset: `$XDG_STATE_HOME/gitmoot/worktrees/<hash
    /// of the home's path>` (`~/.local/state/...` without `XDG_STATE_HOME`), never in the
    /// home, whose path an agent must not learn from its working directory.
    pub worktrees: Option<PathBuf>,
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
            worktrees: None,
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
    /// The home's artifacts folder, set when the config is loaded from a home (never read
    /// from the file): where the briefs a truncated inline body points at live.
    #[serde(skip)]
    pub artifact_root: Option<std::path::PathBuf>,
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
    /// A running job with no activity for this long is stalled (`silent`); also the
    /// window of `burning`. 0 turns both off.
    pub stall_after: Duration,
    /// The same tool call or command this many times in a row is `looping`; 0 off.
    pub stall_repeats: u32,
    /// Tokens spent with no step for `stall_after` that make a job `burning`; 0 off.
    pub stall_burn_tokens: u64,
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
            artifact_root: None,
            default_delegation_timeout: None,
            default_plan_timeout: None,
            default_implement_timeout: None,
            default_review_timeout: None,
            default_gate_timeout: None,
            default_repair_timeout: None,
            result_checks: ResultChecks::Warn,
            blocking_severity: crate::contract::Severity::P3,
            stall_after: Duration(10 * 60_000),
            stall_repeats: 5,
            // Any rise counts: a job whose only sign of life is its bill is the case.
            stall_burn_tokens: 1,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RepoConfig {
    /// The local git checkout; read-only legs run in detached worktrees of it, implement
    /// jobs in worktrees of their own on a branch each.
    pub path: Option<PathBuf>,
    /// 0 = the daemon's global parallelism.
    pub max_parallel: u32,
    /// The ref an implement job's branch starts from when `--base` names none; unset: the
    /// checkout's current branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// An implement job's branch is this prefix and its job id.
    pub branch_prefix: String,
    /// Whether a landed job's branch is kept (it is deleted otherwise).
    pub keep_branches: bool,
    /// A remote of the checkout (e.g. `origin`) an implement job's branch is pushed to when
    /// the job ends, so CI or a person elsewhere sees it; unset: nothing is pushed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push: Option<String>,
}

impl Default for RepoConfig {
    fn default() -> Self {
        Self {
            path: None,
            max_parallel: 0,
            base: None,
            branch_prefix: "gitmoot/".into(),
            keep_branches: false,
            push: None,
        }
    }
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
    /// Dollars the agent's jobs may spend per UTC day; once reached, its queued jobs wait
    /// until the next day or a higher cap (running ones finish). 0 = no cap.
    pub daily_usd: f64,
}

/// `[budget]`: the fleet's own spending cap, over every agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    /// Dollars all jobs together may spend per UTC day; once reached, every queued job
    /// waits until the next day or a higher cap (running ones finish). 0 = no cap.
    pub daily_usd: f64,
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
    pub(super) fn is_default(&self) -> bool {
        self.url.is_none()
    }
}
