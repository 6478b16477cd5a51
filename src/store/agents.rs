//! The `agents` table: registered agents and their runtime, capabilities, policy and scope.

use serde::{Deserialize, Serialize};

use super::tx::{Row, Tx, params};
use super::{Result, StoreError};
use crate::Invalid;
use crate::clock::Millis;
use crate::domain::{AutonomyPolicy, Capability, RuntimeKind};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    pub name: String,
    pub runtime: RuntimeKind,
    /// The command line of a `shell` agent.
    pub command: Option<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub capabilities: Vec<Capability>,
    pub policy: AutonomyPolicy,
    /// Repos this agent may work on; empty means every repo.
    pub repos: Vec<String>,
    pub chat_autorespond: bool,
    pub created_ms: Millis,
}

impl Agent {
    /// A read-only shell agent running `command` that may only ask, registered at time 0:
    /// the smallest valid agent, for rows written straight into a store (benches, fixtures),
    /// adjusted with struct update syntax.
    pub fn shell(name: &str, command: &str) -> Self {
        Self {
            name: name.into(),
            runtime: RuntimeKind::Shell,
            command: Some(command.into()),
            model: None,
            effort: None,
            capabilities: vec![Capability::Ask],
            policy: AutonomyPolicy::ReadOnly,
            repos: Vec::new(),
            chat_autorespond: false,
            created_ms: 0,
        }
    }

    pub fn can(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    pub(crate) fn allowed_on(&self, repo: Option<&str>) -> bool {
        match repo {
            None => true,
            Some(r) => self.repos.is_empty() || self.repos.iter().any(|x| x == r),
        }
    }
}

const COLS: &str = "name, runtime, command, model, effort, capabilities, policy, repos, chat_autorespond, created_ms";

fn from_row(r: &Row<'_>) -> Result<(Agent, String, String)> {
    Ok((
        Agent {
            name: r.get(0)?,
            runtime: r.get(1)?,
            command: r.get(2)?,
            model: r.get(3)?,
            effort: r.get(4)?,
            capabilities: Vec::new(),
            policy: r.get(6)?,
            repos: Vec::new(),
            chat_autorespond: r.get(8)?,
            created_ms: r.get(9)?,
        },
        r.get(5)?,
        r.get(7)?,
    ))
}

fn finish((mut a, caps, repos): (Agent, String, String)) -> Result<Agent> {
    a.capabilities = serde_json::from_str(&caps)?;
    a.repos = serde_json::from_str(&repos)?;
    Ok(a)
}

pub fn insert<'a>(tx: impl Into<Tx<'a>>, a: &Agent) -> Result<()> {
    let tx = tx.into();
    if get(tx, &a.name)?.is_some() {
        return Err(Invalid(format!(
            "agent {:?} already exists (remove it first with `gitmoot agent rm {}`)",
            a.name, a.name
        ))
        .into());
    }
    tx.execute(
        &format!("INSERT INTO agents({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        params![
            a.name,
            a.runtime,
            a.command,
            a.model,
            a.effort,
            serde_json::to_string(&a.capabilities)?,
            a.policy,
            serde_json::to_string(&a.repos)?,
            a.chat_autorespond,
            a.created_ms
        ],
    )?;
    Ok(())
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, name: &str) -> Result<Option<Agent>> {
    tx.into()
        .query_opt(
            &format!("SELECT {COLS} FROM agents WHERE name = ?1"),
            params![name],
            from_row,
        )?
        .map(finish)
        .transpose()
}

/// The agent, or a not-found error naming it.
pub fn require<'a>(tx: impl Into<Tx<'a>>, name: &str) -> Result<Agent> {
    get(tx, name)?.ok_or_else(|| {
        StoreError::Invalid(Invalid(format!(
            "agent {name:?} is not registered (see `gitmoot agent list`)"
        )))
    })
}

/// How many agents are registered.
pub fn count<'a>(tx: impl Into<Tx<'a>>) -> Result<u64> {
    let n: i64 = tx
        .into()
        .query_opt("SELECT COUNT(*) FROM agents", params![], |r| r.get(0))?
        .unwrap_or(0);
    Ok(n.max(0) as u64)
}

pub fn list<'a>(tx: impl Into<Tx<'a>>) -> Result<Vec<Agent>> {
    tx.into().query_map(
        &format!("SELECT {COLS} FROM agents ORDER BY name"),
        params![],
        |r| finish(from_row(r)?),
    )
}

/// Removes the agent; returns whether it existed.
pub fn remove<'a>(tx: impl Into<Tx<'a>>, name: &str) -> Result<bool> {
    Ok(tx
        .into()
        .execute("DELETE FROM agents WHERE name = ?1", params![name])?
        > 0)
}
