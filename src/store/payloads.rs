//! The `job_payloads` table: what the engine recorded about a settled job's result besides
//! the result itself — the failed result checks and the `result_observation` of its
//! checkout — one row a job, as JSON documents.
//!
//! Rows only: which checks run and how claims are graded live in `crate::engine`.

use serde_json::Value;

use super::Result;
use super::tx::{Tx, params};
use crate::clock::Millis;

/// The recorded extras of one job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Payload {
    /// `[{id, explanation}]` of the checks the result failed.
    pub result_checks: Option<Value>,
    pub result_observation: Option<Value>,
    /// How the engine read the result when that differs from its decision
    /// (`approved_with_notes`).
    pub resolution: Option<String>,
}

pub fn get<'a>(tx: impl Into<Tx<'a>>, job_id: &str) -> Result<Payload> {
    let row = tx.into().query_opt(
        "SELECT result_checks, result_observation, resolution FROM job_payloads WHERE job_id = ?1",
        params![job_id],
        |r| {
            Ok((
                r.get::<Option<String>>(0)?,
                r.get::<Option<String>>(1)?,
                r.get::<Option<String>>(2)?,
            ))
        },
    )?;
    let parse = |t: Option<String>| t.and_then(|t| serde_json::from_str(&t).ok());
    Ok(row
        .map(|(c, o, resolution)| Payload {
            result_checks: parse(c),
            result_observation: parse(o),
            resolution,
        })
        .unwrap_or_default())
}

pub fn set_checks<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
    checks: &Value,
    now: Millis,
) -> Result<()> {
    set(tx, "result_checks", job_id, &checks.to_string(), now)
}

pub(crate) fn set_observation<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
    obs: &Value,
    now: Millis,
) -> Result<()> {
    set(tx, "result_observation", job_id, &obs.to_string(), now)
}

pub fn set_resolution<'a>(
    tx: impl Into<Tx<'a>>,
    job_id: &str,
    resolution: &str,
    now: Millis,
) -> Result<()> {
    set(tx, "resolution", job_id, resolution, now)
}

/// Writes one of the job's extras, making its row if it has none, the others kept.
fn set<'a>(
    tx: impl Into<Tx<'a>>,
    column: &'static str,
    job_id: &str,
    value: &str,
    now: Millis,
) -> Result<()> {
    tx.into().execute(
        &format!(
            "INSERT INTO job_payloads(job_id, {column}, updated_ms) VALUES (?1, ?2, ?3) \
             ON CONFLICT(job_id) DO UPDATE SET {column} = ?2, updated_ms = ?3"
        ),
        params![job_id, value, now],
    )?;
    Ok(())
}
