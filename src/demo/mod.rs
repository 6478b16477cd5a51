//! `gitmoot demo`: a fresh home with scripted agents and a realistic scene, then the control
//! room on it (or, `--headless`, the state at the first human gate printed as text).

pub mod agent;
pub mod coder;
pub mod scene;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::chat::threads;
use crate::chat::{ChatHooks, messages};
use crate::config::Config;
use crate::daemon::Daemon;
use crate::domain::{JobState, RunState};
use crate::engine::{self, ResumeVerb};
use crate::home::Home;
use crate::store::escalations::RoundKind;
use crate::store::{Store, jobs, runs};

use scene::Scene;

/// The promoted chat question; the scripted lead recognises it by `QUICK_MARK`, so the
/// prompt carries no script marker.
pub(crate) const QUICK_QUESTION: &str = "@scout where do the API rate limits live?";
pub(crate) const QUICK_MARK: &str = "where do the API rate limits live";

/// The soak tree's goal; the scripted lead recognises it by `SOAK_MARK`.
pub(crate) const SOAK_GOAL: &str = "Soak-test the release candidate on staging and canary";
pub(crate) const SOAK_MARK: &str = "Soak-test the release candidate";

#[derive(Debug, Clone)]
pub struct DemoOptions {
    pub headless: bool,
    /// With `headless`: answer the gate, retry the failed leg, run to the end.
    pub answer: bool,
    /// Agent think-time divisor; 0 makes the scripted agents instant.
    pub speed: f64,
    /// Use this (new) home instead of a temporary one.
    pub home: Option<std::path::PathBuf>,
    /// The CLI's verbs, for Tab on the control room's `:` line (the CLI builds them).
    pub completions: gitmoot_ui::CompletionTree,
}

const GATE_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs the demo; its narration (and, headless, the state) goes to `out`.
pub fn run(opts: DemoOptions, out: &mut dyn Write) -> anyhow::Result<()> {
    let home = match &opts.home {
        Some(p) => {
            let home = Home::resolve(Some(p))?;
            home.ensure()?;
            home
        }
        None => scene::fresh_home()?,
    };
    writeln!(
        out,
        "demo home: {} (kept; reopen with `gitmoot --home {} tui`)",
        home.root().display(),
        home.root().display()
    )?;
    let scene = scene::seed(&home, opts.speed)?;
    let director = {
        let scene = scene.clone();
        std::thread::spawn(move || scene::direct(&scene, GATE_TIMEOUT))
    };
    if !opts.headless {
        let room = crate::tui::TuiOptions {
            completions: opts.completions.clone(),
            ..crate::tui::TuiOptions::default()
        };
        let result = crate::tui::run(&home, room);
        let _ = director.join();
        return result;
    }
    let config = Config::load(&home.config_path())?;
    let daemon = Daemon::new(home.clone())
        .config(config.clone())
        .hooks(Arc::new(ChatHooks))
        .spawn()?;
    let outcome = headless(&scene, &config, opts.answer, out);
    director
        .join()
        .map_err(|_| anyhow::anyhow!("the demo director panicked"))??;
    daemon.shutdown();
    daemon.join()?;
    outcome
}

fn headless(
    scene: &Scene,
    config: &Config,
    answer: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut store = Store::open_home(&scene.home)?;
    wait_until(
        &store,
        |s| at_first_gate(s, scene),
        "the main tree to pause for a human",
    )?;
    writeln!(out, "\n== at the first human gate ==")?;
    write!(out, "{}", state_text(&store, scene)?)?;
    if !answer {
        writeln!(
            out,
            "\nanswer with: gitmoot demo --headless --answer (or open `gitmoot --home {} tui`)",
            scene.home.root().display()
        )?;
        return Ok(());
    }
    answer_everything(&mut store, config, out)?;
    wait_until(
        &store,
        |s| {
            [&scene.main_root, &scene.quick_root, &scene.soak_root]
                .iter()
                .map(|r| Ok(runs::require(s.conn(), r)?.state.is_terminal()))
                .collect::<anyhow::Result<Vec<bool>>>()
                .map(|v| v.into_iter().all(|x| x))
        },
        "every tree to finish",
    )?;
    review_and_land(&mut store, config, scene, out)?;
    writeln!(out, "\n== after the answers ==")?;
    write!(out, "{}", state_text(&store, scene)?)?;
    Ok(())
}

