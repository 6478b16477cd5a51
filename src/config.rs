//! `config.toml`: typed sections with the seeds' defaults, strict parsing (unknown keys and
//! bad values name the key and the file), and rendering of the effective config.
//!
//! This file holds the whole `Config` and its effective rendering; `sections.rs` the typed
//! sections and their defaults, `load.rs` reading and checking the file. Owns only
//! configuration values; the engine, daemon and chat read them, never the file.

mod load;
mod sections;

pub use load::{check_label, is_repo_name};
pub use sections::{
    AgentConfig, BudgetConfig, ChatConfig, DaemonConfig, Duration, MemoryConfig, NotifyConfig,
    OrchestrateConfig, RepoConfig, ResultChecks, RuntimeConfig, StoreConfig, TuiConfig,
};

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::domain::RuntimeKind;

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
    pub budget: BudgetConfig,
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
    pub(crate) fn is_invalid(&self) -> bool {
        matches!(self, Self::Invalid(_))
    }
}

impl Config {
    pub(crate) fn to_toml(&self) -> String {
        toml::to_string(self).expect("the config always serialises")
    }

    /// Agents `[agents.<name>] chat_autorespond = true` enrolls.
    pub(crate) fn autorespond_agents(&self) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
