//! The job verbs that only read: `job list`, `show`, `tree`, `events` and `pending`, as
//! text or JSON through the CLI's one writer. Must not write to the store.

use std::io::Write;

use serde_json::{Value, json};

use super::ListArgs;
use crate::cli::Ctx;
use crate::cli::output::{Out, age};
use crate::cli::page::JsonStream;
use crate::clock::now_ms;
use crate::engine;
use crate::report::{job_json, tree_json, tree_text};
use crate::store::jobs::{self, Job, JobFilter, ListColumns, Unreadable};
use crate::store::{events, runs};

/// `job list`: newest first, one page unless told otherwise, streamed row by row.
pub(super) fn list(ctx: &Ctx, a: ListArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let root = a
        .root
        .map(|r| jobs::resolve_id(store.conn(), &r))
        .transpose()?;
    let filter = JobFilter {
        state: a.state,
        root,
        agent: a.agent,
        repo: a.repo,
        limit: a.page.limit(),
        before: a.before,
    };
    let preflight = events::latest_preflight_by_job(store.conn())?;
    if a.json || a.page.jsonl {
        let mut out = JsonStream::stdout(a.page.jsonl);
        let unreadable = jobs::list_each(store.conn(), &filter, ListColumns::Json, |j| {
            let mut v = job_json(&j);
            if let Some(why) = preflight.get(&j.id) {
                v["preflight_failed"] = json!(why);
            }
            out.row(&v)
        })?;
        out.finish()?;
        warn_unreadable(&unreadable);
        return Ok(());
    }
    let now = now_ms();
    let mut out = Out::block();
    let mut shown = 0;
    let mut last = None;
    let unreadable = jobs::list_each(store.conn(), &filter, ListColumns::Table, |j| {
        // The coordinator of an unroutable set ends succeeded; only this says why
        // nothing was dispatched.
        let why = preflight
            .get(&j.id)
            .map(|r| format!("  PREFLIGHT_FAILED: {}", r.lines().next().unwrap_or("")))
            .unwrap_or_default();
        if shown == 0 {
            writeln!(
                out,
                "{:<36} {:<10} {:<14} {:<9} {:>4}  PROMPT",
                "ID", "STATE", "AGENT", "ACTION", "AGE"
            )?;
        }
        writeln!(
            out,
            "{:<36} {:<10} {:<14} {:<9} {:>4}  {}{why}",
            j.id,
            j.state,
            j.agent,
            j.action,
            age(now, j.created_ms),
            first_line(&j.prompt)
        )?;
        shown += 1;
        last = Some(j.id);
        Ok::<_, anyhow::Error>(())
    })?;
    if shown == 0 {
        say_none(&mut out, "no jobs")?;
    }
    out.finish()?;
    warn_unreadable(&unreadable);
    if let (Some(n), Some(last)) = (filter.limit, last)
        && shown == n
    {
        eprintln!("(newest {n} shown; --before {last} for the next page, --all for every job)");
    }
    Ok(())
}

fn warn_unreadable(unreadable: &[Unreadable]) {
    for u in unreadable {
        eprintln!("warning: skipped {u}");
    }
}

/// `job show`: one job, its run's state and its activity figures.
pub(super) fn show(ctx: &Ctx, id: &str, json: bool) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    let job = jobs::require(store.conn(), &id)?;
    let run_state = runs::require(store.conn(), &job.root_id)?.state;
    let marks = engine::checks::marks(&store.conn(), &job)?;
    let waiting = match job.state {
        crate::domain::JobState::Queued => {
            engine::caps::Caps::new(&ctx.config()?, now_ms()).hold(&store.conn(), &job.agent)?
        }
        _ => None,
    };
    let in_place =
        crate::worktree::edited_in_place(&ctx.config()?, job.repo.as_deref(), job.action);
    let mut out = Out::lines();
    if json {
        let p = crate::store::payloads::get(store.conn(), &job.id)?;
        let mut v = job_json(&job);
        v["run_state"] = json!(run_state);
        v["result_checks"] = p.result_checks.unwrap_or_else(|| json!([]));
        v["result_observation"] = p.result_observation.unwrap_or(Value::Null);
        v["resolution"] = json!(p.resolution);
        v["marks"] = json!(marks);
        v["edits_in_place"] = json!(in_place);
        v["waiting"] = json!(
            waiting
                .as_ref()
                .map(|h| json!({"reason": h.to_string(), "hold": h}))
        );
        crate::cli::logs::extend_show(&store.conn(), &mut v)?;
        return out.json(&v);
    }
    print_job(&mut out, &job, &marks)?;
    writeln!(out, "run:       {run_state}")?;
    if let Some(dir) = &in_place {
        writeln!(out, "in place:  {}", super::steer::in_place_says(dir))?;
    }
    if let Some(h) = &waiting {
        writeln!(out, "waiting:   {h}")?;
    }
    for line in crate::cli::logs::show_lines(&store.conn(), &job.id)? {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// `job tree`: a root's whole tree, indented.
pub(super) fn tree(ctx: &Ctx, root: &str, json: bool) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let root = jobs::resolve_id(store.conn(), root)?;
    let tree = tree_json(&store.conn(), &root)?;
    let mut out = Out::block();
    if json {
        out.json(&tree)?;
        return Ok(out.finish()?);
    }
    let run = &tree["run"];
    writeln!(
        out,
        "{} [{}] {}",
        root,
        run["state"].as_str().unwrap_or(""),
        run["title"].as_str().unwrap_or("")
    )?;
    let mut text = String::new();
    tree_text(&tree["tree"], 0, &mut text);
    out.write_all(text.as_bytes())?;
    Ok(out.finish()?)
}

