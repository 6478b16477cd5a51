//! The `:` line's helpers: which lines only read (allowed in `--readonly`) and Tab
//! completion over the CLI tree the glue hands in (`State::completions`): verbs, flags,
//! and the values that name something on screen (job ids, agents, threads, repos, states).
//!
//! Owns word-level logic on plain strings; must not run anything.

/// The CLI's verbs as a tree, for Tab completion on the `:` line. The glue builds it from
/// the clap definition, so completion can never offer a verb the CLI lacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompletionTree {
    pub name: String,
    pub children: Vec<CompletionTree>,
    /// Long options (`--agent`) of this command.
    pub flags: Vec<String>,
    /// The long options that take a value, with what that value names (`None`: free text).
    pub valued: Vec<(String, Option<ValueKind>)>,
    /// What each positional argument names, in order (`None`: free text such as a prompt).
    pub positionals: Vec<Option<ValueKind>>,
}

/// What an argument's value names, so Tab can offer the ones that exist.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueKind {
    Job,
    Agent,
    Thread,
    Repo,
    /// One of a fixed set (a state, a runtime, a policy).
    Choice(Vec<String>),
}

/// The names on screen that values complete from (the glue's snapshot, not the store).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Names {
    pub jobs: Vec<String>,
    pub agents: Vec<String>,
    pub threads: Vec<String>,
    pub repos: Vec<String>,
}

impl Names {
    fn of<'a>(&'a self, kind: &'a ValueKind) -> &'a [String] {
        match kind {
            ValueKind::Job => &self.jobs,
            ValueKind::Agent => &self.agents,
            ValueKind::Thread => &self.threads,
            ValueKind::Repo => &self.repos,
            ValueKind::Choice(choices) => choices,
        }
    }
}

/// Verbs (the word after the command group) that never change the store.
const READ_VERBS: [&str; 10] = [
    "list", "show", "tree", "events", "logs", "pending", "inbox", "status", "path", "check",
];

/// Commands that only read whatever follows them.
const READ_COMMANDS: [&str; 2] = ["search", "usage"];

/// Whether a `:` line only reads: a read verb, a read command, or asking for help.
pub fn is_read_command(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.iter().any(|w| *w == "--help" || *w == "-h") || words.first() == Some(&"help") {
        return true;
    }
    words.first().is_some_and(|c| READ_COMMANDS.contains(c))
        || words.get(1).is_some_and(|v| READ_VERBS.contains(v))
}

/// What Tab does to `line`: the completed line and, when several words fit, the
/// candidates to show. A verb's value (`job show <Tab>`, `--agent <Tab>`) completes from
/// `names`.
pub fn complete(tree: &CompletionTree, names: &Names, line: &str) -> (String, Vec<String>) {
    let ends_in_space = line.is_empty() || line.ends_with(' ');
    let mut words: Vec<&str> = line.split_whitespace().collect();
    let partial = if ends_in_space {
        ""
    } else {
        words.pop().unwrap_or("")
    };
    let (node, slot) = walk(tree, &words);
    let pool: Vec<&str> = match slot {
        Slot::FlagValue(kind) => kind
            .map_or(&[][..], |k| names.of(k))
            .iter()
            .map(String::as_str)
            .collect(),
        _ if partial.starts_with('-') => node.flags.iter().map(String::as_str).collect(),
        Slot::Word(_) if !node.children.is_empty() => {
            node.children.iter().map(|c| c.name.as_str()).collect()
        }
        Slot::Word(n) => match node.positionals.get(n) {
            Some(Some(kind)) => names.of(kind).iter().map(String::as_str).collect(),
            _ => Vec::new(),
        },
    };
    let hits: Vec<String> = pool
        .into_iter()
        .filter(|c| c.starts_with(partial))
        .map(str::to_string)
        .collect();
    let head = &line[..line.len() - partial.len()];
    match hits.as_slice() {
        [] => (line.to_string(), Vec::new()),
        [one] => (format!("{head}{one} "), Vec::new()),
        many => {
            let common = common_prefix(many);
            let line = if common.len() > partial.len() {
                format!("{head}{common}")
            } else {
                line.to_string()
            };
            (line, hits)
        }
    }
}

/// Where the next word of a line goes.
enum Slot<'a> {
    /// The value of the flag before it (what it names, if anything).
    FlagValue(Option<&'a ValueKind>),
    /// A subcommand, a flag, or the command's positional argument of this index.
    Word(usize),
}

