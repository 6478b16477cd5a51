//! Reading `config.toml`: strict parsing whose errors name the file and the
//! `[section].key`, the checks serde cannot make, the environment overrides, and the
//! `[store] url` read on its own.
//!
//! Must not hold defaults (`sections.rs` does) or touch the store.

use std::path::Path;

use super::{Config, ConfigError};
use crate::domain::RuntimeKind;

impl Config {
    /// Loads `path`; a missing file means every default. The folder holding `path` is the
    /// home, whose artifacts folder the engine's prompts name (`artifact_root`).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let mut config = Self::load_file(path)?;
        config.orchestrate.artifact_root = path
            .parent()
            .and_then(|home| crate::home::Home::resolve(Some(home)).ok())
            .map(|home| home.artifacts_dir());
        Ok(config)
    }

    fn load_file(path: &Path) -> Result<Self, ConfigError> {
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
    pub(crate) fn store_url(path: &Path) -> Result<Option<String>, ConfigError> {
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
        let dollars = |key: &str, v: f64| {
            if v >= 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err((key.to_string(), format!("must be a number >= 0, got {v}")))
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
        dollars(
            "[orchestrate].max_delegation_cost_usd",
            o.max_delegation_cost_usd,
        )?;
        dollars("[budget].daily_usd", self.budget.daily_usd)?;
        for (name, a) in &self.agents {
            dollars(&format!("[agents.{name}].daily_usd"), a.daily_usd)?;
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
        for (name, repo) in &self.repos {
            let p = &repo.branch_prefix;
            let bad = p.is_empty()
                || p.starts_with(['-', '/', '.'])
                || p.contains("..")
                || p.contains("//")
                || p.chars()
                    .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\@{".contains(c));
            if bad {
                return Err((
                    format!("[repos.\"{name}\"].branch_prefix"),
                    format!("{p:?} cannot start a git branch name"),
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
