//! Finding candidate `gitmoot_result` objects in raw agent output.
//!
//! Owns only the text search: which byte ranges might hold the result, in the order they
//! are tried. It never decodes JSON; `decode` and `validate` judge each candidate.
//!
//! The order is the contract's: the whole (trimmed) output when it starts with `{`, then
//! every balanced `{…}` that contains the literal `"gitmoot_result"`, by start position.
//! Each balanced object is found by a brace count that starts fresh (outside any string)
//! at its own `{`, ignores braces inside double-quoted strings and honours backslash
//! escapes inside them.
//!
//! Doing that count once per `{` costs O(braces × length), which a 1 MiB output full of
//! prose braces turns into seconds. Instead one pass follows the three states a fresh
//! count can be in at each byte (outside a string, inside one, just after a backslash in
//! one). Every count started at some `{` is on exactly one of these tracks; counts on the
//! same track see the same bytes the same way from then on, so they can share one stack of
//! open braces. Tracks that land in the same state merge their stacks level by level. Each
//! `{` opens one level and merges only remove levels, so the pass is linear in practice.

/// The literal every candidate must contain.
pub(crate) const MARKER: &str = "\"gitmoot_result\"";

/// A candidate byte range `start..end` of the output, in trial order.
pub(crate) type Span = std::ops::Range<usize>;

/// Every candidate span of `raw`, in the order the contract tries them, without repeats.
pub fn candidates(raw: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let trimmed_start = raw.len() - raw.trim_start().len();
    let trimmed_end = raw.trim_end().len();
    if raw[trimmed_start..].starts_with('{') {
        out.push(trimmed_start..trimmed_end);
    }
    let bytes = raw.as_bytes();
    let markers: Vec<usize> = raw.match_indices(MARKER).map(|(i, _)| i).collect();
    if markers.is_empty() {
        return out;
    }
    for (start, close) in balanced_objects(bytes) {
        let end = close + 1;
        // Brace spans are unique by start; only the whole-output span can repeat one.
        if contains_marker(&markers, start, end) && out.first() != Some(&(start..end)) {
            out.push(start..end);
        }
    }
    out
}

/// Whether a marker lies wholly inside `start..end`.
fn contains_marker(markers: &[usize], start: usize, end: usize) -> bool {
    let first = markers.partition_point(|&m| m < start);
    markers.get(first).is_some_and(|&m| m + MARKER.len() <= end)
}

/// The bytes that can change a track: quote, backslash and the two braces.
const SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[b'{' as usize] = true;
    table[b'}' as usize] = true;
    table
};

/// For every `{` that a fresh count closes, `(open, close)` byte positions, by `open`.
pub fn balanced_objects(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut arena = Arena::default();
    // Index 0: outside a string; 1: inside; 2: inside, right after a backslash.
    let mut tracks: [Stack; 3] = Default::default();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let [out, inside, esc] = std::mem::take(&mut tracks);
        tracks = match b {
            b'"' => {
                // out -> inside, inside -> out, esc -> inside.
                let joined = merge(&mut arena, out, esc);
                [inside, joined, Stack::default()]
            }
            b'\\' => [out, esc, inside],
            b'{' => {
                let mut out = out;
                out.levels.push(arena.single(i));
                [out, merge(&mut arena, inside, esc), Stack::default()]
            }
            b'}' => {
                let mut out = out;
                if let Some(level) = out.levels.pop() {
                    arena.close(level, i);
                }
                [out, merge(&mut arena, inside, esc), Stack::default()]
            }
            _ => [out, merge(&mut arena, inside, esc), Stack::default()],
        };
        i += 1;
        // Once the after-backslash track is empty, ordinary bytes change no track, so
        // jump to the next byte that can.
        if tracks[2].levels.is_empty() {
            i += bytes[i..]
                .iter()
                .position(|&b| SPECIAL[b as usize])
                .unwrap_or(bytes.len() - i);
        }
    }
    let mut found: Vec<(usize, usize)> = arena
        .opens
        .iter()
        .zip(&arena.closes)
        .filter_map(|(&open, &close)| close.map(|c| (open, c)))
        .collect();
    found.sort_unstable();
    found
}

