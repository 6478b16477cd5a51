//! Executes the ui crate's write actions through the very functions the CLI verbs call
//! (`engine::answer`, `engine::resume`, `engine::kill_root`, `chat::messages::send_message`,
//! `chat::promote::task_message` …), on the executor's own connection and thread. The `:`
//! command line runs this binary's own subcommands, so it is the CLI by construction.
//!
//! Owns turning a `Write` into one store transaction and a one-line outcome with its
//! severity; which actions are writes is decided by the action's type, not here.

use std::path::Path;
use std::process::{Command, Stdio};

use gitmoot_ui::{CommandOutput, ToastLevel, Write};

use crate::chat::inbox::{self, ReadSelection};
use crate::chat::live_env;
use crate::chat::{messages, promote, threads};
use crate::clock::SystemClock;
use crate::config::Config;
use crate::domain::{Action as JobAction, BulkVerb, ResumeVerb};
use crate::engine;
use crate::home::Home;
use crate::store::Store;

/// The outcome shown on the message bar (and kept whole in the messages log).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub level: ToastLevel,
    pub text: String,
    /// For a `:` line: everything the command printed, for the output view.
    pub output: Option<CommandOutput>,
}

impl Outcome {
    fn new(level: ToastLevel, text: impl Into<String>) -> Self {
        Self {
            level,
            text: text.into(),
            output: None,
        }
    }

    /// A write that landed.
    fn done(text: impl Into<String>) -> Self {
        Self::new(ToastLevel::Success, text)
    }

    fn failed(text: impl Into<String>) -> Self {
        Self::new(ToastLevel::Error, text)
    }
}

/// How many lines the persisted `:` history keeps.
const HISTORY_KEEP: usize = 200;

