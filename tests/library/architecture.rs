//! The house rules of ARCHITECTURE.md, checked against the source: the file-level import graph
//! inside `src/` has no circles, no room imports one it must not, and the `ui` and `types`
//! crates stay pure.
//!
//! It reads the files as text (std only): comments and string literals are blanked, then every
//! `crate::…` path, `super::…` path, `use` of a child module and (in `main.rs`) `gitmoot::…`
//! path is resolved to the deepest file that defines that module. A child file may use its
//! ancestors' items, so child → ancestor edges are not arrows.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Room arrows ARCHITECTURE.md forbids, as (from room, to room).
const FORBIDDEN: &[(&str, &str)] = &[
    ("runtime", "store"),
    ("store", "contract"),
    ("tui", "cli"),
    ("engine", "tui"),
    ("engine", "cli"),
    ("engine", "daemon"),
    ("engine", "runtime"),
    ("engine", "chat"),
    ("store", "engine"),
    ("store", "chat"),
    ("chat", "runtime"),
];

/// The rooms top-down; an arrow points only down this list. The last row is the shared
/// vocabulary, whose files may use each other.
const ROOMS: &[&[&str]] = &[
    &["main"],
    &["cli"],
    &["bench"],
    &["demo"],
    &["tui"],
    &["daemon"],
    &["chat"],
    &["worktree"],
    &["engine"],
    &["runtime"],
    &["registry"],
    &["report"],
    &["store"],
    &["config"],
    &["contract"],
    &["pid"],
    &[
        "domain", "clock", "ids", "duration", "home", "logging", "redact",
    ],
];

/// A module path inside the crate, e.g. `["store", "jobs"]`; empty is the crate root.
type ModPath = Vec<String>;

struct SourceFile {
    module: ModPath,
    text: String,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files of the crate whose sources are under `src`.
fn source_files(src: &Path) -> Vec<SourceFile> {
    let mut paths = Vec::new();
    collect(src, &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(src).expect("under src");
            let mut module: ModPath = rel
                .iter()
                .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            let last = module.last().cloned().unwrap_or_default();
            if matches!(last.as_str(), "mod" | "lib" | "main") {
                module.pop();
            }
            if last == "main" {
                // The binary reaches the library through `gitmoot::`; it is its own room.
                module = vec!["main".to_string()];
            }
            let raw = fs::read_to_string(&path).expect("readable source");
            SourceFile {
                module,
                text: strip(&raw),
            }
        })
        .collect()
}

