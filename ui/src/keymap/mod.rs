//! Keymap as data: the built-in `ui/keymap.toml` plus user overrides, per context.
//!
//! Owns the [`Command`] names of the `run` field, lookup by context, the help rows, the
//! README keys table and its tour (`tour.rs`); a key string ("ctrl-c", "alt-enter", "K") is parsed in `chord.rs`. Must not execute
//! anything: `update` maps a [`Command`] to state changes and actions.

use std::str::FromStr;

use serde::Deserialize;

use crate::pane::Pane;
use crate::sort::SortKey;

mod chord;
mod tour;
pub use chord::KeyChord;
pub use tour::{Press, Step, TOUR, key_name, tour_markdown};

/// The built-in keymap text.
pub const BUILTIN: &str = include_str!("../../keymap.toml");

/// Where a binding applies. Pane contexts are tried before `Global`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    Global,
    Attention,
    Tree,
    Dag,
    Threads,
    Detail,
    Agents,
    AnswerForm,
    Dialog,
}

impl Context {
    pub const ALL: [Context; 9] = [
        Context::Global,
        Context::Attention,
        Context::Tree,
        Context::Dag,
        Context::Threads,
        Context::Detail,
        Context::Agents,
        Context::AnswerForm,
        Context::Dialog,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Attention => "attention",
            Context::Tree => "tree",
            Context::Dag => "dag",
            Context::Threads => "threads",
            Context::Detail => "detail",
            Context::Agents => "agents",
            Context::AnswerForm => "answer_form",
            Context::Dialog => "dialog",
        }
    }

    pub fn of_pane(p: Pane) -> Context {
        match p {
            Pane::Attention => Context::Attention,
            Pane::Tree => Context::Tree,
            Pane::Dag => Context::Dag,
            Pane::Threads => Context::Threads,
            Pane::Detail => Context::Detail,
            Pane::Agents => Context::Agents,
        }
    }
}

/// A named command, the `run` field of a keymap entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Quit,
    Suspend,
    Help,
    Filter,
    CommandLine,
    Messages,
    Pane(Pane),
    PaneNext,
    PanePrev,
    Zoom,
    Back,
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    Open,
    Copy,
    Kill,
    Answer,
    Retry,
    Continue,
    Abort,
    Detail,
    Fold,
    Unfold,
    ToggleFold,
    CancelJob,
    RootNext,
    RootPrev,
    SectionNext,
    SectionPrev,
    Compose,
    Reply,
    Promote,
    MarkRead,
    Submit,
    Newline,
    NextField,
    PrevField,
    Cancel,
    Confirm,
    Force,
    FileNext,
    FilePrev,
    HunkNext,
    HunkPrev,
    DiffSearch,
    MatchNext,
    MatchPrev,
    Comment,
    Review,
    Land,
    Discard,
    Wrap,
    Sort(SortKey),
    Mark,
    MarkAll,
    RetryJob,
    LeaveStall,
    Group,
    Search,
    Usage,
}