/// The `:` history persisted in the home, oldest first (empty when there is none yet).
pub fn load_history(home: &Home) -> Vec<String> {
    std::fs::read_to_string(home.command_history_path())
        .map(|t| {
            t.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Appends `line` to the persisted history (deduplicated, capped). A failure to write
/// only loses history, so it is not reported.
fn save_history(home: &Home, line: &str) {
    let mut lines = load_history(home);
    lines.retain(|l| l != line);
    lines.push(line.to_string());
    let start = lines.len().saturating_sub(HISTORY_KEEP);
    let _ = std::fs::write(
        home.command_history_path(),
        lines[start..].join("\n") + "\n",
    );
}

pub struct Executor {
    home: Home,
    store: Store,
    config: Config,
    /// The gitmoot binary the `:` line runs: this process's own executable.
    binary: Option<std::path::PathBuf>,
}

impl Executor {
    pub fn new(home: Home, store: Store, config: Config) -> Self {
        Self {
            home,
            store,
            config,
            binary: std::env::current_exe().ok(),
        }
    }

    /// Runs `:` commands with this binary instead (an embedding process that is not gitmoot).
    pub fn binary(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.binary = Some(path.into());
        self
    }

    /// Runs one write.
    pub fn run(&mut self, write: &Write) -> Outcome {
        // A PostgreSQL connection the server dropped is reopened before the write.
        if let Err(e) = self.store.heal() {
            return Outcome::failed(format!("the store is unreachable: {e}"));
        }
        let result = match write {
            Write::AnswerAsk { job_id, answers } => self.answer(job_id, answers),
            Write::Resume {
                job_id,
                verb,
                instructions,
            } => self.resume(job_id, *verb, instructions),
            Write::KillRoot { root_id, force } => self.kill(root_id, *force),
            Write::CancelJob { job_id } => self.cancel(job_id),
            Write::Bulk { verb, job_ids } => self.bulk(*verb, job_ids),
            Write::BulkAnswer { job_ids, choice } => {
                let env = live_env(&self.config.orchestrate);
                self.store
                    .write(|tx| crate::chat::answer::answer_many(tx, env, job_ids, choice, false))
                    .map(|items| bulk_outcome(BulkVerb::Answer, &items))
                    .map_err(Into::into)
            }
            Write::LeaveStall { job_id } => {
                let env = live_env(&self.config.orchestrate);
                self.store
                    .write(|tx| engine::stall::leave(tx, env, job_id))
                    .map(|()| Outcome::done(format!("left {job_id} running")))
                    .map_err(Into::into)
            }
            Write::SendChat {
                thread_id,
                body,
                reply_to,
            } => self.send(thread_id, body, *reply_to),
            Write::Promote {
                thread_id,
                seq,
                action,
            } => self.promote(thread_id, *seq, *action),
            Write::MarkRead {
                agent,
                thread_id,
                seqs,
            } => self.mark_read(agent, thread_id, seqs),
            Write::MarkSeen { thread_id, seq } => {
                crate::chat::threads::mark_seen(&mut self.store, thread_id, None, Some(*seq as i64))
                    .map(|_| Outcome::done(""))
                    .map_err(Into::into)
            }
            Write::Land { job_id, strategy } => self.land(job_id, *strategy),
            Write::Discard { job_id } => self.discard(job_id),
            Write::Review { job_id, comments } => self.review(job_id, comments),
            Write::RunCommand(line) => {
                save_history(&self.home, line);
                Ok(run_command(self.binary.as_deref(), self.home.root(), line))
            }
        };
        result.unwrap_or_else(|e| Outcome::failed(crate::error_line(&*e)))
    }

    fn answer(&mut self, job_id: &str, answers: &[(String, String)]) -> anyhow::Result<Outcome> {
        let text: Vec<String> = answers.iter().map(|(q, a)| format!("{q}: {a}")).collect();
        let text = text.join("\n");
        let done = crate::chat::answer::answer_job_message(
            &mut self.store,
            live_env(&self.config.orchestrate),
            job_id,
            &text,
        )?;
        Ok(Outcome::done(match done.continuation {
            Some(c) => format!("answered {job_id}; continuation {c} queued"),
            None => format!("answered {job_id}"),
        }))
    }

    fn resume(
        &mut self,
        job_id: &str,
        verb: ResumeVerb,
        instructions: &str,
    ) -> anyhow::Result<Outcome> {
        let instructions = Some(instructions.trim()).filter(|s| !s.is_empty());
        self.store.write(|tx| {
            engine::resume(
                tx,
                live_env(&self.config.orchestrate),
                job_id,
                verb,
                instructions,
            )
        })?;
        Ok(Outcome::done(format!("{} {job_id}", verb.as_str())))
    }

    fn land(
        &mut self,
        job_id: &str,
        strategy: crate::worktree::Strategy,
    ) -> anyhow::Result<Outcome> {
        let env = live_env(&self.config.orchestrate);
        // A land killed midway elsewhere is finished or dropped before this one is judged.
        crate::worktree::resume_lands(&mut self.store, env, &self.config)?;
        let l = crate::worktree::land(&mut self.store, env, &self.config, job_id, strategy, None)?;
        let mut text = l.line();
        if !l.landed_first.files.is_empty() {
            text.push_str(&format!(
                "; note: {} landed first and also changed {}",
                l.landed_first.jobs.join(", "),
                l.landed_first.files.join(", ")
            ));
        }
        for n in &l.notes {
            text.push_str(&format!("; after landing: {n}"));
        }
        Ok(Outcome::done(text))
    }

    fn discard(&mut self, job_id: &str) -> anyhow::Result<Outcome> {
        let env = live_env(&self.config.orchestrate);
        // A land killed midway elsewhere is finished or dropped before its job is judged.
        crate::worktree::resume_lands(&mut self.store, env, &self.config)?;
        let lost =
            crate::worktree::discard(&mut self.store, env, &self.config.daemon.labels, job_id)?;
        Ok(Outcome::done(format!("discarded {}: {lost}", lost.job)))
    }

    fn review(&mut self, job_id: &str, comments: &str) -> anyhow::Result<Outcome> {
        let env = live_env(&self.config.orchestrate);
        let r = crate::worktree::review(
            &mut self.store,
            env,
            &self.config.daemon.labels,
            job_id,
            comments,
        )?;
        Ok(Outcome::done(format!(
            "sent {} back for review round {} (attempt {}); it runs again in its worktree",
            r.job, r.round, r.attempt
        )))
    }

    fn kill(&mut self, root: &str, force: bool) -> anyhow::Result<Outcome> {
        self.store
            .write(|tx| engine::kill_root(tx, live_env(&self.config.orchestrate), root, force))?;
        Ok(Outcome::done(format!(
            "killing {root}{}",
            if force { " (force)" } else { "" }
        )))
    }

    fn cancel(&mut self, job_id: &str) -> anyhow::Result<Outcome> {
        self.store
            .write(|tx| engine::cancel_job(tx, live_env(&self.config.orchestrate), job_id))?;
        Ok(Outcome::done(format!("cancelled {job_id}")))
    }

    /// The marked rows' verb, through `engine::bulk::apply` (or `worktree::many::apply` for
    /// land and discard) as `job … --where` does: each refusal is named, the rest went ahead.
    fn bulk(&mut self, verb: BulkVerb, job_ids: &[String]) -> anyhow::Result<Outcome> {
        let env = live_env(&self.config.orchestrate);
        let items = match verb {
            BulkVerb::Land | BulkVerb::Discard => {
                let verb = (verb, crate::worktree::Strategy::Auto);
                crate::worktree::many::apply(
                    &mut self.store,
                    env,
                    &self.config,
                    verb,
                    job_ids,
                    false,
                )?
            }
            _ => self
                .store
                .write(|tx| engine::bulk::apply(tx, env, verb, job_ids, false))?,
        };
        Ok(bulk_outcome(verb, &items))
    }

    fn send(
        &mut self,
        thread_id: &str,
        body: &str,
        reply_to: Option<u64>,
    ) -> anyhow::Result<Outcome> {
        let opts = messages::SendOptions {
            reply_to: reply_to.map(|r| r as i64),
            ..Default::default()
        };
        let sent =
            messages::send_message(&mut self.store, &SystemClock, thread_id, None, body, &opts)?;
        let text = format!("sent #{}", sent.message.seq);
        if sent.unknown_mentions.is_empty() {
            return Ok(Outcome::done(text));
        }
        // The message landed; only the mention reaches nobody, which the operator may fix.
        Ok(Outcome::new(
            ToastLevel::Warning,
            format!(
                "{text} (not registered: @{})",
                sent.unknown_mentions.join(", @")
            ),
        ))
    }

    fn promote(&mut self, thread_id: &str, seq: u64, action: JobAction) -> anyhow::Result<Outcome> {
        let p = promote::promote_message(
            &mut self.store,
            &SystemClock,
            thread_id,
            None,
            seq as i64,
            action,
        )?;
        Ok(Outcome::done(format!(
            "promoted #{seq} → {} ({} {})",
            p.job_id, p.agent, action
        )))
    }

    fn mark_read(&mut self, agent: &str, thread_id: &str, seqs: &[u64]) -> anyhow::Result<Outcome> {
        let n = self.store.write(|tx| -> anyhow::Result<usize> {
            let thread = threads::resolve(tx, thread_id, None)?;
            let which = if seqs.is_empty() {
                ReadSelection::All
            } else {
                ReadSelection::Seqs(seqs.iter().map(|s| *s as i64).collect())
            };
            Ok(inbox::mark_read(tx, agent, Some(&thread), &which)?)
        })?;
        Ok(Outcome::done(format!("marked {n} read for {agent}")))
    }
}

/// Runs `gitmoot --home HOME <line>` and reports its first line of output or error, with
/// the whole output for the control room's output view.
pub(crate) fn run_command(binary: Option<&Path>, home: &Path, line: &str) -> Outcome {
    let words = match split_words(line) {
        Ok(w) if !w.is_empty() => w,
        Ok(_) => return Outcome::failed("empty command"),
        Err(e) => return Outcome::failed(e),
    };
    let daemon_read = words[0] == "daemon" && words.get(1).is_some_and(|w| w == "status");
    if matches!(words[0].as_str(), "tui" | "demo" | "daemon") && !daemon_read {
        return Outcome::failed(format!("`{}` cannot run inside the control room", words[0]));
    }
    let Some(exe) = binary else {
        return Outcome::failed("cannot find the gitmoot binary");
    };
    let out = Command::new(exe)
        .arg("--home")
        .arg(home)
        .args(&words)
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) => {
            let text = if o.status.success() {
                &o.stdout
            } else {
                &o.stderr
            };
            let text = String::from_utf8_lossy(text).into_owned();
            let first = gitmoot_ui::sanitize::clean_line(
                text.lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("done"),
            );
            // A `:` line may only read, so a clean exit is a note, not a landed write.
            Outcome {
                level: if o.status.success() {
                    ToastLevel::Info
                } else {
                    ToastLevel::Error
                },
                text: first,
                output: Some(CommandOutput {
                    command: line.to_string(),
                    ok: o.status.success(),
                    text,
                }),
            }
        }
        Err(e) => Outcome::failed(format!("could not run the command: {e}")),
    }
}

/// Splits a command line into words: whitespace separates, single and double quotes group,
/// backslash escapes the next character outside single quotes.
pub(crate) fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => cur.push(c),
            (_, '\\') => {
                cur.push(chars.next().ok_or("a trailing backslash escapes nothing")?);
                in_word = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("unclosed quote in the command".into());
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// A many-jobs verb's toast: how many went ahead, each refusal named.
fn bulk_outcome(verb: BulkVerb, items: &[engine::bulk::Item]) -> Outcome {
    let refused: Vec<String> = items
        .iter()
        .filter_map(|i| Some(format!("{}: {}", i.job_id, i.refused.as_ref()?)))
        .collect();
    let done = items.len() - refused.len();
    let mut text = format!("{verb}: {done} done, {} refused", refused.len());
    for r in &refused {
        text.push_str(&format!("; refused {r}"));
    }
    match refused.is_empty() {
        true => Outcome::done(text),
        false => Outcome::new(ToastLevel::Warning, text),
    }
}

#[cfg(test)]
mod tests {
    use super::split_words;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split_words(r#"job answer job-1 "rollout: a b""#).unwrap(),
            ["job", "answer", "job-1", "rollout: a b"]
        );
        assert_eq!(
            split_words("chat send room 'it''s'").unwrap(),
            ["chat", "send", "room", "its"]
        );
        assert_eq!(split_words(r"a\ b c").unwrap(), ["a b", "c"]);
        assert_eq!(split_words(r#"x """#).unwrap(), ["x", ""]);
        assert!(split_words("job \"open").is_err());
    }
}
