//! The job verbs on a write job's work: `job diff` prints git's diff of it against its base,
//! `job land` integrates it into the base branch, `job discard` throws it away after saying
//! what is lost. Each calls the one `crate::worktree` function the control room calls too.

use std::io::{IsTerminal, Write};

use serde_json::json;

use crate::Invalid;
use crate::cli::Ctx;
use crate::cli::output::Out;
use crate::worktree::{self, Strategy};

/// `job diff`: git's patch (or `--stat`), or the files with their hunks as JSON.
pub(super) fn diff(
    ctx: &Ctx,
    id: &str,
    (stat, since_review): (bool, bool),
    json: bool,
) -> anyhow::Result<()> {
    let here = ctx.config()?.daemon.labels.clone();
    let mut store = ctx.store()?;
    let job = crate::store::jobs::resolve_id(store.conn(), id)?;
    worktree::follow(&mut store, crate::clock::now_ms(), Some(&job))?;
    let mut out = Out::lines();
    if json {
        return out.json(&worktree::job_diff(&store, &here, id, since_review)?);
    }
    let text = worktree::job_diff_text(&store, &here, id, stat, since_review)?;
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// `job land`: the job's work on its base branch, or a refusal that changed nothing.
pub(super) fn land(
    ctx: &Ctx,
    id: &str,
    strategy: Strategy,
    message: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    let config = ctx.config()?;
    let mut store = ctx.store()?;
    let env = crate::chat::live_env(&config.orchestrate);
    let l = worktree::land(&mut store, env, &config, id, strategy, message)?;
    for n in &l.notes {
        eprintln!("warning: after landing: {n}");
    }
    let mut out = Out::lines();
    if json {
        return out.json(&l);
    }
    writeln!(out, "{}", l.line())?;
    if !l.landed_first.files.is_empty() {
        writeln!(
            out,
            "note: {} landed first and also changed {}",
            if l.landed_first.jobs.is_empty() {
                "the base".to_string()
            } else {
                l.landed_first.jobs.join(", ")
            },
            l.landed_first.files.join(", ")
        )?;
    }
    let branch = if l.branch_kept { "kept" } else { "deleted" };
    writeln!(out, "worktree removed; branch {} {branch}", l.branch)?;
    Ok(())
}

/// `job discard`: says what is lost, asks on a terminal (or needs `--force`), then removes
/// the worktree and branch.
pub(super) fn discard(ctx: &Ctx, id: &str, force: bool, json: bool) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    if !force {
        let what = worktree::loss(&store, id)?.to_string();
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return Err(Invalid(format!(
                "discarding {id} loses {what}; pass --force to discard it"
            ))
            .into());
        }
        eprint!("discarding {id} loses {what}. Discard? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("kept {id}'s work");
            return Ok(());
        }
    }
    let config = ctx.config()?;
    let env = crate::chat::live_env(&config.orchestrate);
    let lost = worktree::discard(&mut store, env, &config.daemon.labels, id)?;
    let mut out = Out::lines();
    if json {
        return out.json(&json!({"discarded": lost}));
    }
    writeln!(out, "discarded {}: {lost}", lost.job)?;
    Ok(())
}

/// `job rebase`: the job's commits replayed on its base branch's tip in its worktree, or a
/// refusal that changed nothing.
pub(super) fn rebase(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let env = crate::chat::live_env(&cfg.orchestrate);
    let r = worktree::rebase(&mut store, env, &cfg.daemon.labels, id)?;
    let mut out = Out::lines();
    if json {
        return out.json(&r);
    }
    writeln!(out, "{}", r.line())?;
    Ok(())
}

/// `job review`: the work sent back to its agent with the comments, as its next attempt.
pub(super) fn review(
    ctx: &Ctx,
    id: &str,
    comments: Option<String>,
    file: Option<std::path::PathBuf>,
    json: bool,
) -> anyhow::Result<()> {
    let comments = crate::cli::input::text(comments, file, "comments")?;
    let cfg = ctx.config()?;
    let mut store = ctx.store()?;
    let r = worktree::review(
        &mut store,
        crate::chat::live_env(&cfg.orchestrate),
        &cfg.daemon.labels,
        id,
        &comments,
    )?;
    let mut out = Out::lines();
    if json {
        return out.json(&r);
    }
    writeln!(
        out,
        "sent {} back for review round {} (attempt {}); it runs again in its worktree",
        r.job, r.round, r.attempt
    )?;
    Ok(())
}