/// Blanks comments, string and char literals so only code is scanned.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &src[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').map_or(b.len(), |n| i + n);
            i = end;
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            while i < b.len() {
                if src[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some(hashes) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = i + hashes + 2 + usize::from(rest.starts_with("br"));
            i = src[body..]
                .find(&close)
                .map_or(b.len(), |n| body + n + close.len());
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && is_char_literal(&b[i..]) {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            let ch = rest.chars().next().expect("non-empty");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The number of `#`s when `s` opens a raw string (`r"`, `r#"`, `br"` …).
fn raw_string_start(s: &str) -> Option<usize> {
    let s = s.strip_prefix('b').unwrap_or(s).strip_prefix('r')?;
    let hashes = s.bytes().take_while(|&c| c == b'#').count();
    (s.as_bytes().get(hashes) == Some(&b'"')).then_some(hashes)
}

/// A `'` opens a char literal (`'a'`, `'\n'`, `'é'`) rather than a lifetime (`'a`).
fn is_char_literal(b: &[u8]) -> bool {
    if b.get(1) == Some(&b'\\') {
        return true;
    }
    let text = String::from_utf8_lossy(&b[1..b.len().min(6)]).into_owned();
    let mut chars = text.chars();
    chars.next().is_some() && chars.next() == Some('\'')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every `a::b::c` path in `text`, each as its segments, with `use` groups expanded.
fn paths(text: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':');
        if starts_word && is_ident(chars[i]) {
            let (segments, next) = read_path(&chars, i, Vec::new(), &mut found);
            if segments.len() > 1 {
                found.push(segments);
            }
            i = next.max(i + 1);
        } else {
            i += 1;
        }
    }
    found
}

/// Reads one path from `i` onward, prefixed by `prefix`; a `{…}` group pushes each member to
/// `found` and ends the path.
fn read_path(
    chars: &[char],
    mut i: usize,
    mut segments: Vec<String>,
    found: &mut Vec<Vec<String>>,
) -> (Vec<String>, usize) {
    loop {
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if i == start {
            return (segments, i);
        }
        segments.push(chars[start..i].iter().collect());
        let mut j = i;
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        if !(chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':')) {
            return (segments, i);
        }
        j += 2;
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        if chars.get(j) == Some(&'{') {
            let mut k = j + 1;
            loop {
                while k < chars.len() && (chars[k].is_whitespace() || chars[k] == ',') {
                    k += 1;
                }
                if k >= chars.len() || chars[k] == '}' {
                    break;
                }
                let (member, next) = read_path(chars, k, segments.clone(), found);
                if member.len() > segments.len() {
                    found.push(member);
                }
                // Skip `as alias` and anything else up to the next member.
                k = next.max(k + 1);
                while k < chars.len() && chars[k] != ',' && chars[k] != '}' {
                    k += 1;
                }
            }
            return (Vec::new(), k + 1);
        }
        i = j;
    }
}

/// The module a path names, made absolute from `file`, or `None` when it is not ours.
fn absolute(file: &SourceFile, path: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    // Relative paths, `self` and `super` all start from the file's own module.
    let dir = &file.module;
    let head = path[0].as_str();
    let (mut base, rest): (ModPath, &[String]) = match head {
        "crate" => (Vec::new(), &path[1..]),
        "gitmoot" if file.module == ["main"] => (Vec::new(), &path[1..]),
        "self" => (dir.to_vec(), &path[1..]),
        "super" => {
            let mut base = dir.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        _ => {
            let mut child = dir.to_vec();
            child.push(head.to_string());
            if file.module != ["main"] && modules.contains(&child) {
                (dir.to_vec(), path)
            } else {
                return None;
            }
        }
    };
    for seg in rest {
        let mut deeper = base.clone();
        deeper.push(seg.clone());
        if !modules.contains(&deeper) {
            break;
        }
        base = deeper;
    }
    Some(base)
}

fn label(module: &ModPath) -> String {
    if module.is_empty() {
        "lib".to_string()
    } else {
        module.join("/")
    }
}

/// The file-level graph of the product crate.
fn graph() -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    graph_of(&root().join("src"))
}

/// The file-level graph of one crate: each file's module to the modules it references.
fn graph_of(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let files = source_files(src);
    let modules: BTreeSet<ModPath> = files.iter().map(|f| f.module.clone()).collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let targets: &mut BTreeSet<ModPath> = edges.entry(file.module.clone()).or_default();
        for path in paths(&file.text) {
            let Some(to) = absolute(file, &path, &modules) else {
                continue;
            };
            // A child may use its ancestors' items; the crate root is everyone's ancestor.
            if to == file.module || file.module.starts_with(&to) {
                continue;
            }
            targets.insert(to);
        }
    }
    edges
}

fn find_cycle(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &ModPath,
        edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        marks: &mut BTreeMap<ModPath, Mark>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = stack.iter().position(|n| n == node).expect("on stack");
                let mut cycle = stack[from..].to_vec();
                cycle.push(node.clone());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.clone(), Mark::Open);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut marks, &mut Vec::new()))
}

#[test]
fn the_file_graph_has_no_circles() {
    for src in [
        root().join("src"),
        root().join("ui/src"),
        root().join("types/src"),
    ] {
        if let Some(cycle) = find_cycle(&graph_of(&src)) {
            let shown: Vec<String> = cycle.iter().map(label).collect();
            panic!("import circle in {}: {}", src.display(), shown.join(" → "));
        }
    }
}

