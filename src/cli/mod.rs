//! The command line: clap definitions (one file per command group), human and `--json`
//! output, and the mapping of errors to exit codes (2 usage/validation, 1 runtime).
//!
//! Every verb calls a library function that the control room calls too; nothing here
//! decides behaviour.

pub mod agent;
pub mod chat;
pub mod complete;
pub mod config;
pub mod daemon;
pub mod input;
pub(crate) mod interrupt;
pub mod job;
pub mod logs;
pub mod memory;
pub mod moot;
pub mod orchestrate;
pub mod output;
pub mod page;
pub mod result;
pub mod search;
pub mod store;
pub mod tui;
pub mod usage;
pub mod worktree;

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};

use crate::config::Config;
use crate::home::Home;
use crate::store::Store;

#[derive(Debug, Parser)]
#[command(
    name = "gitmoot",
    version,
    about = "Local-first orchestrator and control room for fleets of coding agents"
)]
pub struct Cli {
    /// The gitmoot home (default: $GITMOOT_HOME, else ~/.gitmoot).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// The store: postgres://… or sqlite:PATH (default: $GITMOOT_STORE, else config.toml's
    /// [store] url, else the home's gitmoot.db).
    #[arg(long, global = true, value_name = "URL")]
    pub store: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Register, list, show and remove agents.
    #[command(subcommand)]
    Agent(agent::AgentCmd),
    /// Submit, inspect, kill and resume jobs.
    #[command(subcommand)]
    Job(job::JobCmd),
    /// Validate an agent's output against the result contract.
    #[command(subcommand)]
    Result(result::ResultCmd),
    /// Show the effective configuration.
    #[command(subcommand)]
    Config(config::ConfigCmd),
    /// Run the worker pool or show its status.
    #[command(subcommand)]
    Daemon(daemon::DaemonCmd),
    /// Threads, messages, inboxes, promotion, answers and memory capture.
    #[command(subcommand)]
    Chat(chat::ChatCmd),
    /// Convene registered agents in a bounded brainstorm thread.
    Moot(moot::MootArgs),
    /// The built-in coordinator recipes: review-panel and verifier.
    #[command(subcommand)]
    Orchestrate(orchestrate::OrchestrateCmd),
    /// Inspect and confirm memory observations.
    #[command(subcommand)]
    Memory(memory::MemoryCmd),
    /// Write jobs' worktrees: list them, prune what landed or discarded ones left.
    #[command(subcommand)]
    Worktree(worktree::WorktreeCmd),
    /// Full-text search over prompts, results, activity and chat, best match first.
    Search(search::SearchArgs),
    /// What the fleet spent: tokens, dollars, jobs and wall time, grouped, with budgets.
    Usage(usage::UsageArgs),
    /// Move a home's data between stores (SQLite ⇄ PostgreSQL).
    #[command(subcommand)]
    Store(store::StoreCmd),
    /// Create the home (its folders and store) and say where it is.
    Init,
    /// The control room: watch and steer every tree from the keyboard.
    Tui(tui::TuiArgs),
    /// A scripted scene in a fresh home, then the control room on it.
    Demo {
        /// Run to the first human gate and print the state instead of opening the control room.
        #[arg(long)]
        headless: bool,
        /// With --headless: answer the gate, retry the failed leg and run to the end.
        #[arg(long, requires = "headless")]
        answer: bool,
        /// Divide the scripted agents' think time (0 = instant).
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
    },
    /// A scripted agent for the demo (run by the shell runtime).
    #[command(hide = true)]
    DemoAgent {
        /// The scripted role.
        #[arg(value_enum)]
        role: crate::demo::agent::Role,
    },
    /// Measure the SPEC's performance figures on this machine.
    Bench(crate::bench::BenchArgs),
    /// Print the shell script that completes gitmoot's verbs, flags, and the job ids,
    /// agents and threads of the home (source it: `source <(gitmoot completions bash)`).
    Completions {
        /// bash | zsh | fish | elvish | powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) of gitmoot or of one of its verbs: `gitmoot man job
    /// list | man -l -`.
    Man {
        /// The verb (`job`, `job list`); none for the whole command.
        command: Vec<String>,
    },
}

impl Command {
    /// Whether the command may create a home that is not there: `init`, and the verbs that
    /// register or enqueue something. Any other on a named home that does not exist is a
    /// typo until proven otherwise (`--home ~/.gitmot job list` must not make a database).
    fn may_create_home(&self) -> bool {
        use chat::ChatCmd;
        matches!(
            self,
            Command::Init
                | Command::Agent(agent::AgentCmd::Add(_))
                | Command::Job(
                    job::JobCmd::Run(_) | job::JobCmd::Open { .. } | job::JobCmd::Record { .. }
                )
                | Command::Chat(
                    ChatCmd::Create { .. }
                        | ChatCmd::Send(_)
                        | ChatCmd::Task { .. }
                        | ChatCmd::Remember { .. }
                )
                | Command::Moot(_)
                | Command::Orchestrate(_)
                | Command::Store(_)
        )
    }
}

/// Everything a command needs from its surroundings, opened lazily.
pub struct Ctx {
    pub home: Home,
    /// Whether `--home` was given explicitly (the demo uses a temporary home otherwise).
    pub home_flag: Option<PathBuf>,
    /// `Some(why)` when opening the store must not create the home: it was named (by
    /// `--home` or `GITMOOT_HOME`), it is not there, and the command only reads.
    missing_home: Option<String>,
}

impl Ctx {
    /// The context of a command that `may_create` the home (see `Command::may_create_home`).
    pub fn new(
        home_flag: Option<PathBuf>,
        store_flag: Option<String>,
        may_create: bool,
    ) -> anyhow::Result<Self> {
        let home = Home::resolve(home_flag.as_deref())?;
        let named =
            home_flag.is_some() || std::env::var_os("GITMOOT_HOME").is_some_and(|v| !v.is_empty());
        let url = match store_flag.or_else(|| {
            std::env::var("GITMOOT_STORE")
                .ok()
                .filter(|v| !v.is_empty())
        }) {
            Some(url) => Some(url),
            None => Config::store_url(&home.config_path())?,
        };
        // Checked before anything is opened or created, so a bad URL leaves no trace.
        if let Some(url) = &url {
            crate::store::Location::parse(url)?;
        }
        let missing_home =
            (named && !may_create && url.is_none() && !home.root().exists()).then(|| {
                format!(
                    "no gitmoot home at {} (create one with gitmoot init, or check --home)",
                    home.root().display()
                )
            });
        Ok(Self {
            home: home.with_store(url),
            home_flag,
            missing_home,
        })
    }