const SIMPLE: [(&str, Command); 67] = [
    ("search", Command::Search),
    ("usage", Command::Usage),
    ("quit", Command::Quit),
    ("suspend", Command::Suspend),
    ("help", Command::Help),
    ("filter", Command::Filter),
    ("command", Command::CommandLine),
    ("messages", Command::Messages),
    ("pane_next", Command::PaneNext),
    ("pane_prev", Command::PanePrev),
    ("zoom", Command::Zoom),
    ("back", Command::Back),
    ("up", Command::Up),
    ("down", Command::Down),
    ("top", Command::Top),
    ("bottom", Command::Bottom),
    ("page_up", Command::PageUp),
    ("page_down", Command::PageDown),
    ("open", Command::Open),
    ("copy", Command::Copy),
    ("kill", Command::Kill),
    ("answer", Command::Answer),
    ("retry", Command::Retry),
    ("continue", Command::Continue),
    ("abort", Command::Abort),
    ("detail", Command::Detail),
    ("fold", Command::Fold),
    ("unfold", Command::Unfold),
    ("toggle_fold", Command::ToggleFold),
    ("cancel_job", Command::CancelJob),
    ("root_next", Command::RootNext),
    ("root_prev", Command::RootPrev),
    ("section_next", Command::SectionNext),
    ("section_prev", Command::SectionPrev),
    ("compose", Command::Compose),
    ("reply", Command::Reply),
    ("promote", Command::Promote),
    ("mark_read", Command::MarkRead),
    ("submit", Command::Submit),
    ("newline", Command::Newline),
    ("next_field", Command::NextField),
    ("prev_field", Command::PrevField),
    ("cancel", Command::Cancel),
    ("confirm", Command::Confirm),
    ("force", Command::Force),
    ("file_next", Command::FileNext),
    ("file_prev", Command::FilePrev),
    ("hunk_next", Command::HunkNext),
    ("hunk_prev", Command::HunkPrev),
    ("diff_search", Command::DiffSearch),
    ("match_next", Command::MatchNext),
    ("match_prev", Command::MatchPrev),
    ("comment", Command::Comment),
    ("review", Command::Review),
    ("land", Command::Land),
    ("discard", Command::Discard),
    ("wrap", Command::Wrap),
    ("sort_age", Command::Sort(SortKey::Age)),
    ("sort_state", Command::Sort(SortKey::State)),
    ("sort_agent", Command::Sort(SortKey::Agent)),
    ("sort_spend", Command::Sort(SortKey::Spend)),
    ("sort_elapsed", Command::Sort(SortKey::Elapsed)),
    ("mark", Command::Mark),
    ("mark_all", Command::MarkAll),
    ("retry_job", Command::RetryJob),
    ("leave_stall", Command::LeaveStall),
    ("group", Command::Group),
];

impl FromStr for Command {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(arg) = s.strip_prefix("pane ") {
            return Pane::ALL
                .into_iter()
                .find(|p| p.name() == arg.trim())
                .map(Command::Pane)
                .ok_or_else(|| {
                    format!(
                        "unknown pane \"{}\" (attention, tree, dag, threads, detail)",
                        arg.trim()
                    )
                });
        }
        SIMPLE
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, c)| *c)
            .ok_or_else(|| format!("unknown command \"{s}\""))
    }
}

/// One resolved binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub chord: KeyChord,
    pub command: Command,
    pub desc: String,
}

/// A bad keymap entry, named so the operator can find it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum KeymapError {
    #[error("keymap {source_name}: {message}")]
    Syntax {
        source_name: String,
        message: String,
    },
    #[error("keymap {source_name}: [{context}] entry {index} (on = \"{on}\"): {message}")]
    Entry {
        source_name: String,
        context: String,
        index: usize,
        on: String,
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    on: String,
    run: String,
    #[serde(default)]
    desc: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawKeymap {
    #[serde(default)]
    global: Vec<RawEntry>,
    #[serde(default)]
    attention: Vec<RawEntry>,
    #[serde(default)]
    tree: Vec<RawEntry>,
    #[serde(default)]
    dag: Vec<RawEntry>,
    #[serde(default)]
    threads: Vec<RawEntry>,
    #[serde(default)]
    detail: Vec<RawEntry>,
    #[serde(default)]
    agents: Vec<RawEntry>,
    #[serde(default)]
    answer_form: Vec<RawEntry>,
    #[serde(default)]
    dialog: Vec<RawEntry>,
}

impl RawKeymap {
    fn take(&mut self, c: Context) -> Vec<RawEntry> {
        std::mem::take(match c {
            Context::Global => &mut self.global,
            Context::Attention => &mut self.attention,
            Context::Tree => &mut self.tree,
            Context::Dag => &mut self.dag,
            Context::Threads => &mut self.threads,
            Context::Detail => &mut self.detail,
            Context::Agents => &mut self.agents,
            Context::AnswerForm => &mut self.answer_form,
            Context::Dialog => &mut self.dialog,
        })
    }
}

/// Bindings per context, in file order (the help shows them in that order).
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    contexts: Vec<(Context, Vec<Binding>)>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::builtin()
    }
}

