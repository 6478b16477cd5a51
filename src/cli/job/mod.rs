//! `gitmoot job …`: the clap definitions of every job verb and the dispatch of each to the
//! file that runs it: `read` (list, show, tree, events, pending), `steer` (run, kill,
//! cancel, answer, resume) and `session` (open, note, close, record). Each verb is a thin
//! wrapper over `engine` or `store`, shared with the control room; nothing here decides.

mod many;
mod read;
mod session;
mod steer;
mod write;

use clap::{Args, Subcommand};

use super::Ctx;
use super::agent::parse;
use super::page::PageArgs;
use crate::domain::{Action, BulkVerb, JobState};

#[derive(Debug, Subcommand)]
pub enum JobCmd {
    /// Submit a root job; prints its id.
    Run(RunArgs),
    /// List jobs, newest first: one page (50) unless --limit N or --all.
    List(ListArgs),
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
        #[arg(required_unless_present = "selection", conflicts_with = "selection")]
        root: Option<String>,
        /// Terminate running jobs' processes instead of letting them finish their turn.
        #[arg(long, conflicts_with = "selection")]
        force: bool,
        #[command(flatten)]
        many: ManyArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Git's diff of a write job's work (its commits and its worktree, untracked files
    /// included) against the base its branch started from.
    Diff {
        /// The implement job (a unique id prefix works).
        job: String,
        /// Git's `--stat` summary instead of the patch.
        #[arg(long, conflicts_with = "json")]
        stat: bool,
        /// Files with their counts and hunks as JSON.
        #[arg(long)]
        json: bool,
        /// Only what changed since the job was last sent back for review.
        #[arg(long)]
        since_review: bool,
    },
    /// Send a write job's work back to the same agent with review comments: it runs again
    /// as its next attempt, in the same worktree, the comments at the top of its prompt.
    Review {
        /// The implement job (a unique id prefix works).
        job: String,
        /// The comments (file:line anchors help the agent); `-` reads them from stdin.
        comments: Option<String>,
        /// Read the comments from this file (`-` for stdin).
        #[arg(long, value_name = "PATH")]
        file: Option<std::path::PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Integrate a write job's work into its base branch in the registered checkout:
    /// fast-forward when possible, else a merge commit. Refused, changing nothing, when it
    /// would conflict, the checkout has uncommitted changes to the same files, git has a
    /// rebase, merge, cherry-pick, revert, bisect or am in progress there, or the base
    /// moved meanwhile.
    Land {
        /// The implement job (a unique id prefix works).
        #[arg(required_unless_present = "selection", conflicts_with = "selection")]
        job: Option<String>,
        /// One commit on the base holding all the job's work.
        #[arg(long, conflicts_with_all = ["merge", "rebase"])]
        squash: bool,
        /// Always a merge commit, even when a fast-forward is possible.
        #[arg(long, conflicts_with = "rebase")]
        merge: bool,
        /// The job's commits replayed on the base's tip.
        #[arg(long)]
        rebase: bool,
        /// The message of the squash or merge commit (default: the job's title and summary).
        #[arg(long, value_name = "TEXT", conflicts_with = "selection")]
        message: Option<String>,
        #[command(flatten)]
        many: ManyArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Replay a write job's commits on its base branch's tip in its worktree, and measure
    /// its work from there. Refused, changing nothing, while its agent works, when the
    /// worktree holds uncommitted work, or on a conflict (its files named).
    Rebase {
        /// The implement job (a unique id prefix works).
        job: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove a write job's worktree and branch, after saying what is lost.
    Discard {
        /// The implement job (a unique id prefix works).
        #[arg(required_unless_present = "selection", conflicts_with = "selection")]
        job: Option<String>,
        /// Discard without asking (for scripts; without a terminal it is required, and
        /// with --where always, unless --dry-run).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        many: ManyArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Cancel one queued or running job (or every job a --where query selects).
    Cancel(OneOrMany),
    /// Retry a job waiting for a human (a failure round or an interrupted job) as a new
    /// attempt, like `job resume JOB retry` (or every job a --where query selects).
    Retry(OneOrMany),
    /// Leave a stalled job running: its stall leaves Attention until it stalls anew.
    Leave {
        /// The stalled job (a unique id prefix works).
        job: String,
    },
    /// Everything awaiting a human: ask-gate questions and failure escalations.
    Pending {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Answer an ask round: one "<qid>: text" a line (or every job a --where query
    /// selects with the one --choice).
    Answer {
        /// The job waiting for a human (a unique id prefix works).
        #[arg(
            required_unless_present = "selection",
            conflicts_with = "selection",
            requires = "text"
        )]
        job: Option<String>,
        /// The answers, one "<question-id>: text" a line.
        #[arg(conflicts_with = "selection")]
        text: Option<String>,
        /// With --where: the choice every question of each selected job is answered with
        /// (a job whose question does not offer it is refused; the rest are answered).
        #[arg(long, value_name = "CHOICE", requires = "selection")]
        choice: Option<String>,
        #[command(flatten)]
        many: ManyArgs,
        /// Print JSON instead of text (with --where).
        #[arg(long, requires = "selection")]
        json: bool,
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

/// One job by id, or every job a query selects.
#[derive(Debug, Args)]
pub struct OneOrMany {
    /// The job id (a unique prefix works).
    #[arg(required_unless_present = "selection", conflicts_with = "selection")]
    pub id: Option<String>,
    #[command(flatten)]
    pub many: ManyArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The jobs a verb acts on when it is given a query instead of one id.
#[derive(Debug, Args)]
pub struct ManyArgs {
    /// Act on every job this query selects: `key=value` words, each narrowing
    /// (state=queued,running agent=A repo=R root=ID kind=leg action=ask older=2h newer=10m).
    #[arg(long = "where", value_name = "QUERY")]
    pub selection: Option<String>,
    /// Print what the verb would do (to the job, or to each selected job); change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only jobs in this state: queued | running | succeeded | failed | blocked | cancelled.
    #[arg(long, value_parser = parse::<JobState>)]
    pub state: Option<JobState>,
    /// Only jobs of this root's tree (a unique id prefix works).
    #[arg(long)]
    pub root: Option<String>,
    /// Only jobs of this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only jobs of this repo.
    #[arg(long)]
    pub repo: Option<String>,
    /// Only jobs older than this job id (the next page after it).
    #[arg(long, value_name = "ID")]
    pub before: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
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
    /// With --action implement on a repo with a git checkout: the ref the job's branch
    /// starts from (default: `[repos.X].base`, else the checkout's current branch).
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
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
        JobCmd::Run(a) => steer::submit(ctx, a),
        JobCmd::List(a) => read::list(ctx, a),
        JobCmd::Show { id, json } => read::show(ctx, &id, json),
        JobCmd::Tree { root, json } => read::tree(ctx, &root, json),
        JobCmd::Events { id, follow, json } => read::events(ctx, &id, follow, json),
        JobCmd::Logs { id, follow, json } => super::logs::logs(ctx, &id, follow, json),
        JobCmd::Pending { json } => read::pending(ctx, json),
        JobCmd::Kill {
            root,
            force,
            many,
            json,
        } => match root {
            Some(root) if many.dry_run => {
                many::one(ctx, BulkVerb::Kill, &root, (force, true), json)
            }
            Some(root) => steer::kill(ctx, &root, force, json),
            None => many::run(ctx, BulkVerb::Kill, many, json),
        },
        JobCmd::Cancel(OneOrMany { id, many, json }) => match id {
            Some(id) if many.dry_run => many::one(ctx, BulkVerb::Cancel, &id, (false, true), json),
            Some(id) => steer::cancel(ctx, &id, json),
            None => many::run(ctx, BulkVerb::Cancel, many, json),
        },
        JobCmd::Retry(OneOrMany { id, many, json }) => match id {
            Some(id) => many::one(ctx, BulkVerb::Retry, &id, (false, many.dry_run), json),
            None => many::run(ctx, BulkVerb::Retry, many, json),
        },
        JobCmd::Diff {
            job,
            stat,
            json,
            since_review,
        } => write::diff(ctx, &job, (stat, since_review), json),
        JobCmd::Review {
            job,
            comments,
            file,
            json,
        } => write::review(ctx, &job, comments, file, json),
        JobCmd::Land {
            job,
            squash,
            merge,
            rebase,
            message,
            many,
            json,
        } => land(
            ctx,
            job,
            (squash, merge, rebase),
            message.as_deref(),
            many,
            json,
        ),
        JobCmd::Rebase { job, json } => write::rebase(ctx, &job, json),
        JobCmd::Discard {
            job,
            force,
            many,
            json,
        } => discard(ctx, job, force, many, json),
        JobCmd::Answer {
            job,
            text,
            choice,
            many,
            json,
        } => match (job, text) {
            (Some(job), Some(text)) if many.dry_run => many::preview_answer(ctx, &job, &text),
            (Some(job), Some(text)) => steer::answer(ctx, &job, &text),
            _ => many::answer(ctx, choice.as_deref(), many, json),
        },
        JobCmd::Leave { job } => steer::leave(ctx, &job),
        JobCmd::Resume {
            job,
            verb,
            instructions,
        } => steer::resume(ctx, &job, &verb, &instructions),
        JobCmd::Open {
            kind: _,
            session,
            json,
        } => session::open(ctx, session, json),
        JobCmd::Note { id, text } => session::note(ctx, &id, &text),
        JobCmd::Close { id, verdict, json } => session::close(ctx, &id, &verdict, json),
        JobCmd::Record {
            session,
            verdict,
            json,
        } => session::record(ctx, session, &verdict, json),
    }
}

/// `job land`: one job, its dry run, or a selection.
fn land(
    ctx: &Ctx,
    job: Option<String>,
    (squash, merge, rebase): (bool, bool, bool),
    message: Option<&str>,
    many: ManyArgs,
    json: bool,
) -> anyhow::Result<()> {
    let strategy = match (squash, merge, rebase) {
        (true, _, _) => crate::worktree::Strategy::Squash,
        (_, true, _) => crate::worktree::Strategy::Merge,
        (_, _, true) => crate::worktree::Strategy::Rebase,
        _ => crate::worktree::Strategy::Auto,
    };
    match job {
        Some(job) if many.dry_run => {
            many::preview_work(ctx, (BulkVerb::Land, strategy), &job, message, json)
        }
        Some(job) => write::land(ctx, &job, strategy, message, json),
        None => many::work(ctx, (BulkVerb::Land, strategy), many, json),
    }
}

/// `job discard`: one job, its dry run, or a selection (which needs `--force` to act).
fn discard(
    ctx: &Ctx,
    job: Option<String>,
    force: bool,
    many: ManyArgs,
    json: bool,
) -> anyhow::Result<()> {
    let verb = (BulkVerb::Discard, crate::worktree::Strategy::Auto);
    match job {
        Some(job) if many.dry_run => many::preview_work(ctx, verb, &job, None, json),
        Some(job) => write::discard(ctx, &job, force, json),
        None if !force && !many.dry_run => Err(crate::Invalid(
            "job discard --where throws away every selected job's work; see what with --dry-run, then pass --force".into(),
        )
        .into()),
        None => many::work(ctx, verb, many, json),
    }
}