    /// Opens the store (creating the home, when the command may) and starts file logging.
    /// A land this host's CLI or control room left midway (killed) is finished or dropped
    /// first, so every command sees it recorded once or not done.
    pub fn store(&self) -> anyhow::Result<Store> {
        if let Some(why) = &self.missing_home {
            return Err(crate::Invalid(why.clone()).into());
        }
        let mut store = Store::open_home(&self.home)?;
        crate::logging::init(&self.home);
        if let Ok(config) = self.config() {
            let env = crate::chat::live_env(&config.orchestrate);
            for r in crate::worktree::resume_lands(&mut store, env, &config)? {
                eprintln!("note: {}", r.line());
            }
        }
        Ok(store)
    }

    pub fn config(&self) -> anyhow::Result<Config> {
        Ok(Config::load(&self.home.config_path())?)
    }
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let ctx = Ctx::new(cli.home, cli.store, cli.command.may_create_home())?;
    let location = crate::store::Location::of_home(&ctx.home).ok();
    run_in(ctx, cli.command).map_err(|e| match location {
        Some(location) => name_full_disk(&location, e),
        None => e,
    })
}

/// A store write refused for a full disk, said with the files that could not grow.
fn name_full_disk(location: &crate::store::Location, e: anyhow::Error) -> anyhow::Error {
    let store = e.downcast_ref::<crate::store::StoreError>().or_else(|| {
        match e.downcast_ref::<crate::engine::EngineError>() {
            Some(crate::engine::EngineError::Store(s)) => Some(s),
            _ => None,
        }
    });
    let db = match location {
        crate::store::Location::Sqlite(p) => Some(p.as_path()),
        crate::store::Location::Postgres(_) => None,
    };
    match store {
        Some(s) if s.is_disk_full(db) => anyhow::anyhow!(crate::store::full::message(location, s)),
        _ => e,
    }
}

fn run_in(ctx: Ctx, command: Command) -> anyhow::Result<()> {
    match command {
        Command::Init => {
            ctx.store()?;
            let mut out = output::Out::lines();
            std::io::Write::write_fmt(
                &mut out,
                format_args!("gitmoot home at {}\n", ctx.home.root().display()),
            )?;
            Ok(out.finish()?)
        }
        Command::Agent(cmd) => agent::run(&ctx, cmd),
        Command::Job(cmd) => job::run(&ctx, cmd),
        Command::Result(cmd) => result::run(&ctx, cmd),
        Command::Config(cmd) => config::run(&ctx, cmd),
        Command::Daemon(cmd) => daemon::run(&ctx, cmd),
        Command::Chat(cmd) => chat::run(&ctx, cmd),
        Command::Moot(a) => moot::run(&ctx, a),
        Command::Orchestrate(cmd) => orchestrate::run(&ctx, cmd),
        Command::Memory(cmd) => memory::run(&ctx, cmd),
        Command::Worktree(cmd) => worktree::run(&ctx, cmd),
        Command::Store(cmd) => store::run(&ctx, cmd),
        Command::Usage(a) => usage::run(&ctx, a),
        Command::Search(a) => search::run(&ctx, a),
        Command::Tui(a) => tui::run(&ctx, a),
        Command::Demo {
            headless,
            answer,
            speed,
        } => crate::demo::run(
            crate::demo::DemoOptions {
                headless,
                answer,
                speed,
                home: ctx.home_flag.clone(),
                completions: complete::completion_tree(),
            },
            &mut output::Out::lines(),
        ),
        Command::DemoAgent { role } => {
            // Its stdout is the result the daemon parses, not a terminal's text.
            crate::demo::agent::run(role, &mut output::Out::lines().exact())
        }
        Command::Bench(a) => crate::bench::run(a, &mut output::Out::lines()),
        Command::Completions { shell } => {
            let mut out = output::Out::block().exact();
            complete::registration(&shell.to_string(), &mut out)?;
            Ok(out.finish()?)
        }
        Command::Man { command } => {
            let mut out = output::Out::block().exact();
            complete::man_page(&command, &mut out)?;
            Ok(out.finish()?)
        }
    }
}

/// clap's error as one `error:` line: what is wrong with the argument names it lists and
/// its "did you mean" tip, without the usage block (`--help` has that).
pub fn clap_error_line(text: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.to_string());
        }
    }
    let mut out = parts.join(" ");
    if out.is_empty() {
        out = "error: invalid arguments".into();
    }
    format!("{out} (see --help)")
}