impl Keymap {
    /// The embedded default keymap.
    pub fn builtin() -> Keymap {
        let mut k = Keymap {
            contexts: Context::ALL.into_iter().map(|c| (c, Vec::new())).collect(),
        };
        k.merge("built-in", BUILTIN)
            .expect("the embedded keymap parses");
        k
    }

    /// The built-in keymap with a user's overrides (TOML text read from the home).
    pub fn with_overrides(source_name: &str, text: &str) -> Result<Keymap, KeymapError> {
        let mut k = Keymap::builtin();
        k.merge(source_name, text)?;
        Ok(k)
    }

    /// Adds `text`'s entries: an entry whose key is already bound in its context replaces
    /// that binding in place; new keys are appended.
    fn merge(&mut self, source_name: &str, text: &str) -> Result<(), KeymapError> {
        let mut raw: RawKeymap = toml::from_str(text).map_err(|e| KeymapError::Syntax {
            source_name: source_name.to_string(),
            message: e.message().to_string(),
        })?;
        for (ctx, bindings) in &mut self.contexts {
            for (i, e) in raw.take(*ctx).into_iter().enumerate() {
                let err = |message: String| KeymapError::Entry {
                    source_name: source_name.to_string(),
                    context: ctx.name().to_string(),
                    index: i + 1,
                    on: e.on.clone(),
                    message,
                };
                let chord: KeyChord = e.on.parse().map_err(err)?;
                let command: Command = e.run.parse().map_err(err)?;
                let b = Binding {
                    chord,
                    command,
                    desc: e.desc.clone(),
                };
                match bindings.iter_mut().find(|x| x.chord == chord) {
                    Some(existing) => *existing = b,
                    None => bindings.push(b),
                }
            }
        }
        Ok(())
    }

    pub fn bindings(&self, ctx: Context) -> &[Binding] {
        self.contexts
            .iter()
            .find(|(c, _)| *c == ctx)
            .map(|(_, b)| b.as_slice())
            .unwrap_or(&[])
    }

    /// The command bound to `chord` in `ctx` alone.
    pub fn lookup(&self, ctx: Context, chord: KeyChord) -> Option<Command> {
        self.bindings(ctx)
            .iter()
            .find(|b| b.chord == chord)
            .map(|b| b.command)
    }

    /// The first key bound to `command` in `ctx` (for footer hints), as text.
    pub fn key_for(&self, ctx: Context, command: Command) -> Option<String> {
        self.bindings(ctx)
            .iter()
            .find(|b| b.command == command)
            .map(|b| b.chord.to_string())
    }

    /// Help rows of a context: each command with every key bound to it, in file order.
    pub fn help_rows(&self, ctx: Context) -> Vec<(Vec<String>, String)> {
        let mut rows: Vec<(Command, Vec<String>, String)> = Vec::new();
        for b in self.bindings(ctx) {
            match rows.iter_mut().find(|(c, _, _)| *c == b.command) {
                Some(row) => row.1.push(b.chord.to_string()),
                None => rows.push((b.command, vec![b.chord.to_string()], b.desc.clone())),
            }
        }
        rows.into_iter()
            .map(|(_, keys, desc)| (keys, desc))
            .collect()
    }
}