/// `job events`: a job's (or a whole tree's) events; with `follow`, new ones as they come.
pub(super) fn events(ctx: &Ctx, id: &str, follow: bool, json: bool) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let id = jobs::resolve_id(store.conn(), id)?;
    let mut out = Out::lines();
    let mut cursor = 0;
    loop {
        let batch = events::for_job_or_root(store.conn(), &id, cursor)?;
        if let Some(last) = batch.last() {
            cursor = last.id;
        }
        if json && !follow {
            return out.json(&batch);
        }
        for e in &batch {
            if json {
                out.json_line(e)?;
            } else {
                writeln!(
                    out,
                    "{:>6} {} {:<32} {}",
                    e.id,
                    e.job_id.as_deref().unwrap_or("-"),
                    e.kind,
                    e.message
                )?;
            }
        }
        if !follow {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// `job pending`: everything awaiting a human, oldest first.
pub(super) fn pending(ctx: &Ctx, json: bool) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let items = engine::pending(&store.conn())?;
    // Open write jobs whose work meets another's or conflicts with their base wait for a
    // human too, measured from the base each branch followed.
    crate::worktree::follow(&mut store, now_ms(), None)?;
    let forecast = crate::worktree::forecast(&store)?;
    let mut out = Out::block();
    if json {
        let mut all: Vec<Value> = items.iter().map(|p| json!(p)).collect();
        all.extend(forecast.pairs.iter().map(|o| {
            json!({"job_id": o.jobs[1], "root_id": null, "kind": "overlap", "questions": [],
                "reason": o.message(), "opened_at": null, "thread": null, "forecast": o.kind,
                "jobs": o.jobs, "files": o.files, "hunks": o.hunks, "repo": o.repo})
        }));
        all.extend(forecast.base.iter().map(|c| {
            json!({"job_id": c.job, "root_id": null, "kind": "base_conflict", "questions": [],
                "reason": c.message(), "opened_at": null, "thread": null, "forecast": c.kind,
                "base": c.base, "tip": c.tip, "files": c.files, "hunks": c.hunks,
                "repo": c.repo})
        }));
        out.json(&all)?;
        return Ok(out.finish()?);
    }
    if items.is_empty() && forecast.pairs.is_empty() && forecast.base.is_empty() {
        say_none(&mut out, "nothing waits for you")?;
    }
    let now = now_ms();
    for p in &items {
        writeln!(
            out,
            "{:<36} {:<8} {:>4}  {}",
            p.job_id,
            p.kind.as_str(),
            age(now, p.opened_at),
            p.reason
        )?;
        for q in &p.questions {
            let choices = if q.choices.is_empty() {
                String::new()
            } else {
                format!(" (choices: {})", q.choices.join(", "))
            };
            writeln!(out, "    {}: {}{choices}", q.id, q.prompt)?;
        }
    }
    let forecasts = forecast
        .pairs
        .iter()
        .map(|o| (&o.jobs[1], o.kind, o.message()));
    let base = forecast.base.iter().map(|c| (&c.job, c.kind, c.message()));
    for (job, kind, said) in forecasts.chain(base) {
        writeln!(out, "{:<36} {:<9} {:>3}  {}", job, kind.as_str(), "-", said)?;
    }
    Ok(out.finish()?)
}

/// An empty listing says so to a person at a terminal; a script reading the pipe gets
/// nothing, as it would from `ls`.
fn say_none(out: &mut Out, what: &str) -> std::io::Result<()> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        writeln!(out, "{what}")?;
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    line.chars().take(60).collect()
}

fn print_job(out: &mut Out, j: &Job, marks: &[String]) -> std::io::Result<()> {
    writeln!(out, "id:        {}", j.id)?;
    writeln!(out, "root:      {}", j.root_id)?;
    if let Some(p) = &j.parent_id {
        writeln!(out, "parent:    {p}")?;
    }
    writeln!(out, "kind:      {}", j.kind)?;
    writeln!(out, "agent:     {} ({})", j.agent, j.action)?;
    writeln!(out, "state:     {}", j.state)?;
    writeln!(out, "attempt:   {}   depth: {}", j.attempt, j.depth)?;
    writeln!(
        out,
        "tokens:    {} in, {} out  (${:.4})",
        j.tokens_in, j.tokens_out, j.cost_usd
    )?;
    if let Some(r) = &j.result {
        writeln!(out, "decision:  {}", r["decision"].as_str().unwrap_or("?"))?;
        writeln!(out, "summary:   {}", r["summary"].as_str().unwrap_or(""))?;
        if let Some(findings) = r["findings"].as_array().filter(|f| !f.is_empty()) {
            writeln!(out, "findings:")?;
            for f in findings {
                for line in crate::report::findings::render(f).lines() {
                    writeln!(out, "  {line}")?;
                }
            }
        }
    }
    for m in marks {
        writeln!(out, "note:      {m}")?;
    }
    if let Some(e) = &j.error {
        writeln!(out, "error:     {e}")?;
    }
    match (&j.continuation_id, &j.followup_reason) {
        (Some(c), _) => writeln!(out, "followup:  {} → {c}", j.followup.as_str())?,
        (None, Some(r)) => writeln!(out, "followup:  {}: {r}", j.followup.as_str())?,
        (None, None) if j.followup != jobs::FollowUp::None => {
            writeln!(out, "followup:  {}", j.followup.as_str())?
        }
        _ => {}
    }
    writeln!(out, "prompt:\n{}", j.prompt)
}
