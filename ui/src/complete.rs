//! The `:` line's helpers: which lines only read (allowed in `--readonly`) and Tab
//! completion over the CLI tree the glue hands in (`State::completions`).
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
/// candidates to show.
pub fn complete(tree: &CompletionTree, line: &str) -> (String, Vec<String>) {
    let ends_in_space = line.is_empty() || line.ends_with(' ');
    let mut words: Vec<&str> = line.split_whitespace().collect();
    let partial = if ends_in_space {
        ""
    } else {
        words.pop().unwrap_or("")
    };
    let mut node = tree;
    for w in &words {
        if w.starts_with('-') {
            continue;
        }
        match node.children.iter().find(|c| c.name == *w) {
            Some(c) => node = c,
            // A value (an id, a prompt): complete flags of the command reached so far.
            None => continue,
        }
    }
    let pool: Vec<&str> = if partial.starts_with('-') {
        node.flags.iter().map(String::as_str).collect()
    } else {
        node.children.iter().map(|c| c.name.as_str()).collect()
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
        };
        CompletionTree {
            name: "gitmoot".into(),
            flags: Vec::new(),
            children: vec![
                CompletionTree {
                    name: "job".into(),
                    flags: Vec::new(),
                    children: vec![
                        leaf("list", &["--state", "--json"]),
                        leaf("show", &["--json"]),
                        leaf("kill", &["--force"]),
                    ],
                },
                leaf("chat", &[]),
                leaf("config", &[]),
            ],
        }
    }

    #[test]
    fn tab_completes_verbs_and_flags() {
        let t = tree();
        assert_eq!(complete(&t, "jo"), ("job ".into(), vec![]));
        assert_eq!(complete(&t, "job l"), ("job list ".into(), vec![]));
        assert_eq!(
            complete(&t, "c"),
            ("c".into(), vec!["chat".into(), "config".into()])
        );
        assert_eq!(
            complete(&t, "job list --s"),
            ("job list --state ".into(), vec![])
        );
        assert_eq!(
            complete(&t, "job show job-1 --j"),
            ("job show job-1 --json ".into(), vec![])
        );
        assert_eq!(complete(&t, "zz"), ("zz".into(), vec![]));
        assert_eq!(complete(&t, "job ").1.len(), 3);
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