/// Every arrow between two rooms as `(from room, to room, "from → to")`, the label being
/// what a broken-rule message lists.
fn room_arrows(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<(&str, &str, String)> {
    edges
        .iter()
        .flat_map(|(from, targets)| targets.iter().map(move |to| (from, to)))
        .filter_map(|(from, to)| {
            let (a, b) = (from.first()?, to.first()?);
            Some((
                a.as_str(),
                b.as_str(),
                format!("{} → {}", label(from), label(to)),
            ))
        })
        .collect()
}

#[test]
fn no_room_imports_one_it_must_not() {
    let edges = graph();
    let broken: Vec<String> = room_arrows(&edges)
        .into_iter()
        .filter(|(a, b, _)| FORBIDDEN.contains(&(*a, *b)))
        .map(|(_, _, arrow)| arrow)
        .collect();
    assert!(
        broken.is_empty(),
        "forbidden arrows:\n{}",
        broken.join("\n")
    );
}

fn rank(room: &str) -> usize {
    ROOMS
        .iter()
        .position(|row| row.contains(&room))
        .unwrap_or_else(|| panic!("room {room} is not in ROOMS; place it in the table"))
}

#[test]
fn every_arrow_points_down_the_room_table() {
    let edges = graph();
    let broken: Vec<String> = room_arrows(&edges)
        .into_iter()
        .filter(|(a, b, _)| {
            let same_vocabulary = a != b && rank(a) == ROOMS.len() - 1 && rank(b) == rank(a);
            a != b && rank(a) >= rank(b) && !same_vocabulary
        })
        .map(|(_, _, arrow)| arrow)
        .collect();
    assert!(broken.is_empty(), "upward arrows:\n{}", broken.join("\n"));
}

/// The statements a string literal would start with if it were SQL.
const SQL_STARTS: [&str; 9] = [
    "SELECT ",
    "INSERT ",
    "UPDATE ",
    "DELETE ",
    "CREATE ",
    "PRAGMA ",
    "SAVEPOINT ",
    "RELEASE ",
    "ROLLBACK ",
];

/// `(line, text)` of every string literal in `text` that opens with an SQL statement.
fn sql_literals(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (i, _) in line.match_indices('"') {
            let rest = line[i + 1..].trim_start();
            if SQL_STARTS.iter().any(|k| rest.starts_with(k)) {
                out.push((n + 1, line.trim().to_string()));
            }
        }
    }
    out
}

/// Every file under `src/` but those `skip` names (by its path there), with its path there
/// and its text.
fn product_sources(skip: impl Fn(&str, &Path) -> bool) -> Vec<(PathBuf, String)> {
    let src = root().join("src");
    let mut paths = Vec::new();
    collect(&src, &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(&src).unwrap().to_path_buf();
            let room = rel.iter().next().unwrap().to_string_lossy().into_owned();
            (!skip(&room, &rel)).then(|| (rel, fs::read_to_string(&path).unwrap()))
        })
        .collect()
}

#[test]
fn sql_is_written_only_in_the_store_and_the_bench() {
    let mut found = Vec::new();
    for (rel, text) in product_sources(|room, _| room == "store" || room == "bench") {
        for (line, lit) in sql_literals(&text) {
            found.push(format!("src/{}:{line}: {lit}", rel.display()));
        }
    }
    assert!(
        found.is_empty(),
        "SQL outside src/store (move it into a store function):\n{}",
        found.join("\n")
    );
}

