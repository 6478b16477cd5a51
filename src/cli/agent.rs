//! `gitmoot agent add|list|show|rm`, and `agent list --live` over `report::agents`.

use std::io::Write;

use clap::{Args, Subcommand};

use super::Ctx;
use super::output::{Out, print_json};
use crate::clock::now_ms;
use crate::domain::{AutonomyPolicy, Capability, RuntimeKind};
use crate::registry;
use crate::store::agents::{self, Agent};

#[derive(Debug, Subcommand)]
pub enum AgentCmd {
    /// Register an agent.
    Add(AddArgs),
    /// List registered agents (with --live: what each is doing and spent today).
    List {
        /// Each agent's state (working on N jobs, waiting on a human, idle), its newest
        /// step, unread mentions, tokens and dollars today and its last error.
        #[arg(long)]
        live: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show one agent.
    Show {
        /// The agent's name.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove an agent.
    Rm {
        /// The agent's name.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The agent's name (letters, digits, - and _).
    pub name: String,
    /// claude | codex | kimi | shell.
    #[arg(long, value_parser = parse::<RuntimeKind>)]
    pub runtime: RuntimeKind,
    /// The command a shell agent runs with `sh -c`.
    #[arg(long)]
    pub command: Option<String>,
    /// The model the runtime is asked for (runtime default if unset).
    #[arg(long)]
    pub model: Option<String>,
    /// Reasoning effort passed to the runtime (e.g. low, medium, high).
    #[arg(long)]
    pub effort: Option<String>,
    /// ask | review | implement (repeatable; default ask and review).
    #[arg(long = "capability", value_parser = parse::<Capability>)]
    pub capabilities: Vec<Capability>,
    /// auto | read-only | workspace-write | danger-full-access (default read-only).
    #[arg(long, value_parser = parse::<AutonomyPolicy>)]
    pub policy: Option<AutonomyPolicy>,
    /// Repos the agent may work on (repeatable; none = every repo).
    #[arg(long = "repo")]
    pub repos: Vec<String>,
    /// Let the daemon's auto-respond sweep answer this agent's mentions.
    #[arg(long)]
    pub chat_autorespond: bool,
}

/// clap value parser for our named enums, keeping their one-line error text.
pub fn parse<T: std::str::FromStr<Err = crate::domain::UnknownName>>(s: &str) -> Result<T, String> {
    s.parse::<T>().map_err(|e| e.0)
}

pub fn run(ctx: &Ctx, cmd: AgentCmd) -> anyhow::Result<()> {
    let mut out = Out::lines();
    match cmd {
        AgentCmd::Add(a) => add(ctx, a),
        AgentCmd::List { live: true, json } => live(ctx, json),
        AgentCmd::List { live: false, json } => {
            let store = ctx.store()?;
            let all = agents::list(store.conn())?;
            if json {
                return print_json(&all);
            }
            if all.is_empty() {
                writeln!(
                    out,
                    "no agents registered (add one with `gitmoot agent add NAME --runtime ...`)"
                )?;
            }
            let rows: Vec<Vec<String>> = all
                .iter()
                .map(|a| {
                    vec![
                        a.name.clone(),
                        a.runtime.to_string(),
                        caps(&a.capabilities),
                        policy_label(a),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                write!(
                    out,
                    "{}",
                    super::output::table(&["NAME", "RUNTIME", "CAPABILITIES", "POLICY"], &rows)
                )?;
            }
            Ok(())
        }
        AgentCmd::Show { name, json } => {
            let store = ctx.store()?;
            let a = agents::require(store.conn(), &name)?;
            if json {
                return print_json(&a);
            }
            writeln!(out, "name:         {}", a.name)?;
            writeln!(out, "runtime:      {}", a.runtime)?;
            if let Some(c) = &a.command {
                writeln!(out, "command:      {c}")?;
            }
            writeln!(
                out,
                "model:        {}",
                a.model.as_deref().unwrap_or("(runtime default)")
            )?;
            writeln!(
                out,
                "effort:       {}",
                a.effort.as_deref().unwrap_or("(runtime default)")
            )?;
            writeln!(out, "capabilities: {}", caps(&a.capabilities))?;
            writeln!(out, "policy:       {}", policy_label(&a))?;
            writeln!(
                out,
                "repos:        {}",
                if a.repos.is_empty() {
                    "(every repo)".into()
                } else {
                    a.repos.join(", ")
                }
            )?;
            writeln!(out, "autorespond:  {}", a.chat_autorespond)?;
            Ok(())
        }
        AgentCmd::Rm { name } => {
            let mut store = ctx.store()?;
            let removed = store.write(|tx| agents::remove(tx, &name))?;
            if !removed {
                return Err(crate::Invalid(format!("agent {name:?} is not registered")).into());
            }
            writeln!(out, "removed agent {name}")?;
            Ok(())
        }
    }
}

/// Whether nothing enforces the agent's policy: every runtime is confined by the kernel
/// where it has Landlock; without it claude and codex still get the policy as their own
/// sandbox flag, while kimi (no permission switch) and a shell command get nothing.
fn policy_is_advisory(runtime: RuntimeKind, policy: AutonomyPolicy) -> bool {
    crate::runtime::sandbox::advisory(policy)
        && matches!(runtime, RuntimeKind::Kimi | RuntimeKind::Shell)
}

/// The policy as listed: `read-only (advisory)` where nothing enforces it.
fn policy_label(a: &Agent) -> String {
    if policy_is_advisory(a.runtime, a.policy) {
        format!("{} (advisory)", a.policy)
    } else {
        a.policy.to_string()
    }
}

fn caps(c: &[Capability]) -> String {
    c.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(",")
}

fn add(ctx: &Ctx, a: AddArgs) -> anyhow::Result<()> {
    let mut capabilities = if a.capabilities.is_empty() {
        registry::DEFAULT_CAPABILITIES.to_vec()
    } else {
        a.capabilities
    };
    capabilities.sort();
    capabilities.dedup();
    let agent = Agent {
        name: a.name,
        runtime: a.runtime,
        command: a.command,
        model: a.model,
        effort: a.effort,
        capabilities,
        policy: a.policy.unwrap_or(registry::DEFAULT_POLICY),
        repos: a.repos,
        chat_autorespond: a.chat_autorespond,
        created_ms: now_ms(),
    };
    // Validate before touching the store so bad input creates nothing, not even a home.
    registry::validate(&agent)?;
    let mut store = ctx.store()?;
    store.write(|tx| agents::insert(tx, &agent))?;
    if policy_is_advisory(agent.runtime, agent.policy) {
        eprintln!(
            "warning: {} is advisory for {} agents here: this kernel has no Landlock, so nothing stops {} from writing (claude and codex enforce it in their own sandboxes)",
            agent.policy, agent.runtime, agent.name
        );
    }
    writeln!(
        Out::lines(),
        "registered agent {} ({})",
        agent.name,
        agent.runtime
    )?;
    if let Some(w) = crate::runtime::claude::root_bypass_warning(agent.runtime, agent.policy) {
        eprintln!("{w}");
    }
    if let Some(program) = missing_program(&agent) {
        eprintln!(
            "warning: `{program}` is not on PATH; {}'s jobs will fail until it is installed",
            agent.name
        );
    }
    Ok(())
}

/// The program a CLI-runtime agent runs, when it cannot be found on PATH (a preflight
/// warning: the agent is still registered, as the binary may be installed later).
fn missing_program(agent: &Agent) -> Option<String> {
    let program = match (&agent.command, agent.runtime) {
        (Some(c), _) => plain_program(c)?.to_string(),
        (None, RuntimeKind::Shell) => return None,
        (None, r) => r.to_string(),
    };
    if program.contains('/') {
        return (!std::path::Path::new(&program).exists()).then_some(program);
    }
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path).any(|d| d.join(&program).is_file());
    (!found).then_some(program)
}

/// Shell words that are not programs on PATH: keywords and the builtins with no binary.
const SHELL_WORDS: &[&str] = &[
    "!", "{", "}", "[[", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "select", "then", "time", "until", "while", ".", "alias", "builtin", "cd",
    "command", "declare", "eval", "exec", "exit", "export", "let", "local", "read", "readonly",
    "return", "set", "shift", "source", "trap", "typeset", "ulimit", "umask", "unset", "wait",
];

/// The first word of `command` when it is a plain program invocation; `None` for anything
/// the shell reads first (a keyword, a builtin, an assignment, a subshell or group, an
/// expansion or quoting), whose program cannot be known without running it: the check
/// must never warn about a command that runs fine.
fn plain_program(command: &str) -> Option<&str> {
    let first = command.split_whitespace().next()?;
    let shell = |c: char| "=$`'\"\\(){};&|<>*?[~#".contains(c);
    (!SHELL_WORDS.contains(&first) && !first.contains(shell)).then_some(first)
}

/// `agent list --live`: one row per agent, as the Agents pane shows it.
fn live(ctx: &Ctx, json: bool) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let rows = store.read(|tx| crate::report::agents::live(tx, now_ms()))?;
    if json {
        return print_json(&rows);
    }
    let mut out = Out::lines();
    if rows.is_empty() {
        writeln!(out, "no agents registered")?;
        return Ok(());
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|a| {
            let state = match a.state {
                crate::domain::AgentState::Working => format!("working on {}", a.running),
                crate::domain::AgentState::Waiting => format!("waiting on a human ({})", a.waiting),
                crate::domain::AgentState::Idle => "idle".into(),
            };
            vec![
                a.name.clone(),
                a.runtime.to_string(),
                a.model.clone().unwrap_or_else(|| "-".into()),
                a.policy.to_string(),
                state,
                short(a.now.as_deref()),
                a.unread.to_string(),
                format!("{} ${:.2}", a.tokens_today, a.usd_today),
                short(a.last_error.as_deref()),
            ]
        })
        .collect();
    let heads = [
        "NAME",
        "RUNTIME",
        "MODEL",
        "POLICY",
        "STATE",
        "NOW",
        "UNREAD",
        "TODAY",
        "LAST ERROR",
    ];
    write!(out, "{}", super::output::table(&heads, &table))?;
    Ok(())
}

/// A table cell of free text: its first line, cut to a width a terminal row can hold.
fn short(text: Option<&str>) -> String {
    let line = text.and_then(|t| t.lines().next()).unwrap_or_default();
    match line.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}