/// The command `words` reach and what the word after them is.
fn walk<'a>(tree: &'a CompletionTree, words: &[&str]) -> (&'a CompletionTree, Slot<'a>) {
    let mut node = tree;
    let mut positional = 0;
    let mut value_of: Option<Option<&ValueKind>> = None;
    for w in words {
        if value_of.take().is_some() {
            continue;
        }
        if w.starts_with('-') {
            value_of = node
                .valued
                .iter()
                .find(|(f, _)| f == w)
                .map(|(_, kind)| kind.as_ref());
            continue;
        }
        match node.children.iter().find(|c| c.name == *w) {
            Some(c) if positional == 0 => node = c,
            _ => positional += 1,
        }
    }
    let slot = match value_of {
        Some(kind) => Slot::FlagValue(kind),
        None => Slot::Word(positional),
    };
    (node, slot)
}

fn common_prefix(words: &[String]) -> String {
    let first = &words[0];
    let mut n = first.len();
    for w in &words[1..] {
        n = n.min(
            first
                .chars()
                .zip(w.chars())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a.len_utf8())
                .sum(),
        );
    }
    first[..n].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> CompletionTree {
        let leaf = |n: &str, flags: &[&str]| CompletionTree {
            name: n.into(),
            children: Vec::new(),
            flags: flags.iter().map(|f| f.to_string()).collect(),
            ..CompletionTree::default()
        };
        let states = vec!["queued".into(), "running".into(), "failed".into()];
        CompletionTree {
            name: "gitmoot".into(),
            children: vec![
                CompletionTree {
                    name: "job".into(),
                    children: vec![
                        CompletionTree {
                            valued: vec![
                                ("--state".into(), Some(ValueKind::Choice(states))),
                                ("--agent".into(), Some(ValueKind::Agent)),
                                ("--limit".into(), None),
                            ],
                            ..leaf("list", &["--state", "--agent", "--limit", "--json"])
                        },
                        CompletionTree {
                            positionals: vec![Some(ValueKind::Job)],
                            ..leaf("show", &["--json"])
                        },
                        leaf("kill", &["--force"]),
                    ],
                    ..CompletionTree::default()
                },
                leaf("chat", &[]),
                leaf("config", &[]),
            ],
            ..CompletionTree::default()
        }
    }

    fn names() -> Names {
        Names {
            jobs: vec!["job-abc".into(), "job-abc/a".into(), "job-xyz".into()],
            agents: vec!["lead".into(), "scout".into()],
            ..Names::default()
        }
    }

    #[test]
    fn tab_completes_verbs_and_flags() {
        let t = tree();
        assert_eq!(
            complete(&t, &Names::default(), "jo"),
            ("job ".into(), vec![])
        );
        assert_eq!(
            complete(&t, &Names::default(), "job l"),
            ("job list ".into(), vec![])
        );
        assert_eq!(
            complete(&t, &Names::default(), "c"),
            ("c".into(), vec!["chat".into(), "config".into()])
        );
        assert_eq!(
            complete(&t, &Names::default(), "job list --s"),
            ("job list --state ".into(), vec![])
        );
        assert_eq!(
            complete(&t, &Names::default(), "job show job-1 --j"),
            ("job show job-1 --json ".into(), vec![])
        );
        assert_eq!(complete(&t, &Names::default(), "zz"), ("zz".into(), vec![]));
        assert_eq!(complete(&t, &Names::default(), "job ").1.len(), 3);
    }

    #[test]
    fn tab_completes_the_values_a_verb_takes() {
        let (t, n) = (tree(), names());
        assert_eq!(
            complete(&t, &n, "job show job-x"),
            ("job show job-xyz ".into(), vec![])
        );
        assert_eq!(
            complete(&t, &n, "job show job-a"),
            (
                "job show job-abc".into(),
                vec!["job-abc".into(), "job-abc/a".into()]
            )
        );
        assert_eq!(complete(&t, &n, "job show ").1.len(), 3);
        assert_eq!(
            complete(&t, &n, "job list --agent s"),
            ("job list --agent scout ".into(), vec![])
        );
        assert_eq!(
            complete(&t, &n, "job list --agent lead --state f"),
            ("job list --agent lead --state failed ".into(), vec![])
        );
        // A free-text value offers nothing; the word after it is a flag again.
        assert_eq!(
            complete(&t, &n, "job list --limit "),
            ("job list --limit ".into(), vec![])
        );
        assert_eq!(
            complete(&t, &n, "job list --limit 5 --j"),
            ("job list --limit 5 --json ".into(), vec![])
        );
        // The second positional of `show` is nothing it knows.
        assert_eq!(
            complete(&t, &n, "job show job-abc j"),
            ("job show job-abc j".into(), vec![])
        );
    }

    #[test]
    fn read_verbs_are_told_from_writes() {
        assert!(is_read_command("job list"));
        assert!(is_read_command("chat show room"));
        assert!(is_read_command("job kill --help"));
        assert!(!is_read_command("job kill job-1"));
        assert!(!is_read_command("chat send room hi"));
        assert!(!is_read_command("job"));
        assert!(is_read_command("search flaky login"));
        assert!(is_read_command("usage --by root"));
    }
}
