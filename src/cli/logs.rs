//! `gitmoot job logs JOB [--follow] [--json]`: a job's stored activity, oldest first, and
//! the activity fields of `job show --json`.
//!
//! Owns only printing; the records are written by the daemon (`daemon::live`) and read
//! through `store::activity`.

use crate::store::Tx;
use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use super::Ctx;
use super::output::Out;
use crate::store::activity::{self, Record};
use crate::store::jobs;

/// How often `--follow` looks for new records.
const FOLLOW_POLL: Duration = Duration::from_millis(200);
/// Records read per query.
const PAGE: usize = 500;

/// Prints the job's activity; with `follow`, keeps printing until the job settles.
pub fn logs(ctx: &Ctx, id: &str, follow: bool, as_json: bool) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let id = &jobs::resolve_id(store.conn(), id)?;
    let mut out = Out::lines();
    let mut next = 0;
    loop {
        // The state is read before the records: the settlement writes the job's last
        // records in its own transaction, so a settled state means nothing is missing.
        let settled = jobs::require(store.conn(), id)?.state.is_terminal();
        loop {
            let batch = activity::list(store.conn(), id, next, PAGE)?;
            for r in &batch {
                print_record(&mut out, r, as_json)?;
            }
            match batch.last() {
                Some(last) => next = last.seq + 1,
                None => break,
            }
            if batch.len() < PAGE {
                break;
            }
        }
        if !follow || settled {
            return Ok(());
        }
        std::thread::sleep(FOLLOW_POLL);
    }
}

/// One record a line, each reaching the reader at once (`--follow` streams them).
fn print_record(out: &mut Out, r: &Record, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        out.json_line(r)?;
    } else {
        writeln!(
            out,
            "{} UTC {:<11} {}",
            gitmoot_ui::view::utc_clock(r.at_ms),
            r.kind,
            r.summary
        )?;
    }
    Ok(())
}

/// Adds `activity_count`, `last_activity`, the cache-token figures and, while the job
/// runs, its live spend to a `job show --json` document.
pub(crate) fn extend_show(conn: &Tx<'_>, doc: &mut Value) -> anyhow::Result<()> {
    let id = doc["id"].as_str().unwrap_or_default().to_string();
    let info = activity::of_job(conn, &id)?.unwrap_or_default();
    let last = activity::last(conn, &id)?;
    doc["activity_count"] = json!(info.records);
    doc["last_activity"] = serde_json::to_value(last)?;
    doc["tokens"]["cache_read"] = json!(info.cache_read_tokens);
    doc["tokens"]["cache_creation"] = json!(info.cache_creation_tokens);
    doc["live"] = if info.running {
        json!({"tokens": info.live.tokens, "cost_usd": info.live.cost_usd})
    } else {
        Value::Null
    };
    Ok(())
}

/// The human `job show` lines for the same figures.
pub(crate) fn show_lines(conn: &Tx<'_>, id: &str) -> anyhow::Result<Vec<String>> {
    let mut lines = Vec::new();
    let Some(info) = activity::of_job(conn, id)? else {
        return Ok(lines);
    };
    if info.cache_read_tokens + info.cache_creation_tokens > 0 {
        lines.push(format!(
            "cache:     {} read, {} written (not counted as input)",
            info.cache_read_tokens, info.cache_creation_tokens
        ));
    }
    if info.running {
        lines.push(format!(
            "live:      {} tokens, ${:.4} so far",
            info.live.tokens, info.live.cost_usd
        ));
    }
    if info.records > 0 {
        lines.push(format!(
            "activity:  {} step(s){}, latest: {}",
            info.records,
            if info.truncated { " (capped)" } else { "" },
            info.last_summary.unwrap_or_default()
        ));
    }
    Ok(lines)
}
