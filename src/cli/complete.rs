//! Completion and the manual, both read off the CLI's own clap tree: what each argument
//! names (a job, an agent, a thread, a repo, one of a fixed set), for the control room's
//! `:` line and for the shells. Shell completion is clap_complete's dynamic engine: the
//! script `gitmoot completions SHELL` prints calls `COMPLETE=SHELL gitmoot -- WORDS…` back,
//! and the values come from the home named on that line (`--home`), else the default one.
//! `gitmoot man` is clap_mangen's page of the command or of one of its verbs.

use std::ffi::OsString;
use std::io::Write;

use clap::CommandFactory;
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use gitmoot_ui::complete::{CompletionTree, ValueKind};

use super::Ctx;
use crate::domain::{Action, AutonomyPolicy, Capability, JobState, ResumeVerb, RuntimeKind};
use crate::store::jobs::{JobFilter, ListColumns};
use crate::store::{Store, agents, jobs};

/// How many of the newest jobs a shell offers: enough for any id a person types by hand,
/// few enough that a home of 100,000 jobs answers a Tab at once.
const JOBS_OFFERED: usize = 500;

/// What the value of `arg` names, read from its clap id (the field it fills): the same
/// field name means the same thing in every verb, except `name`, which only under
/// `agent show|rm` names an existing agent, and a job-group `id`.
fn value_kind(path: &[String], arg: &clap::Arg) -> Option<ValueKind> {
    let group = path.first().map(String::as_str);
    let choice = |all: Vec<&str>| {
        Some(ValueKind::Choice(
            all.into_iter().map(String::from).collect(),
        ))
    };
    match arg.get_id().as_str() {
        "job" | "root" => Some(ValueKind::Job),
        "id" | "jobs" | "before" if group == Some("job") => Some(ValueKind::Job),
        "agent" | "agents" | "as_agent" => Some(ValueKind::Agent),
        "name" if group == Some("agent") && path.get(1).is_some_and(|v| v != "add") => {
            Some(ValueKind::Agent)
        }
        "thread" => Some(ValueKind::Thread),
        "repo" | "repos" => Some(ValueKind::Repo),
        "state" => choice(JobState::ALL.iter().map(|s| s.as_str()).collect()),
        "runtime" => choice(RuntimeKind::ALL.iter().map(|s| s.as_str()).collect()),
        "capabilities" => choice(Capability::ALL.iter().map(|s| s.as_str()).collect()),
        "policy" => choice(AutonomyPolicy::ALL.iter().map(|s| s.as_str()).collect()),
        "action" => choice(Action::ALL.iter().map(|s| s.as_str()).collect()),
        "verb" => choice(ResumeVerb::ALL.iter().map(|s| s.as_str()).collect()),
        _ => {
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            (!values.is_empty()).then_some(ValueKind::Choice(values))
        }
    }
}

/// The command tree the `:` line completes from: every visible subcommand, long option
/// and what their values name.
pub(crate) fn completion_tree() -> CompletionTree {
    tree_of(&super::Cli::command(), &[])
}

fn tree_of(cmd: &clap::Command, path: &[String]) -> CompletionTree {
    let args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_long() != Some("home"))
        .collect();
    CompletionTree {
        name: cmd.get_name().to_string(),
        children: cmd
            .get_subcommands()
            // What prints a terminal program, a script or roff has no place in a pane.
            .filter(|c| {
                !c.is_hide_set()
                    && !matches!(
                        c.get_name(),
                        "tui" | "demo" | "help" | "completions" | "man"
                    )
            })
            .map(|c| tree_of(c, &[path, &[c.get_name().to_string()]].concat()))
            .collect(),
        flags: args
            .iter()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect(),
        valued: args
            .iter()
            .filter(|a| a.get_action().takes_values())
            .filter_map(|a| Some((format!("--{}", a.get_long()?), value_kind(path, a))))
            .collect(),
        positionals: cmd.get_positionals().map(|a| value_kind(path, a)).collect(),
    }
}

/// The clap command the shells complete: each argument that names something gets its
/// candidates (read when Tab is pressed, from the home on the line being completed).
pub fn completing_command() -> clap::Command {
    with_candidates(super::Cli::command(), &[])
}