/// Every git call of the product starts from `worktree::git::command`, which skips git's
/// optional locks: a read of ours holding a worktree's `index.lock` would fail an agent's
/// commit there. The bench and the demo's scripted agent run git as a user would; tests
/// (a file's `#[cfg(test)]` tail) set repositories up.
#[test]
fn git_is_started_only_by_the_worktree_command() {
    let mut found = Vec::new();
    let skip = |room: &str, rel: &Path| {
        room == "bench" || room == "demo" || rel == Path::new("worktree/git.rs")
    };
    for (rel, text) in product_sources(skip) {
        let product = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in product.lines().enumerate() {
            if line.contains("Command::new(\"git\")") {
                found.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "git started outside worktree::git::command (use crate::worktree::git):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_sql_scanner_finds_statements_and_skips_prose() {
    let text = "let a = \"SELECT id FROM jobs\";\nlet b = \"select the job\";\n    \"  UPDATE jobs SET x = 1\",";
    let found: Vec<usize> = sql_literals(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, [1, 3]);
}

/// A room's file past this many lines holds more than one thing (issue 17's bound).
const MAX_FILE_LINES: usize = 600;

#[test]
fn no_product_file_outgrows_one_room() {
    let mut long = Vec::new();
    for dir in ["src", "ui/src", "types/src"] {
        let mut paths = Vec::new();
        collect(&root().join(dir), &mut paths);
        for path in paths {
            let lines = fs::read_to_string(&path).unwrap().lines().count();
            if lines > MAX_FILE_LINES {
                long.push(format!("{} ({lines} lines)", path.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split along its seams:\n{}",
        long.join("\n")
    );
}

/// A function a reader can hold: at most this many lines from `fn` to its closing brace.
const MAX_FN_LINES: usize = 120;

/// Each function body in `text` (comments and literals already blanked) as (line of its
/// `fn`, lines from there to its closing brace, its name). A `fn` followed by `;` before any
/// `{` is a declaration without a body and is skipped.
fn function_lengths(text: &str) -> Vec<(usize, usize, String)> {
    let bytes = text.as_bytes();
    let line_at = |i: usize| text[..i].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(off) = text[at..].find("fn ") {
        let start = at + off;
        at = start + 3;
        if start > 0 && is_ident(bytes[start - 1] as char) {
            continue;
        }
        let name: String = text[at..].chars().take_while(|&c| is_ident(c)).collect();
        let Some(open) = text[at..].find(['{', ';']).map(|i| at + i) else {
            break;
        };
        if bytes[open] == b';' || name.is_empty() {
            continue;
        }
        let mut depth = 0usize;
        let mut close = None;
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        found.push((line_at(start), line_at(close) - line_at(start) + 1, name));
    }
    found
}

#[test]
fn no_product_function_outgrows_a_reader() {
    let mut long = Vec::new();
    for dir in ["src", "ui/src", "types/src"] {
        let mut paths = Vec::new();
        collect(&root().join(dir), &mut paths);
        for path in paths {
            let text = strip(&fs::read_to_string(&path).unwrap());
            for (line, lines, name) in function_lengths(&text) {
                if lines > MAX_FN_LINES {
                    long.push(format!(
                        "{}:{line} fn {name} ({lines} lines)",
                        path.display()
                    ));
                }
            }
        }
    }
    assert!(long.is_empty(), "split at its seams:\n{}", long.join("\n"));
}

#[test]
fn the_function_scanner_measures_bodies_and_skips_declarations() {
    let text = strip("trait T { fn decl(&self); }\nfn two() {\n    if x { y() }\n}\nfn one() {}");
    assert_eq!(
        function_lengths(&text),
        [(2, 3, "two".to_string()), (5, 1, "one".to_string())]
    );
}

#[test]
fn only_the_bench_verb_imports_the_bench() {
    let edges = graph();
    let verb = vec!["cli".to_string()];
    let broken: Vec<String> = edges
        .iter()
        .filter(|(from, _)| from.first().is_some_and(|r| r != "bench") && **from != verb)
        .flat_map(|(from, targets)| {
            targets
                .iter()
                .filter(|to| to.first().is_some_and(|r| r == "bench"))
                .map(move |to| format!("{} → {}", label(from), label(to)))
        })
        .collect();
    assert!(
        broken.is_empty(),
        "bench imported by:\n{}",
        broken.join("\n")
    );
}

/// Every file under `dir` whose code (comments and strings blanked) names one of `words`
/// as a path's first segment, as "file uses word".
fn naming(dir: &str, words: &[&str]) -> Vec<String> {
    let mut paths = Vec::new();
    collect(&root().join(dir), &mut paths);
    assert!(!paths.is_empty(), "{dir} has sources");
    let mut broken = Vec::new();
    for path in paths {
        let code = strip(&fs::read_to_string(&path).expect("readable source"));
        for word in words {
            let hit = code
                .match_indices(word)
                .any(|(at, _)| at == 0 || !code[..at].chars().next_back().is_some_and(is_ident));
            if hit {
                broken.push(format!("{} uses {word}", path.display()));
            }
        }
    }
    broken
}

#[test]
fn the_ui_crate_is_pure() {
    let broken = naming("ui/src", &["gitmoot::", "rusqlite", "tokio"]);
    assert!(broken.is_empty(), "ui is not pure:\n{}", broken.join("\n"));
}

/// The cells of one Markdown table row as GitHub splits them: on every `|` not escaped
/// with a backslash, code spans included.
fn table_cells(row: &str) -> usize {
    let row = row.trim();
    let bars = row
        .char_indices()
        .filter(|&(i, c)| c == '|' && !row[..i].ends_with('\\'))
        .count();
    bars.saturating_sub(1)
}

#[test]
fn every_row_of_the_room_table_has_the_headers_cells() {
    let doc = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut broken = Vec::new();
    let mut header: Option<usize> = None;
    let mut tables = 0;
    for (n, line) in doc.lines().enumerate() {
        if !line.trim_start().starts_with('|') {
            header = None;
            continue;
        }
        let cells = table_cells(line);
        match header {
            None => {
                header = Some(cells);
                tables += 1;
            }
            Some(want) if cells != want => {
                broken.push(format!("line {}: {cells} cells, not {want}", n + 1));
            }
            Some(_) => {}
        }
    }
    assert!(tables > 0, "ARCHITECTURE.md has its room table");
    assert!(
        broken.is_empty(),
        "a row GitHub would render short or long (escape a `|` in a cell as `\\|`):\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_table_scanner_splits_on_unescaped_bars_only() {
    assert_eq!(table_cells("| a | b | c |"), 3);
    assert_eq!(table_cells("| `x` | `clone(A | B)` | c |"), 4);
    assert_eq!(table_cells("| `x` | `clone(A \\| B)` | c |"), 3);
}

/// The vocabulary crate is what both other crates import, so it names neither of them nor a
/// database, an async runtime or a terminal, and its manifest asks for serde alone.
#[test]
fn the_vocabulary_crate_is_pure() {
    let words = [
        "gitmoot::",
        "gitmoot_ui",
        "rusqlite",
        "postgres",
        "tokio",
        "ratatui",
        "crossterm",
    ];
    let broken = naming("types/src", &words);
    assert!(
        broken.is_empty(),
        "the vocabulary is not pure:\n{}",
        broken.join("\n")
    );
    let manifest = fs::read_to_string(root().join("types/Cargo.toml")).expect("types manifest");
    let deps: Vec<&str> = manifest
        .split("[dependencies]")
        .nth(1)
        .expect("a [dependencies] table")
        .lines()
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter_map(|l| l.split(['=', '.']).next().map(str::trim))
        .filter(|name| !name.is_empty() && !name.starts_with('#'))
        .collect();
    assert_eq!(deps, ["serde"], "gitmoot-types depends on serde only");
}

#[test]
fn the_scanner_reads_use_groups_and_skips_comments() {
    let text = strip(
        "// crate::cli::x\nuse crate::{store::{jobs::Job, Store as S}, engine};\n\
         let s = \"crate::tui\"; let c = '\"'; fn f<'a>() { super::sib::g() }",
    );
    let found: Vec<String> = paths(&text).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        [
            "crate::store::jobs::Job",
            "crate::store::Store",
            "crate::engine",
            "super::sib::g"
        ]
    );
}