/// Open braces that close together: a linked list of arena items.
#[derive(Debug, Clone, Copy)]
struct Level {
    head: usize,
    tail: usize,
}

/// The open-brace levels of one track, innermost last.
#[derive(Debug, Default)]
struct Stack {
    levels: Vec<Level>,
}

/// Storage for every `{` seen outside a string by some count.
#[derive(Debug, Default)]
struct Arena {
    opens: Vec<usize>,
    closes: Vec<Option<usize>>,
    next: Vec<Option<usize>>,
}

impl Arena {
    fn single(&mut self, open: usize) -> Level {
        let id = self.opens.len();
        self.opens.push(open);
        self.closes.push(None);
        self.next.push(None);
        Level { head: id, tail: id }
    }

    fn concat(&mut self, a: Level, b: Level) -> Level {
        self.next[a.tail] = Some(b.head);
        Level {
            head: a.head,
            tail: b.tail,
        }
    }

    fn close(&mut self, level: Level, at: usize) {
        let mut item = Some(level.head);
        while let Some(id) = item {
            self.closes[id] = Some(at);
            item = self.next[id];
        }
    }
}

/// Joins two tracks that are now in the same state: levels align from the innermost.
fn merge(arena: &mut Arena, a: Stack, b: Stack) -> Stack {
    let (mut long, short) = if a.levels.len() >= b.levels.len() {
        (a, b)
    } else {
        (b, a)
    };
    let offset = long.levels.len() - short.levels.len();
    for (k, level) in short.levels.into_iter().enumerate() {
        let slot = &mut long.levels[offset + k];
        *slot = arena.concat(*slot, level);
    }
    long
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious per-brace count, as the specification states it.
    fn naive(bytes: &[u8]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        for start in 0..bytes.len() {
            if bytes[start] != b'{' {
                continue;
            }
            let (mut depth, mut in_str, mut esc) = (0usize, false, false);
            for (i, &b) in bytes.iter().enumerate().skip(start) {
                if in_str {
                    if esc {
                        esc = false;
                    } else if b == b'\\' {
                        esc = true;
                    } else if b == b'"' {
                        in_str = false;
                    }
                    continue;
                }
                match b {
                    b'"' => in_str = true,
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            found.push((start, i));
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        found
    }

    #[test]
    fn matches_the_per_brace_count_on_tricky_text() {
        let cases = [
            r#"a {b} c"#,
            r#"say "x {y" then {"k": "v}"} end"#,
            r#"{"a": "\"{", "b": {"c": "\\"}} {"#,
            r#"}}{{}{"x":"\\\"}"}"#,
            r#"" { " { } " } ""#,
            "{\"a\\\"\": {\\}} }",
        ];
        for case in cases {
            assert_eq!(
                balanced_objects(case.as_bytes()),
                naive(case.as_bytes()),
                "{case}"
            );
        }
    }

    #[test]
    fn candidates_come_whole_output_first_then_by_start() {
        let raw =
            r#"  {"gitmoot_result": {"decision": "approved"}} trailing {"gitmoot_result": 1}"#;
        let spans: Vec<&str> = candidates(raw).into_iter().map(|s| &raw[s]).collect();
        assert_eq!(
            spans,
            [
                r#"{"gitmoot_result": {"decision": "approved"}} trailing {"gitmoot_result": 1}"#,
                r#"{"gitmoot_result": {"decision": "approved"}}"#,
                r#"{"gitmoot_result": 1}"#,
            ]
        );
    }

    #[test]
    fn objects_without_the_marker_are_not_candidates() {
        assert!(candidates(r#"text {"result": "see gitmoot_result"} more"#).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn linear_pass_equals_naive_count(s in "[{}\"\\\\a ]{0,40}") {
            proptest::prop_assert_eq!(balanced_objects(s.as_bytes()), naive(s.as_bytes()));
        }
    }
}