fn with_candidates(cmd: clap::Command, path: &[String]) -> clap::Command {
    // In place: `mut_arg` moves an argument to the end, which reorders positionals.
    let mut cmd = cmd.mut_args(|a| match value_kind(path, &a) {
        Some(kind) => a.add(ArgValueCandidates::new(move || {
            candidates(&kind)
                .into_iter()
                .map(CompletionCandidate::new)
                .collect()
        })),
        None => a,
    });
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in subs {
        let sub_path = [path, std::slice::from_ref(&name)].concat();
        cmd = cmd.mut_subcommand(name, |c| with_candidates(c, &sub_path));
    }
    cmd
}

/// The names of `kind` in the home the command line being completed names. Nothing when
/// that home is not there (completion never creates one) or cannot be read.
fn candidates(kind: &ValueKind) -> Vec<String> {
    if let ValueKind::Choice(all) = kind {
        return all.clone();
    }
    let home = home_on_line(std::env::args_os().skip_while(|a| a != "--"));
    let Ok(ctx) = Ctx::new(home, None, false) else {
        return Vec::new();
    };
    if !ctx.home.root().exists() {
        return Vec::new();
    }
    ctx.store()
        .and_then(|store| names_in(&store, kind))
        .unwrap_or_default()
}

/// The `--home DIR` (or `--home=DIR`) of the words a shell handed over.
fn home_on_line(words: impl Iterator<Item = OsString>) -> Option<std::path::PathBuf> {
    let words: Vec<OsString> = words.collect();
    words.iter().enumerate().find_map(|(i, w)| {
        let w = w.to_str()?;
        if w == "--home" {
            words.get(i + 1).map(Into::into)
        } else {
            w.strip_prefix("--home=").map(Into::into)
        }
    })
}

fn names_in(store: &Store, kind: &ValueKind) -> anyhow::Result<Vec<String>> {
    let mut names: Vec<String> = match kind {
        ValueKind::Job => {
            let mut ids = Vec::new();
            let page = JobFilter {
                limit: Some(JOBS_OFFERED),
                ..JobFilter::default()
            };
            jobs::list_each(store.conn(), &page, ListColumns::Table, |j| {
                ids.push(j.id);
                Ok::<_, crate::store::StoreError>(())
            })?;
            ids
        }
        ValueKind::Agent => agents::list(store.conn())?
            .into_iter()
            .map(|a| a.name)
            .collect(),
        ValueKind::Thread => crate::chat::threads::list(&store.conn(), None, false)?
            .into_iter()
            .map(|t| t.slug)
            .collect(),
        ValueKind::Repo => {
            let mut repos: Vec<String> = agents::list(store.conn())?
                .into_iter()
                .flat_map(|a| a.repos)
                .collect();
            repos.extend(
                crate::chat::threads::list(&store.conn(), None, false)?
                    .into_iter()
                    .map(|t| t.repo),
            );
            repos
        }
        ValueKind::Choice(all) => all.clone(),
    };
    if !matches!(kind, ValueKind::Job) {
        names.sort();
        names.dedup();
    }
    Ok(names)
}

/// The script `gitmoot completions SHELL` prints: it registers this binary (as it was
/// called) as the completer of `gitmoot`, so values come from the home at Tab time.
pub(crate) fn registration(shell: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    let shells = clap_complete::env::Shells::builtins();
    let shell_completer = shells
        .completer(shell)
        .ok_or_else(|| crate::Invalid(format!("no completion for the shell {shell:?}")))?;
    // Called by a path (`./target/debug/gitmoot`), the script names this very binary; by
    // name, it finds `gitmoot` on the PATH as the shell does.
    let called = std::env::args().next().unwrap_or_default();
    let completer = if called.contains('/') {
        std::env::current_exe()?.display().to_string()
    } else {
        "gitmoot".to_string()
    };
    shell_completer.write_registration("COMPLETE", "gitmoot", "gitmoot", &completer, out)?;
    Ok(())
}

/// The roff manual page of `gitmoot` or of the verb `path` names (`job list`).
pub(crate) fn man_page(path: &[String], out: &mut dyn Write) -> anyhow::Result<()> {
    let mut cmd = super::Cli::command();
    cmd.build();
    let mut page = &cmd;
    for word in path {
        page = page
            .find_subcommand(word)
            .filter(|c| !c.is_hide_set())
            .ok_or_else(|| {
                crate::Invalid(format!(
                    "no command `{}` to show the manual of (see gitmoot --help)",
                    path.join(" ")
                ))
            })?;
    }
    clap_mangen::Man::new(page.clone()).render(out)?;
    Ok(())
}