/// The top-level command a mistyped `word` most likely meant: clap's own tip misses
/// transposed letters in short names (`jbo` for `job`), so one edit or swap away counts.
pub fn nearest_subcommand(word: &str) -> Option<String> {
    Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .map(|n| (edit_distance(word, &n), n))
        .filter(|(d, n)| *d <= 1 || (*d == 2 && n.len() >= 5))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// neighbours each cost one.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Whether `e` is bad input. A transparent variant hands on only its inner error's source,
/// so an `Invalid` wrapped in one is not in the chain: each error enum answers for itself.
fn is_invalid(e: &(dyn std::error::Error + 'static)) -> bool {
    use crate::{chat, config, daemon, engine, store, tui};
    e.is::<crate::Invalid>()
        || e.is::<gitmoot_ui::ThemeError>()
        || e.is::<gitmoot_ui::KeymapError>()
        || e.downcast_ref().is_some_and(store::StoreError::is_invalid)
        || e.downcast_ref()
            .is_some_and(store::copy::CopyError::is_invalid)
        || e.downcast_ref()
            .is_some_and(engine::EngineError::is_invalid)
        || e.downcast_ref().is_some_and(chat::ChatError::is_invalid)
        || e.downcast_ref()
            .is_some_and(daemon::DaemonError::is_invalid)
        || e.downcast_ref()
            .is_some_and(config::ConfigError::is_invalid)
        || e.downcast_ref()
            .is_some_and(tui::load::LoadError::is_invalid)
        || e.downcast_ref()
            .is_some_and(crate::worktree::WorktreeError::is_invalid)
}

/// A wait that ended at its deadline with nothing to report (`chat wait`): not a failure
/// of the command, but a caller must be able to tell it from a message.
#[derive(Debug, thiserror::Error)]
pub(crate) struct TimedOut(pub String);

/// The message is the whole text: nothing to add around it.
impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The exit code of a `TimedOut` wait.
pub(crate) const EXIT_TIMED_OUT: i32 = 3;

/// Exit code for an error: 2 when any cause is a validation failure, 3 for a timed-out
/// wait, else 1.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if err.chain().any(is_invalid) {
        2
    } else if err.is::<TimedOut>() {
        EXIT_TIMED_OUT
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing_help(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            if a.is_hide_set() || matches!(a.get_id().as_str(), "help" | "version") {
                continue;
            }
            if a.get_help().is_none() {
                out.push(format!("{path} {}", a.get_id()));
            }
        }
        for c in cmd.get_subcommands() {
            if !c.is_hide_set() {
                missing_help(c, &format!("{path} {}", c.get_name()), out);
            }
        }
    }

    #[test]
    fn every_option_and_argument_has_help() {
        let mut out = Vec::new();
        missing_help(&Cli::command(), "gitmoot", &mut out);
        assert!(out.is_empty(), "no help text: {out:#?}");
    }

    #[test]
    fn enum_options_list_their_values_in_help() {
        let mut cmd = Cli::command();
        let job = cmd.find_subcommand_mut("job").unwrap();
        let help = job
            .find_subcommand_mut("list")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(
            help.contains("queued") && help.contains("cancelled"),
            "{help}"
        );
        let help = job
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(
            help.contains("review") && help.contains("implement"),
            "{help}"
        );
    }

    #[test]
    fn a_transposed_top_level_verb_gets_a_suggestion() {
        assert_eq!(nearest_subcommand("jbo").as_deref(), Some("job"));
        assert_eq!(nearest_subcommand("caht").as_deref(), Some("chat"));
        assert_eq!(nearest_subcommand("zzzz"), None);
    }

    #[test]
    fn clap_errors_keep_the_argument_names_and_tip_on_one_line() {
        let text = "error: the following required arguments were not provided:\n  <AGENT>\n\nUsage: gitmoot chat inbox <AGENT>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_error_line(text),
            "error: the following required arguments were not provided: <AGENT> (see --help)"
        );
    }
}
