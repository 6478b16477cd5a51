//! The session-review verbs: `job open`, `note`, `close` and `record`, for a review done
//! in the operator's own session rather than by the daemon. Owns turning the flags into a
//! contract-checked verdict; the job's life is `engine::session`'s.

use std::io::Write;

use serde_json::{Value, json};

use super::{SessionArgs, VerdictArgs};
use crate::cli::Ctx;
use crate::cli::output::Out;
use crate::clock::SystemClock;
use crate::engine;
use crate::store::jobs;

impl VerdictArgs {
    /// The verdict as a contract-valid result; every contract error in one line.
    fn result(&self) -> Result<crate::contract::GitmootResult, crate::Invalid> {
        let mut r = serde_json::Map::new();
        r.insert("decision".into(), json!(self.decision));
        r.insert("summary".into(), json!(self.summary));
        if let Some(s) = &self.severity {
            r.insert("severity".into(), json!(s));
        }
        if let Some(e) = &self.evidence {
            r.insert("evidence".into(), json!(e));
        }
        r.insert("findings".into(), json!(self.findings));
        r.insert("tests_run".into(), json!(self.tests));
        let text = json!({ "gitmoot_result": Value::Object(r) }).to_string();
        Ok(crate::contract::parse(&text)?)
    }
}

impl SessionArgs {
    fn into_open(self) -> engine::session::SessionOpen {
        engine::session::SessionOpen {
            agent: self.agent,
            repo: self.repo,
            pr: self.pr,
            head_sha: self.head_sha,
            workflow: self.workflow,
            prompt: self.prompt,
        }
    }
}

/// `job open`: a session job started; prints its id.
pub(super) fn open(ctx: &Ctx, session: SessionArgs, json: bool) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let id = store.write(|tx| engine::session::open(tx, &SystemClock, session.into_open()))?;
    print_id(&id, json)
}

/// `job note`: a progress note on an open session job.
pub(super) fn note(ctx: &Ctx, id: &str, text: &str) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    store.write(|tx| engine::session::note(tx, &SystemClock, &id, text))?;
    writeln!(Out::lines(), "noted on {id}")?;
    Ok(())
}

/// `job close`: an open session job settled with its verdict.
pub(super) fn close(ctx: &Ctx, id: &str, verdict: &VerdictArgs, json: bool) -> anyhow::Result<()> {
    let result = verdict.result()?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    store.write(|tx| {
        engine::session::close(tx, crate::chat::live_env(&cfg.orchestrate), &id, result)
    })?;
    print_id(&id, json)
}

/// `job record`: a whole session review at once, opened and closed.
pub(super) fn record(
    ctx: &Ctx,
    session: SessionArgs,
    verdict: &VerdictArgs,
    json: bool,
) -> anyhow::Result<()> {
    let result = verdict.result()?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let id = store.write(|tx| -> Result<String, engine::EngineError> {
        let id = engine::session::open(tx, &SystemClock, session.into_open())?;
        engine::session::close(tx, crate::chat::live_env(&cfg.orchestrate), &id, result)?;
        Ok(id)
    })?;
    print_id(&id, json)
}

fn print_id(id: &str, json: bool) -> anyhow::Result<()> {
    let mut out = Out::lines();
    if json {
        return out.json(&json!({ "id": id }));
    }
    writeln!(out, "{id}")?;
    Ok(())
}
