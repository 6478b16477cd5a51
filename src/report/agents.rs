//! `agent list --live` and the Agents pane: one `AgentLive` row per registered agent, put
//! together from the store's grouped reads (`store::fleet`), the chat badges and the
//! registry. Read-only.

use std::collections::HashMap;

use crate::clock::Millis;
use crate::domain::{AgentLive, AgentState, JobState};
use crate::store::{StoreError, Tx, agents, chat, fleet};

/// A day in milliseconds: "today" starts at 00:00 UTC, as the status bar's spend does.
const DAY_MS: Millis = 86_400_000;

/// Every registered agent at `now`, by name.
pub fn live(tx: &Tx<'_>, now: Millis) -> Result<Vec<AgentLive>, StoreError> {
    let running: HashMap<String, u32> = fleet::count_by_agent(tx, JobState::Running)?
        .into_iter()
        .collect();
    let mut waiting: HashMap<String, u32> = fleet::open_rounds_by_agent(tx)?.into_iter().collect();
    for (agent, n) in fleet::count_by_agent(tx, JobState::Interrupted)? {
        *waiting.entry(agent).or_default() += n;
    }
    let mut steps: HashMap<String, (String, String)> = HashMap::new();
    for (agent, job, summary) in fleet::running_steps(tx)? {
        // Newest first: the first step seen for an agent is its newest.
        steps.entry(agent).or_insert((job, summary));
    }
    let spend: HashMap<String, (u64, f64)> = fleet::spend_since(tx, now - now.rem_euclid(DAY_MS))?
        .into_iter()
        .map(|(a, t, u)| (a, (t, u)))
        .collect();
    let unread: HashMap<String, i64> = chat::unread_counts(tx, &chat::origin(tx)?)?
        .into_iter()
        .collect();
    let mut rows = Vec::new();
    for a in agents::list(tx)? {
        let n_running = running.get(&a.name).copied().unwrap_or(0);
        let n_waiting = waiting.get(&a.name).copied().unwrap_or(0);
        let state = match (n_running, n_waiting) {
            (r, _) if r > 0 => AgentState::Working,
            (_, w) if w > 0 => AgentState::Waiting,
            _ => AgentState::Idle,
        };
        let step = steps.remove(&a.name);
        let error = fleet::last_error(tx, &a.name)?;
        let (tokens, usd) = spend.get(&a.name).copied().unwrap_or_default();
        rows.push(AgentLive {
            runtime: a.runtime,
            model: a.model,
            policy: a.policy,
            state,
            running: n_running,
            waiting: n_waiting,
            now_job: step.as_ref().map(|s| s.0.clone()),
            now: step.map(|s| s.1),
            unread: unread.get(&a.name).copied().unwrap_or(0).max(0) as u32,
            tokens_today: tokens,
            usd_today: usd,
            last_error_job: error.as_ref().map(|e| e.0.clone()),
            last_error: error.map(|e| e.1),
            name: a.name,
        });
    }
    Ok(rows)
}