/// Answers each open ask round through its chat thread and retries each failed leg, the
/// way an operator would from the control room.
fn answer_everything(
    store: &mut Store,
    config: &Config,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + GATE_TIMEOUT;
    loop {
        let pending = engine::pending(&store.conn())?;
        let Some(item) = pending.into_iter().next() else {
            return Ok(());
        };
        match item.kind {
            RoundKind::Ask => {
                let text: Vec<String> = item
                    .questions
                    .iter()
                    .map(|q| {
                        format!(
                            "{}: {}",
                            q.id,
                            q.choices
                                .last()
                                .cloned()
                                .unwrap_or_else(|| "go ahead".into())
                        )
                    })
                    .collect();
                let text = text.join("\n");
                writeln!(out, "\n> answering {} in its thread: {text}", item.job_id)?;
                crate::chat::answer::answer_job_message(
                    store,
                    crate::chat::live_env(&config.orchestrate),
                    &item.job_id,
                    &text,
                )?;
            }
            RoundKind::Failure => {
                let why =
                    "the redis container is flaky here; use the local redis at localhost:6379";
                writeln!(out, "\n> retrying the failed leg of {}: {why}", item.job_id)?;
                store.write(|tx| {
                    engine::resume(
                        tx,
                        crate::chat::live_env(&config.orchestrate),
                        &item.job_id,
                        ResumeVerb::Retry,
                        Some(why),
                    )
                })?;
            }
        }
        if Instant::now() > deadline {
            anyhow::bail!("the demo could not resolve every human gate in time");
        }
    }
}

/// The coder's work sent back once with `coder::REVIEW`, then landed, through the same
/// functions as `job review` and `job land`.
fn review_and_land(
    store: &mut Store,
    config: &Config,
    scene: &Scene,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let env = crate::chat::live_env(&config.orchestrate);
    let job = &scene.code_root;
    writeln!(out, "\n> sending {job} back for review: {}", coder::REVIEW)?;
    crate::worktree::review(store, env, &config.daemon.labels, job, coder::REVIEW)?;
    wait_until(
        store,
        |s| Ok(runs::require(s.conn(), job)?.state.is_terminal()),
        "the review round to end",
    )?;
    let landed = crate::worktree::land(
        store,
        env,
        config,
        job,
        crate::worktree::Strategy::Auto,
        None,
    )?;
    writeln!(out, "> {}", landed.line())?;
    Ok(())
}

fn wait_until(
    store: &Store,
    mut done: impl FnMut(&Store) -> anyhow::Result<bool>,
    what: &str,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + GATE_TIMEOUT;
    while !done(store)? {
        if Instant::now() > deadline {
            anyhow::bail!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// The main tree waits for a human with nothing left to run, and the history trees ended.
fn at_first_gate(store: &Store, scene: &Scene) -> anyhow::Result<bool> {
    let conn = &store.conn();
    let main = runs::require(conn, &scene.main_root)?;
    let idle = jobs::by_root(conn, &scene.main_root)?
        .iter()
        .all(|j| !matches!(j.state, JobState::Queued | JobState::Running));
    let history_done = [&scene.quick_root, &scene.soak_root, &scene.code_root]
        .iter()
        .map(|r| Ok(runs::require(conn, r)?.state.is_terminal()))
        .collect::<anyhow::Result<Vec<bool>>>()?
        .into_iter()
        .all(|x| x);
    Ok(main.state == RunState::AwaitingHuman && idle && history_done)
}

/// Trees, pending gates and the planning thread as plain text.
pub(crate) fn state_text(store: &Store, scene: &Scene) -> anyhow::Result<String> {
    let conn = &store.conn();
    let mut out = String::new();
    for root in [
        &scene.main_root,
        &scene.quick_root,
        &scene.soak_root,
        &scene.code_root,
    ] {
        let tree = crate::report::tree_json(conn, root)?;
        out.push_str(&format!(
            "\n{} [{}] {}\n",
            root,
            tree["run"]["state"].as_str().unwrap_or(""),
            tree["run"]["title"].as_str().unwrap_or("")
        ));
        crate::report::tree_text(&tree["tree"], 0, &mut out);
    }
    let pending = engine::pending(conn)?;
    out.push_str(&format!("\npending human gates: {}\n", pending.len()));
    for p in &pending {
        match p.kind {
            RoundKind::Ask => {
                out.push_str(&format!(
                    "- ask on {} (thread {}):\n",
                    p.job_id,
                    p.thread.as_deref().unwrap_or("-")
                ));
                for q in &p.questions {
                    let choices = if q.choices.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", q.choices.join(" | "))
                    };
                    out.push_str(&format!("    {}: {}{}\n", q.id, q.prompt, choices));
                }
            }
            RoundKind::Failure => {
                out.push_str(&format!(
                    "- failure on {}: {}\n    resume: gitmoot job resume {} retry|continue|abort\n",
                    p.job_id, p.reason, p.job_id
                ));
            }
        }
    }
    let thread = threads::resolve(conn, scene::THREAD, Some(scene::REPO))?;
    out.push_str(&format!("\nthread {} — {}\n", thread.slug, thread.title));
    for m in messages::transcript(conn, &thread, None)? {
        let body = m.body.lines().next().unwrap_or("");
        out.push_str(&format!(
            "  #{} {} [{}] {}\n",
            m.seq,
            m.author_name,
            m.kind.as_str(),
            body
        ));
    }
    Ok(out)
}
