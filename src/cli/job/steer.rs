//! The job verbs that steer work: `job run` submits a root (and with `--wait` waits for
//! it), `kill`, `cancel`, `answer` and `resume` act on a tree through `engine`, the same
//! calls the control room makes. Must not decide anything the engine decides.

use std::io::Write;

use serde_json::json;

use super::RunArgs;
use crate::cli::Ctx;
use crate::cli::output::Out;
use crate::clock::SystemClock;
use crate::engine::{self, ResumeVerb, SubmitRoot};
use crate::store::jobs;

/// `job run`: a root job submitted; its id alone on stdout, hints on stderr.
pub(super) fn submit(ctx: &Ctx, a: RunArgs) -> anyhow::Result<()> {
    let prompt = crate::cli::input::text(a.prompt, a.prompt_file, "prompt")?;
    let mut store = ctx.store()?;
    if let Some(ag) = crate::store::agents::get(store.conn(), &a.agent)?
        && let Some(w) = crate::runtime::claude::root_bypass_warning(ag.runtime, ag.policy)
    {
        eprintln!("{w}");
    }
    if let Some(base) = &a.base {
        crate::worktree::check_base(&ctx.config()?, a.repo.as_deref(), a.action, base)?;
    }
    let in_place = crate::worktree::edited_in_place(&ctx.config()?, a.repo.as_deref(), a.action);
    let root = store.write(|tx| {
        let id = engine::submit_root(
            tx,
            &SystemClock,
            SubmitRoot {
                agent: a.agent,
                action: a.action,
                prompt,
                repo: a.repo,
                model: a.model,
                timeout_ms: a.timeout,
                dispatched_by: "cli".into(),
                on_label: a.on.clone(),
            },
        )?;
        if let Some(base) = &a.base {
            let job = jobs::require(tx, &id)?;
            crate::worktree::request_base(tx, &job, base, job.created_ms)?;
        }
        Ok::<_, engine::EngineError>(id)
    })?;
    if let Some(dir) = &in_place {
        eprintln!("note: {}", in_place_says(dir));
    }
    if a.wait {
        drop(store);
        return crate::cli::daemon::wait_for_root(ctx, &root, a.json, a.detach_on_interrupt);
    }
    let no_daemon =
        crate::daemon::lock::holder(&crate::daemon::lock::path_for(&ctx.home)).is_none();
    let beat_since = crate::clock::now_ms() - ctx.config()?.daemon.lease.0;
    let unserved = match &a.on {
        Some(label) => !crate::store::daemons::unstopped(store.conn(), Some(beat_since))?
            .iter()
            .any(|d| d.labels.contains(label)),
        None => false,
    };
    let mut out = Out::lines();
    if a.json {
        return out.json(&json!({ "id": root }));
    }
    writeln!(out, "{root}")?;
    // The id stays alone on stdout for scripts; the hints go to stderr.
    if no_daemon {
        eprintln!(
            "hint: {root} is queued but no daemon is running; start one with `gitmoot daemon run` (or `gitmoot tui`)"
        );
    } else if let (true, Some(label)) = (unserved, &a.on) {
        eprintln!(
            "hint: {root} waits for a daemon labelled {label}; none is running (`gitmoot daemon run --labels {label}`)"
        );
    }
    Ok(())
}

/// An implement job on a folder that is not a git checkout, said at `job run` and in `job
/// show`: it works on the folder itself.
pub(super) fn in_place_says(dir: &std::path::Path) -> String {
    format!(
        "{} is not a git checkout, so the job edits it in place: no worktree or branch of its own, nothing to diff, land or discard",
        dir.display()
    )
}

/// `job kill`: a tree stopped gracefully (or at once with `force`).
pub(super) fn kill(ctx: &Ctx, root: &str, force: bool, json: bool) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let root = jobs::resolve_id(store.conn(), root)?;
    let report = store
        .write(|tx| engine::kill_root(tx, crate::chat::live_env(&cfg.orchestrate), &root, force))?;
    let mut out = Out::lines();
    if json {
        return out.json(&report);
    }
    writeln!(
        out,
        "killed {}: {} queued job(s) cancelled, {} running, run {}",
        report.root_id,
        report.cancelled.len(),
        report.running.len(),
        report.run_state
    )?;
    Ok(())
}

/// `job cancel`: one queued or running job.
pub(super) fn cancel(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    store.write(|tx| engine::cancel_job(tx, crate::chat::live_env(&cfg.orchestrate), &id))?;
    let mut out = Out::lines();
    if json {
        return out.json(&json!({ "cancelled": id }));
    }
    writeln!(out, "cancelled {id}")?;
    Ok(())
}

/// `job leave`: a stalled job left running; its stall leaves Attention.
pub(super) fn leave(ctx: &Ctx, id: &str) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    store.write(|tx| engine::stall::leave(tx, crate::chat::live_env(&cfg.orchestrate), &id))?;
    writeln!(
        Out::lines(),
        "left {id} running; it shows again if it stalls anew"
    )?;
    Ok(())
}

/// `job answer`: an ask round answered, and the answer posted to the job's thread.
pub(super) fn answer(ctx: &Ctx, job: &str, text: &str) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let job = jobs::resolve_id(store.conn(), job)?;
    let done = crate::chat::answer::answer_job_message(
        &mut store,
        crate::chat::live_env(&cfg.orchestrate),
        &job,
        text,
    )?;
    let mut out = Out::lines();
    match &done.continuation {
        Some(c) => writeln!(out, "answered {job}; continuation {c} queued")?,
        None => writeln!(
            out,
            "answered {job}; the continuation waits for the remaining legs"
        )?,
    }
    if let Some((thread, m)) = &done.posted {
        writeln!(out, "posted to thread {} as #{}", thread.slug, m.seq)?;
    }
    Ok(())
}

/// `job resume`: a failure escalation retried, continued or aborted.
pub(super) fn resume(
    ctx: &Ctx,
    job: &str,
    verb: &str,
    instructions: &[String],
) -> anyhow::Result<()> {
    let verb: ResumeVerb = verb.parse().map_err(crate::Invalid::from)?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let job = jobs::resolve_id(store.conn(), job)?;
    let text = instructions.join(" ");
    store.write(|tx| {
        engine::resume(
            tx,
            crate::chat::live_env(&cfg.orchestrate),
            &job,
            verb,
            Some(text.as_str()).filter(|t| !t.is_empty()),
        )
    })?;
    writeln!(Out::lines(), "resumed {job} with {}", verb.as_str())?;
    Ok(())
}
