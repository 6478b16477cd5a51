//! `gitmoot job …`: submit, list, show, tree, events, and the engine verbs kill, cancel,
//! pending, answer and resume (thin wrappers over `engine`, shared with the control room).

use std::io::Write;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use super::Ctx;
use super::agent::parse;
use super::output::{age, print_json};
use super::page::{JsonStream, PageArgs};
use crate::clock::{SystemClock, now_ms};
use crate::domain::{Action, JobState};
use crate::engine::{self, ResumeVerb, SubmitRoot};
use crate::report::{job_json, tree_json, tree_text};
use crate::store::jobs::{self, Job, JobFilter, ListColumns};
use crate::store::{events, runs};

#[derive(Debug, Subcommand)]
pub enum JobCmd {
    /// Submit a root job; prints its id.
    Run(RunArgs),
    /// List jobs, newest first: one page (50) unless --limit N or --all.
    List {
        /// Only jobs in this state: queued | running | succeeded | failed | blocked | cancelled.
        #[arg(long, value_parser = parse::<JobState>)]
        state: Option<JobState>,
        /// Only jobs of this root's tree (a unique id prefix works).
        #[arg(long)]
        root: Option<String>,
        /// Only jobs of this agent.
        #[arg(long)]
        agent: Option<String>,
        /// Only jobs of this repo.
        #[arg(long)]
        repo: Option<String>,
        /// Only jobs older than this job id (the next page after it).
        #[arg(long, value_name = "ID")]
        before: Option<String>,
        #[command(flatten)]
        page: PageArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show one job.
    Show {
        /// The job id (a unique prefix works).
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show a root's whole tree.
    Tree {
        /// The root job (a unique id prefix works).
        root: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show the events of a job (or of a whole tree when given a root).
    Events {
        /// The job id (a unique prefix works).
        id: String,
        /// Keep printing new events until interrupted.
        #[arg(long)]
        follow: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print a job's activity (its steps as the agent works), like `kubectl logs`.
    Logs {
        /// The job (a unique id prefix works).
        id: String,
        /// Keep printing new steps until the job settles.
        #[arg(long, short = 'f')]
        follow: bool,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Stop a tree gracefully: queued legs cancelled, running ones finish (or are
    /// terminated with --force), then one finalize continuation, then the run is killed.
    Kill {
        /// The root job (a unique id prefix works).
        root: String,
        /// Terminate running jobs' processes instead of letting them finish their turn.
        #[arg(long)]
        force: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Cancel one queued or running job.
    Cancel {
        /// The job id (a unique prefix works).
        id: String,
    },
    /// Everything awaiting a human: ask-gate questions and failure escalations.
    Pending {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Answer an ask round: one "<qid>: text" a line.
    Answer {
        /// The job waiting for a human (a unique id prefix works).
        job: String,
        /// The answers, one "<question-id>: text" a line.
        text: String,
    },
    /// Resume a failure escalation: retry|continue|abort [INSTRUCTIONS].
    Resume {
        /// The job waiting for a human (a unique id prefix works).
        job: String,
        /// retry | continue | abort.
        verb: String,
        /// Optional instructions for the retried or continuing agent.
        #[arg(trailing_var_arg = true)]
        instructions: Vec<String>,
    },
    /// Start a session review job, done in your own session rather than by the daemon;
    /// prints its id. Close it with `job close`.
    Open {
        /// The kind of session job (only `review`).
        #[arg(long = "type", value_parser = ["review"])]
        kind: String,
        #[command(flatten)]
        session: SessionArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Add a progress note to an open session job.
    Note {
        /// The open session job (a unique id prefix works).
        id: String,
        /// A note to add to the open session job.
        text: String,
    },
    /// Settle an open session job with its verdict.
    Close {
        /// The open session job (a unique id prefix works).
        id: String,
        #[command(flatten)]
        verdict: VerdictArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Record a whole session review at once (open and close); prints its id.
    Record {
        #[command(flatten)]
        session: SessionArgs,
        #[command(flatten)]
        verdict: VerdictArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Who and what a session review is about.
#[derive(Debug, Args)]
pub struct SessionArgs {
    /// The reviewer, as you name it (not checked against registered agents).
    #[arg(long, default_value = "session")]
    pub agent: String,
    /// The repo the reviewed change belongs to.
    #[arg(long)]
    pub repo: Option<String>,
    /// The pull request number the review is about.
    #[arg(long)]
    pub pr: Option<u64>,
    /// The commit the review looked at.
    #[arg(long)]
    pub head_sha: Option<String>,
    /// The workflow that asked for the review.
    #[arg(long)]
    pub workflow: Option<String>,
    /// What was reviewed (defaults to a line naming the PR, head and workflow).
    pub prompt: Option<String>,
}

/// A session review's verdict, checked by the result contract.
#[derive(Debug, Args)]
pub struct VerdictArgs {
    /// approved | changes_requested | blocked | failed | skipped
    #[arg(long)]
    pub decision: String,
    /// One line saying what the verdict rests on.
    #[arg(long)]
    pub summary: String,
    /// P0..P3; required with changes_requested (the highest-severity finding).
    #[arg(long)]
    pub severity: Option<String>,
    /// A finding (repeatable).
    #[arg(long = "finding")]
    pub findings: Vec<String>,
    /// A test or command that was run (repeatable).
    #[arg(long = "test")]
    pub tests: Vec<String>,
    /// executed | static_only (default static_only).
    #[arg(long)]
    pub evidence: Option<String>,
}

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
    fn open(self) -> engine::session::SessionOpen {
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

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The registered agent that runs the root job.
    #[arg(long)]
    pub agent: String,
    /// What the job does: ask | review | implement.
    #[arg(long, value_parser = parse::<Action>, default_value = "ask")]
    pub action: Action,
    /// The repo (registered checkout) the job works on.
    #[arg(long)]
    pub repo: Option<String>,
    /// Override the agent's model for this job.
    #[arg(long)]
    pub model: Option<String>,
    /// Kill the job after this long (e.g. 10m).
    #[arg(long, value_parser = |s: &str| crate::duration::parse_positive_ms(s).map_err(|e| e.0))]
    pub timeout: Option<i64>,
    /// Wait for the tree to settle and print the final result. SIGINT/SIGTERM cancel the
    /// tree (its running jobs are terminated); a second one kills them at once.
    #[arg(long)]
    pub wait: bool,
    /// Run only on a daemon that carries this host label (`daemon run --labels`); the
    /// tree's legs follow it.
    #[arg(long, value_name = "LABEL")]
    pub on: Option<String>,
    /// With --wait: on SIGINT/SIGTERM stop waiting and leave the tree to a daemon.
    #[arg(long, requires = "wait")]
    pub detach_on_interrupt: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The prompt; `-` reads it from stdin.
    pub prompt: Option<String>,
    /// Read the prompt from this file (`-` for stdin) instead of the command line.
    #[arg(long, value_name = "PATH")]
    pub prompt_file: Option<std::path::PathBuf>,
}

pub fn run(ctx: &Ctx, cmd: JobCmd) -> anyhow::Result<()> {
    match cmd {
        JobCmd::Run(a) => submit(ctx, a),
        JobCmd::List {
            state,
            root,
            agent,
            repo,
            before,
            page,
            json,
        } => {
            let store = ctx.store()?;
            let root = root
                .map(|r| jobs::resolve_id(store.conn(), &r))
                .transpose()?;
            let filter = JobFilter {
                state,
                root,
                agent,
                repo,
                limit: page.limit(),
                before,
            };
            let preflight = events::latest_preflight_by_job(store.conn())?;
            if json || page.jsonl {
                let mut out = JsonStream::stdout(page.jsonl);
                let unreadable = jobs::list_each(store.conn(), &filter, ListColumns::Json, |j| {
                    let mut v = job_json(&j);
                    if let Some(why) = preflight.get(&j.id) {
                        v["preflight_failed"] = json!(why);
                    }
                    out.row(&v)
                })?;
                out.finish()?;
                for u in &unreadable {
                    eprintln!("warning: skipped {u}");
                }
                return Ok(());
            }
            let now = now_ms();
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
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
            out.flush()?;
            for u in &unreadable {
                eprintln!("warning: skipped {u}");
            }
            if let (Some(n), Some(last)) = (filter.limit, last)
                && shown == n
            {
                eprintln!(
                    "(newest {n} shown; --before {last} for the next page, --all for every job)"
                );
            }
            Ok(())
        }
        JobCmd::Show { id, json } => {
            let store = ctx.store()?;
            let id = jobs::resolve_id(store.conn(), &id)?;
            let job = jobs::require(store.conn(), &id)?;
            let run_state = runs::require(store.conn(), &job.root_id)?.state;
            let marks = engine::checks::marks(&store.conn(), &job)?;
            if json {
                let p = crate::store::payloads::get(store.conn(), &job.id)?;
                let mut v = job_json(&job);
                v["run_state"] = json!(run_state);
                v["result_checks"] = p.result_checks.unwrap_or_else(|| json!([]));
                v["result_observation"] = p.result_observation.unwrap_or(Value::Null);
                v["resolution"] = json!(p.resolution);
                v["marks"] = json!(marks);
                super::logs::extend_show(&store.conn(), &mut v)?;
                return print_json(&v);
            }
            print_job(&job, &marks);
            println!("run:       {run_state}");
            for line in super::logs::show_lines(&store.conn(), &job.id)? {
                println!("{line}");
            }
            Ok(())
        }
        JobCmd::Tree { root, json } => {
            let store = ctx.store()?;
            let root = jobs::resolve_id(store.conn(), &root)?;
            let tree = tree_json(&store.conn(), &root)?;
            if json {
                return print_json(&tree);
            }
            let run = &tree["run"];
            println!(
                "{} [{}] {}",
                root,
                run["state"].as_str().unwrap_or(""),
                run["title"].as_str().unwrap_or("")
            );
            let mut text = String::new();
            tree_text(&tree["tree"], 0, &mut text);
            print!("{text}");
            Ok(())
        }
        JobCmd::Events { id, follow, json } => {
            let store = ctx.store()?;
            let id = jobs::resolve_id(store.conn(), &id)?;
            let mut cursor = 0;
            loop {
                let batch = events::for_job_or_root(store.conn(), &id, cursor)?;
                if let Some(last) = batch.last() {
                    cursor = last.id;
                }
                if json && !follow {
                    return print_json(&batch);
                }
                for e in &batch {
                    if json {
                        println!("{}", serde_json::to_string(e)?);
                    } else {
                        println!(
                            "{:>6} {} {:<32} {}",
                            e.id,
                            e.job_id.as_deref().unwrap_or("-"),
                            e.kind,
                            e.message
                        );
                    }
                }
                if !follow {
                    return Ok(());
                }
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        }
        JobCmd::Logs { id, follow, json } => super::logs::logs(ctx, &id, follow, json),
        JobCmd::Kill { root, force, json } => {
            let cfg = ctx.config()?;
            let mut store = ctx.store()?;
            let root = jobs::resolve_id(store.conn(), &root)?;
            let report = store.write(|tx| {
                engine::kill_root(tx, crate::chat::live_env(&cfg.orchestrate), &root, force)
            })?;
            if json {
                return print_json(&report);
            }
            println!(
                "killed {}: {} queued job(s) cancelled, {} running, run {}",
                report.root_id,
                report.cancelled.len(),
                report.running.len(),
                report.run_state
            );
            Ok(())
        }
        JobCmd::Open {
            kind: _,
            session,
            json,
        } => {
            let mut store = ctx.store()?;
            let id = store.write(|tx| engine::session::open(tx, &SystemClock, session.open()))?;
            print_id(&id, json)
        }
        JobCmd::Note { id, text } => {
            let mut store = ctx.store()?;
            let id = jobs::resolve_id(store.conn(), &id)?;
            store.write(|tx| engine::session::note(tx, &SystemClock, &id, &text))?;
            println!("noted on {id}");
            Ok(())
        }
        JobCmd::Close { id, verdict, json } => {
            let result = verdict.result()?;
            let cfg = ctx.config()?;
            let mut store = ctx.store()?;
            let id = jobs::resolve_id(store.conn(), &id)?;
            store.write(|tx| {
                engine::session::close(tx, crate::chat::live_env(&cfg.orchestrate), &id, result)
            })?;
            print_id(&id, json)
        }
        JobCmd::Record {
            session,
            verdict,
            json,
        } => {
            let result = verdict.result()?;
            let cfg = ctx.config()?;
            let mut store = ctx.store()?;
            let id = store.write(|tx| -> Result<String, engine::EngineError> {
                let id = engine::session::open(tx, &SystemClock, session.open())?;
                engine::session::close(tx, crate::chat::live_env(&cfg.orchestrate), &id, result)?;
                Ok(id)
            })?;
            print_id(&id, json)
        }
        JobCmd::Cancel { id } => {
            let cfg = ctx.config()?;
            let mut store = ctx.store()?;
            let id = jobs::resolve_id(store.conn(), &id)?;
            store
                .write(|tx| engine::cancel_job(tx, crate::chat::live_env(&cfg.orchestrate), &id))?;
            println!("cancelled {id}");
            Ok(())
        }
        JobCmd::Pending { json } => {
            let store = ctx.store()?;
            let items = engine::pending(&store.conn())?;
            if json {
                return print_json(&items);
            }
            let now = now_ms();
            for p in &items {
                println!(
                    "{:<36} {:<8} {:>4}  {}",
                    p.job_id,
                    p.kind.as_str(),
                    age(now, p.opened_at),
                    p.reason
                );
                for q in &p.questions {
                    let choices = if q.choices.is_empty() {
                        String::new()
                    } else {
                        format!(" (choices: {})", q.choices.join(", "))
                    };
                    println!("    {}: {}{choices}", q.id, q.prompt);
                }
            }
            Ok(())
        }
        JobCmd::Answer { job, text } => {
            let cfg = ctx.config()?;
            let mut store = ctx.store()?;
            let job = jobs::resolve_id(store.conn(), &job)?;
            let done = crate::chat::answer::answer_job_message(
                &mut store,
                crate::chat::live_env(&cfg.orchestrate),
                &job,
                &text,
            )?;
            match &done.continuation {
                Some(c) => println!("answered {job}; continuation {c} queued"),
                None => println!("answered {job}; the continuation waits for the remaining legs"),
            }
            if let Some((thread, m)) = &done.posted {
                println!("posted to thread {} as #{}", thread.slug, m.seq);
            }
            Ok(())
        }
        JobCmd::Resume {
            job,
            verb,
            instructions,
        } => {
            let verb: ResumeVerb = verb.parse().map_err(crate::Invalid::from)?;
            let cfg = ctx.config()?;
            let mut store = ctx.store()?;
            let job = jobs::resolve_id(store.conn(), &job)?;
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
            println!("resumed {job} with {}", verb.as_str());
            Ok(())
        }
    }
}

fn submit(ctx: &Ctx, a: RunArgs) -> anyhow::Result<()> {
    let prompt = super::input::text(a.prompt, a.prompt_file, "prompt")?;
    let mut store = ctx.store()?;
    if let Some(ag) = crate::store::agents::get(store.conn(), &a.agent)?
        && let Some(w) = crate::runtime::claude::root_bypass_warning(ag.runtime, ag.policy)
    {
        eprintln!("{w}");
    }
    let root = store.write(|tx| {
        engine::submit_root(
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
        )
    })?;
    if a.wait {
        drop(store);
        return super::daemon::wait_for_root(ctx, &root, a.json, a.detach_on_interrupt);
    }
    let no_daemon = crate::daemon::lock::holder(&ctx.home.daemon_lock_path()).is_none();
    let beat_since = crate::clock::now_ms() - ctx.config()?.daemon.lease.0;
    let unserved = match &a.on {
        Some(label) => !crate::store::daemons::unstopped(store.conn(), Some(beat_since))?
            .iter()
            .any(|d| d.labels.contains(label)),
        None => false,
    };
    if a.json {
        return print_json(&json!({ "id": root }));
    }
    println!("{root}");
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

fn print_id(id: &str, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&json!({ "id": id }));
    }
    println!("{id}");
    Ok(())
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    line.chars().take(60).collect()
}

fn print_job(j: &Job, marks: &[String]) {
    println!("id:        {}", j.id);
    println!("root:      {}", j.root_id);
    if let Some(p) = &j.parent_id {
        println!("parent:    {p}");
    }
    println!("kind:      {}", j.kind);
    println!("agent:     {} ({})", j.agent, j.action);
    println!("state:     {}", j.state);
    println!("attempt:   {}   depth: {}", j.attempt, j.depth);
    println!(
        "tokens:    {} in, {} out  (${:.4})",
        j.tokens_in, j.tokens_out, j.cost_usd
    );
    if let Some(r) = &j.result {
        println!("decision:  {}", r["decision"].as_str().unwrap_or("?"));
        println!("summary:   {}", r["summary"].as_str().unwrap_or(""));
    }
    for m in marks {
        println!("note:      {m}");
    }
    if let Some(e) = &j.error {
        println!("error:     {e}");
    }
    match (&j.continuation_id, &j.followup_reason) {
        (Some(c), _) => println!("followup:  {} → {c}", j.followup.as_str()),
        (None, Some(r)) => println!("followup:  {}: {r}", j.followup.as_str()),
        (None, None) if j.followup != jobs::FollowUp::None => {
            println!("followup:  {}", j.followup.as_str())
        }
        _ => {}
    }
    println!("prompt:\n{}", j.prompt);
}
