//! `job cancel|kill|retry|answer|land|discard --where QUERY [--dry-run]` (and `job retry
//! ID`, and every one of these verbs on one job with `--dry-run`): the jobs a query
//! selects, each through the function the control room's marked rows call too
//! (`engine::bulk::apply`, `chat::answer::answer_many`, `worktree::many::apply`). Prints
//! one line per job (what it did or would do, or why it was refused) and a total; a dry
//! run of one job says it in the same words as a selection of one.

use std::io::Write;

use serde_json::json;

use super::ManyArgs;
use crate::cli::Ctx;
use crate::cli::output::Out;
use crate::clock::{Clock, SystemClock};
use crate::domain::BulkVerb;
use crate::engine::EngineError;
use crate::engine::bulk::{self, Item, Query};
use crate::store::jobs;
use crate::worktree::Strategy;

/// The verb on every job the query of `many` selects.
pub(super) fn run(ctx: &Ctx, verb: BulkVerb, many: ManyArgs, json: bool) -> anyhow::Result<()> {
    let text = many.selection.unwrap_or_default();
    let query: Query = text.parse()?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let env = crate::chat::live_env(&cfg.orchestrate);
    let items = store.write(|tx| {
        let ids = bulk::select(tx, &query, SystemClock.now_ms())?;
        bulk::apply(tx, env, verb, &ids, many.dry_run)
    })?;
    report(verb, &items, many.dry_run, json)
}

/// `job answer --where QUERY --choice X`: every selected job answered with the one choice.
pub(super) fn answer(
    ctx: &Ctx,
    choice: Option<&str>,
    many: ManyArgs,
    json: bool,
) -> anyhow::Result<()> {
    let Some(choice) = choice else {
        return Err(crate::Invalid(
            "job answer --where needs --choice CHOICE, the answer every selected job gets".into(),
        )
        .into());
    };
    let query: Query = many.selection.unwrap_or_default().parse()?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let env = crate::chat::live_env(&cfg.orchestrate);
    let items = store.write(|tx| {
        let ids = bulk::select(tx, &query, SystemClock.now_ms())?;
        crate::chat::answer::answer_many(tx, env, &ids, choice, many.dry_run)
    })?;
    report(BulkVerb::Answer, &items, many.dry_run, json)
}

/// `job land|discard --where QUERY`: every selected write job's work landed or discarded.
pub(super) fn work(
    ctx: &Ctx,
    verb: (BulkVerb, Strategy),
    many: ManyArgs,
    json: bool,
) -> anyhow::Result<()> {
    let query: Query = many.selection.unwrap_or_default().parse()?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let env = crate::chat::live_env(&cfg.orchestrate);
    let now = SystemClock.now_ms();
    let ids = bulk::select(&store.conn(), &query, now)?;
    let items = crate::worktree::many::apply(&mut store, env, &cfg, verb, &ids, many.dry_run)?;
    report(verb.0, &items, many.dry_run, json)
}

/// The verb on one job (`job retry ID`, and `job cancel|kill|retry ID --dry-run`, where
/// `force` is kill's), reported like a selection of one: a dry run says it as `--where …
/// --dry-run` does, the verb done in a savepoint that is then rolled back.
pub(super) fn one(
    ctx: &Ctx,
    verb: BulkVerb,
    id: &str,
    (force, dry_run): (bool, bool),
    json: bool,
) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    let env = crate::chat::live_env(&cfg.orchestrate);
    let ids = [id];
    let items = store.write(|tx| match verb {
        BulkVerb::Kill => bulk::each(tx, verb, &ids, dry_run, EngineError::is_invalid, |id| {
            bulk::kill(tx, env, id, force)
        }),
        _ => bulk::apply(tx, env, verb, &ids, dry_run),
    })?;
    alone(verb, &items, dry_run, json)
}

/// `job land|discard JOB --dry-run`: what the verb would do to the one job, said as the
/// `--where` dry run says it (`worktree::many::preview`); nothing moves.
pub(super) fn preview_work(
    ctx: &Ctx,
    verb: (BulkVerb, Strategy),
    id: &str,
    message: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    let what = crate::worktree::many::preview(&store, &cfg, verb, &id, message)?;
    report(verb.0, &[Item::done(&id, what)], true, json)
}

/// `job answer JOB TEXT --dry-run`: the answer given and rolled back, said as the `--where`
/// dry run says it.
pub(super) fn preview_answer(ctx: &Ctx, id: &str, text: &str) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    let env = crate::chat::live_env(&cfg.orchestrate);
    let items = store.write(|tx| crate::chat::answer::answer_preview(tx, env, &id, text))?;
    alone(BulkVerb::Answer, &items, true, false)
}

/// A selection of one reported: its refusal is the command's error (bad input, exit 2,
/// nothing changed), else the item and the total.
fn alone(verb: BulkVerb, items: &[Item], dry_run: bool, json: bool) -> anyhow::Result<()> {
    if let [
        Item {
            refused: Some(why), ..
        },
    ] = items
    {
        return Err(crate::Invalid(why.clone()).into());
    }
    report(verb, items, dry_run, json)
}

/// One line per job and a total; exit 1 when any was refused, after the rest proceeded.
fn report(verb: BulkVerb, items: &[Item], dry_run: bool, json: bool) -> anyhow::Result<()> {
    let mut out = Out::lines();
    let refused = items.iter().filter(|i| i.refused.is_some()).count();
    if json {
        out.json(&json!({ "verb": verb, "dry_run": dry_run, "items": items }))?;
    } else {
        for i in items {
            match (&i.refused, dry_run) {
                (Some(why), _) => writeln!(out, "refused {}: {why}", i.job_id)?,
                (None, true) => writeln!(out, "would {}", i.what)?,
                (None, false) => writeln!(out, "{}", i.what)?,
            }
        }
        let done = items.len() - refused;
        let tail = if dry_run {
            "dry run: nothing changed"
        } else {
            "done"
        };
        writeln!(
            out,
            "{verb}: {done} job(s), {refused} refused, of {} selected ({tail})",
            items.len()
        )?;
    }
    if refused > 0 && !dry_run {
        anyhow::bail!("{refused} of {} job(s) refused {verb}", items.len());
    }
    Ok(())
}
