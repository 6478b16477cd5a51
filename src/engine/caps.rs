//! The daily spending caps: `[budget] daily_usd` over the whole fleet and `[agents.X]
//! daily_usd` per agent. Once the settled spend of the jobs created this UTC day reaches a
//! cap, the queued jobs it covers are not started (running ones finish): they wait, with
//! the reason `job show` prints, until the day turns or an operator raises the cap (the
//! daemon reads its config again on change).
//!
//! Decides from the store and the clock alone; the claim pass, `--until-idle` and `job
//! show` all ask here, so they never disagree on what is held.

use std::collections::HashMap;

use serde::Serialize;

use crate::clock::{DAY_MS, Millis};
use crate::config::Config;
use crate::store::Tx;
use crate::store::usage::{queued_by_agent, spent_since};

/// Why a queued job waits.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "cap", rename_all = "snake_case")]
pub enum Hold {
    Fleet {
        limit_usd: f64,
        spent_usd: f64,
    },
    Agent {
        agent: String,
        limit_usd: f64,
        spent_usd: f64,
    },
}

impl std::fmt::Display for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (whose, limit, spent) = match self {
            Hold::Fleet {
                limit_usd,
                spent_usd,
            } => ("the fleet's".to_string(), limit_usd, spent_usd),
            Hold::Agent {
                agent,
                limit_usd,
                spent_usd,
            } => (format!("agent {agent}'s"), limit_usd, spent_usd),
        };
        write!(
            f,
            "{whose} daily cap of ${limit:.2} is reached (${spent:.2} spent today, UTC); \
             it starts tomorrow or once the cap is raised"
        )
    }
}

/// The caps as one pass sees them: each spend is read once, at the first job that asks.
pub struct Caps<'c> {
    config: &'c Config,
    day: Millis,
    fleet: Option<Option<Hold>>,
    agents: HashMap<String, Option<Hold>>,
}

impl<'c> Caps<'c> {
    pub fn new(config: &'c Config, now: Millis) -> Self {
        Self {
            config,
            day: now - now.rem_euclid(DAY_MS),
            fleet: None,
            agents: HashMap::new(),
        }
    }

    /// Whether any cap is set (0 is none).
    pub fn any(&self) -> bool {
        self.config.budget.daily_usd > 0.0 || self.config.agents.values().any(|a| a.daily_usd > 0.0)
    }

    /// Why a queued job of `agent` must wait now, if it must.
    pub fn hold(&mut self, tx: &Tx<'_>, agent: &str) -> crate::store::Result<Option<Hold>> {
        if self.fleet.is_none() {
            let limit = self.config.budget.daily_usd;
            self.fleet = Some(if limit > 0.0 {
                let spent = spent_since(tx, None, self.day)?;
                (spent >= limit).then_some(Hold::Fleet {
                    limit_usd: limit,
                    spent_usd: spent,
                })
            } else {
                None
            });
        }
        if let Some(Some(hold)) = &self.fleet {
            return Ok(Some(hold.clone()));
        }
        if !self.agents.contains_key(agent) {
            let limit = self.config.agents.get(agent).map_or(0.0, |a| a.daily_usd);
            let hold = if limit > 0.0 {
                let spent = spent_since(tx, Some(agent), self.day)?;
                (spent >= limit).then(|| Hold::Agent {
                    agent: agent.to_string(),
                    limit_usd: limit,
                    spent_usd: spent,
                })
            } else {
                None
            };
            self.agents.insert(agent.to_string(), hold);
        }
        Ok(self.agents[agent].clone())
    }

    /// How many queued jobs no cap holds: what `--until-idle` still waits for.
    pub fn queued_unheld(&mut self, tx: &Tx<'_>) -> crate::store::Result<u64> {
        let mut n = 0;
        for (agent, queued) in queued_by_agent(tx)? {
            if self.hold(tx, &agent)?.is_none() {
                n += queued;
            }
        }
        Ok(n)
    }
}

/// One set cap and today's spend against it, for `gitmoot usage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapToday {
    /// The agent it caps; None for the fleet's.
    pub agent: Option<String>,
    pub limit_usd: f64,
    pub spent_usd: f64,
    pub reached: bool,
}

/// "daily cap of agent scout: $1.00 of $1.00 spent today (UTC), reached: its queued jobs wait".
impl std::fmt::Display for CapToday {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scope = self
            .agent
            .as_deref()
            .map_or("the fleet".into(), |a| format!("agent {a}"));
        write!(
            f,
            "daily cap of {scope}: ${:.2} of ${:.2} spent today (UTC)",
            self.spent_usd, self.limit_usd
        )?;
        if self.reached {
            f.write_str(", reached: its queued jobs wait")?;
        }
        Ok(())
    }
}

/// Every cap that is set, the fleet's first, with today's (UTC) spend against it.
pub fn today(tx: &Tx<'_>, config: &Config, now: Millis) -> crate::store::Result<Vec<CapToday>> {
    let day = now - now.rem_euclid(DAY_MS);
    let fleet = (config.budget.daily_usd > 0.0).then_some((None, config.budget.daily_usd));
    let agents = config
        .agents
        .iter()
        .filter(|(_, a)| a.daily_usd > 0.0)
        .map(|(name, a)| (Some(name.clone()), a.daily_usd));
    fleet
        .into_iter()
        .chain(agents)
        .map(|(agent, limit_usd)| {
            let spent_usd = spent_since(tx, agent.as_deref(), day)?;
            Ok(CapToday {
                agent,
                limit_usd,
                spent_usd,
                reached: spent_usd >= limit_usd,
            })
        })
        .collect()
}
