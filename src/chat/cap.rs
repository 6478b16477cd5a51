//! A moot's hard message cap: the markers on its thread, the cap, the agent turns it counts
//! and the notice text. Reads and names only; posting the notice is an append (`messages`).

use crate::store::Tx;

use super::Result;
use crate::store::chat as rows;

pub(super) const MOOT_KEY: &str = "moot";
pub(super) const CAP_KEY: &str = "moot_message_cap";

/// The hard cap of a moot thread; `None` for ordinary threads.
pub fn cap(conn: &Tx<'_>, thread_id: &str) -> Result<Option<i64>> {
    if rows::meta_get(conn, thread_id, MOOT_KEY)?.as_deref() != Some("1") {
        return Ok(None);
    }
    Ok(rows::meta_get(conn, thread_id, CAP_KEY)?
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|c| *c > 0))
}

/// Agent-authored chat turns: what the cap counts (human, system and results are free).
pub(crate) fn agent_turns(conn: &Tx<'_>, thread_id: &str) -> Result<i64> {
    Ok(rows::count_agent_turns(conn, thread_id)?)
}

pub(crate) fn overrun_text(cap: i64) -> String {
    format!(
        "MOOT CAP REACHED — this moot hit its {cap}-message cap and is hard-stopped (no auto-extension). \
         Each seat: stop conversing and post your partial conclusions (what you know / are unsure of / \
         would ask next) via your gitmoot_result."
    )
}
