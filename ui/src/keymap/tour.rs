//! README's tour of `gitmoot demo` as data: each step names the keymap commands it presses
//! (so README and the walk press whatever keys the keymap binds), the text it types and
//! what the screen shows after it. `tour_markdown` writes README's list; the room test
//! `demo_walk` presses through the same steps at 80×24 and 120×36.

use super::{Command, Context, Keymap};

/// One thing a step does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Press {
    /// The key the keymap binds to the command (`run` name) in the context.
    Key(Context, &'static str),
    /// `down` until the selected row of the focused list shows `.1` (README names it `.0`):
    /// the attention list's order follows the scene's timing, and rows move as trees end.
    Select(&'static str, &'static str),
    /// Text typed as is.
    Type(&'static str),
    /// A key the line being edited owns (`Tab`, `Enter`), not a keymap command.
    Line(&'static str),
}

/// One step of the tour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub presses: &'static [Press],
    /// What README says the step does.
    pub says: &'static str,
    /// A text on the screen once the step is done (`*` between parts: on one line, in
    /// that order).
    pub shows: &'static str,
}

use Press::{Key, Line, Select, Type};

/// The tour, in order: answer the question, retry the failed leg, review and land the
/// coder's work, look around, quit.
pub const TOUR: &[Step] = &[
    Step {
        presses: &[Key(Context::Global, "pane attention")],
        says: "Attention: every question and failure waiting for you, oldest first, with its \
               choices, why and age.",
        shows: "┏ 1 Attention",
    },
    Step {
        presses: &[
            Select("the question", "? ask"),
            Key(Context::Attention, "answer"),
        ],
        says: "Select the question and open its answer form.",
        shows: "Answer job-",
    },
    Step {
        presses: &[
            Key(Context::AnswerForm, "down"),
            Key(Context::AnswerForm, "submit"),
        ],
        says: "Pick the second choice and submit it: the tree goes on with your answer.",
        shows: "answered",
    },
    Step {
        presses: &[
            Select("the failed leg", "✗ failure"),
            Key(Context::Attention, "retry"),
            Type("use the local redis"),
            Key(Context::AnswerForm, "submit"),
        ],
        says: "Select the failed leg, retry it with instructions; the tree then finishes.",
        shows: "Nothing waits for you",
    },
    Step {
        presses: &[
            Key(Context::Global, "pane tree"),
            Select("the coder's job", "Log why a session"),
            Key(Context::Global, "open"),
            Key(Context::Detail, "section_next"),
            Key(Context::Detail, "section_next"),
        ],
        says: "The job tree, roots newest first: open the coder's implement job (`Log why a \
               session refresh failed`) in the detail drawer, on its diff tab.",
        shows: "file 1/2",
    },
    Step {
        presses: &[
            Key(Context::Detail, "hunk_next"),
            Key(Context::Global, "down"),
            Key(Context::Detail, "comment"),
            Type("also say which session it was"),
            Key(Context::AnswerForm, "submit"),
        ],
        says: "Go to the hunk and down to the added line, and comment on it.",
        shows: "kept (1 for",
    },
    Step {
        presses: &[
            Key(Context::Detail, "review"),
            Key(Context::Dialog, "confirm"),
        ],
        says: "Send the work back with the comment: the coder runs again in its worktree, and \
               its row shows the round (`↻1`) once it is done.",
        shows: "✓ job-*↻1",
    },
    Step {
        presses: &[
            Key(Context::Detail, "land"),
            Key(Context::Dialog, "confirm"),
        ],
        says: "Land it on the checkout's `main`.",
        shows: "landed job-",
    },
    Step {
        presses: &[
            Key(Context::Detail, "back"),
            Key(Context::Global, "pane threads"),
        ],
        says: "Close the drawer; the threads, inboxes and the open thread's transcript.",
        shows: "promote",
    },
    Step {
        presses: &[
            Key(Context::Global, "command"),
            Type("jo"),
            Line("Tab"),
            Type("li"),
            Line("Tab"),
            Type("--ag"),
            Line("Tab"),
            Type("ru"),
            Line("Tab"),
            Line("Enter"),
        ],
        says: "The command line runs the CLI's verbs; Tab completes verbs, flags and values \
               (here `job list --agent runner`), and the output opens in a pager.",
        shows: ":job list --agent runner ·",
    },
    Step {
        presses: &[Key(Context::Global, "back"), Key(Context::Global, "help")],
        says: "Close it; every key of every pane.",
        shows: "keys ·",
    },
    Step {
        presses: &[Key(Context::Global, "back"), Key(Context::Global, "quit")],
        says: "Close it and quit (with work still running, it asks whether to detach, wait or \
               kill).",
        shows: "",
    },
];

/// The key README names for a press of `command` in `ctx`: the keymap's first binding.
pub fn key_name(keymap: &Keymap, ctx: Context, command: &str) -> String {
    let command: Command = command.parse().expect("the tour names keymap commands");
    keymap
        .key_for(ctx, command)
        .unwrap_or_else(|| panic!("the keymap binds {command:?} in {}", ctx.name()))
}

/// README's tour: one numbered line a step, its keys from the built-in keymap.
pub fn tour_markdown() -> String {
    let k = Keymap::builtin();
    let mut out = String::new();
    for (i, step) in TOUR.iter().enumerate() {
        let keys: Vec<String> = step
            .presses
            .iter()
            .map(|p| match p {
                Key(ctx, command) => format!("`{}`", key_name(&k, *ctx, command)),
                Select(what, _) => format!(
                    "`{}`/`{}` to {what}",
                    key_name(&k, Context::Global, "down"),
                    key_name(&k, Context::Global, "up")
                ),
                Type(text) => format!("type `{text}`"),
                Line(key) => format!("`{key}`"),
            })
            .collect();
        out.push_str(&format!("{}. {} — {}\n", i + 1, keys.join(", "), step.says));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_names_a_bound_key() {
        let md = tour_markdown();
        assert!(md.starts_with("1. `1` — Attention"), "{md}");
        assert!(md.contains("`j`/`k` to the question, `a` — "), "{md}");
        assert_eq!(md.lines().count(), TOUR.len());
    }
}