/// The Markdown keys table of the built-in keymap, for the README.
pub fn keys_markdown() -> String {
    let k = Keymap::builtin();
    let mut out = String::from("| Context | Keys | Action |\n|---|---|---|\n");
    for ctx in Context::ALL {
        for (keys, desc) in k.help_rows(ctx) {
            let keys = keys
                .iter()
                .map(|k| format!("`{}`", k.replace('|', "\\|")))
                .collect::<Vec<_>>()
                .join(" ");
            out.push_str(&format!("| {} | {} | {} |\n", ctx.name(), keys, desc));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::chord::chord;
    use super::*;

    #[test]
    fn spec_keys_are_bound() {
        let k = Keymap::builtin();
        let g = |s: &str| k.lookup(Context::Global, chord(s));
        let a = |s: &str| k.lookup(Context::Attention, chord(s));
        assert_eq!(g("ctrl-c"), Some(Command::Quit));
        assert_eq!(g("q"), Some(Command::Quit));
        assert_eq!(g("1"), Some(Command::Pane(Pane::Attention)));
        assert_eq!(g("5"), Some(Command::Pane(Pane::Detail)));
        assert_eq!(g("tab"), Some(Command::PaneNext));
        assert_eq!(g("shift-tab"), Some(Command::PanePrev));
        assert_eq!(g("K"), Some(Command::Kill));
        assert_eq!(g("y"), Some(Command::Copy));
        assert_eq!(g("/"), Some(Command::Filter));
        assert_eq!(g(":"), Some(Command::CommandLine));
        assert_eq!(g("?"), Some(Command::Help));
        assert_eq!(g("enter"), Some(Command::Open));
        assert_eq!(a("a"), Some(Command::Answer));
        assert_eq!(a("enter"), Some(Command::Answer));
        assert_eq!(a("r"), Some(Command::Retry));
        assert_eq!(a("c"), Some(Command::Continue));
        assert_eq!(a("x"), Some(Command::Abort));
        assert_eq!(
            k.lookup(Context::Threads, chord("p")),
            Some(Command::Promote)
        );
        assert_eq!(k.lookup(Context::Threads, chord("r")), Some(Command::Reply));
        assert_eq!(
            k.lookup(Context::AnswerForm, chord("alt-enter")),
            Some(Command::Newline)
        );
        assert_eq!(
            k.lookup(Context::Dialog, chord("y")),
            Some(Command::Confirm)
        );
    }

    #[test]
    fn overrides_replace_and_add() {
        let k = Keymap::with_overrides(
            "keymap.toml",
            "[[tree]]\non = \"space\"\nrun = \"open\"\ndesc = \"Open\"\n[[tree]]\non = \"o\"\nrun = \"open\"\n",
        )
        .unwrap();
        assert_eq!(k.lookup(Context::Tree, chord("space")), Some(Command::Open));
        assert_eq!(k.lookup(Context::Tree, chord("o")), Some(Command::Open));
        assert_eq!(k.lookup(Context::Tree, chord("h")), Some(Command::Fold));
    }

    #[test]
    fn bad_entries_name_the_entry() {
        let e = Keymap::with_overrides("keymap.toml", "[[tree]]\non = \"x\"\nrun = \"explode\"\n")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "keymap keymap.toml: [tree] entry 1 (on = \"x\"): unknown command \"explode\""
        );
        let e =
            Keymap::with_overrides("keymap.toml", "[[dag]]\non = \"hyper-x\"\nrun = \"open\"\n")
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "keymap keymap.toml: [dag] entry 1 (on = \"hyper-x\"): unknown key \"hyper-x\""
        );
        let e = Keymap::with_overrides(
            "keymap.toml",
            "[[global]]\non = \"1\"\nrun = \"pane nowhere\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown pane \"nowhere\""), "{e}");
        let e = Keymap::with_overrides("keymap.toml", "[[nowhere]]\non = \"1\"\nrun = \"quit\"\n")
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("keymap keymap.toml: unknown field `nowhere`"),
            "{e}"
        );
    }

    #[test]
    fn markdown_table_lists_every_context() {
        let md = keys_markdown();
        assert!(md.starts_with("| Context | Keys | Action |"));
        for ctx in Context::ALL {
            assert!(
                md.contains(&format!("| {} |", ctx.name())),
                "{}",
                ctx.name()
            );
        }
        assert!(md.contains("| global | `j` `↓` | Down |"));
    }
}
