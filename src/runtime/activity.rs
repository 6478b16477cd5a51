//! Live activity: turning a runtime's output lines, as they arrive, into activity records
//! (a kind, a one-line summary, a capped detail) and running usage figures.
//!
//! Owns the scaffold every adapter shares: JSON decoding, non-JSON and stderr lines,
//! sanitizing and capping. Each adapter only says how to read one of its JSON events
//! (`read_event` in its own file). Knows nothing of the store: the daemon decides when
//! and where records are written. The job's result is still read from the captured
//! output at exit (`runtime::interpret`), never from these records.

use serde_json::Value;

use super::process::{OutputLine, OutputStream};
use crate::domain::RuntimeKind;

/// Longest summary kept, in characters.
pub(crate) const SUMMARY_MAX: usize = 200;
/// Longest detail kept, in bytes.
pub(crate) const DETAIL_MAX: usize = 8 * 1024;

pub use gitmoot_types::ActivityKind;

/// One step of a running agent, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    pub kind: ActivityKind,
    /// One sanitized line, at most `SUMMARY_MAX` characters.
    pub summary: String,
    /// At most `DETAIL_MAX` bytes; `None` when the summary says it all.
    pub detail: Option<String>,
}

impl Activity {
    pub fn new(kind: ActivityKind, summary: &str, detail: Option<&str>) -> Self {
        let summary = summarize(summary);
        let detail = detail
            .map(|d| cap_detail(d.trim_end()))
            .filter(|d| !d.is_empty() && *d != summary);
        Self {
            kind,
            summary,
            detail,
        }
    }

    /// Bytes this record occupies against a job's cap.
    pub fn size(&self) -> usize {
        self.summary.len() + self.detail.as_ref().map_or(0, String::len)
    }
}

/// Running token and cost figures of a job, as far as its stream has told.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveUsage {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
    /// The vendor's cost, when the runtime reports one.
    pub cost_usd: Option<f64>,
}

impl LiveUsage {
    /// What token budgets count: input plus output (cache figures are separate).
    pub fn tokens(&self) -> u64 {
        self.tokens_in + self.tokens_out
    }

    fn add(&mut self, o: &LiveUsage) {
        self.tokens_in += o.tokens_in;
        self.tokens_out += o.tokens_out;
        self.cache_read += o.cache_read;
        self.cache_creation += o.cache_creation;
        if let Some(c) = o.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}

/// What an adapter's `read_event` may touch for one JSON event.
pub(crate) struct EventSink<'a> {
    pub out: &'a mut Vec<Activity>,
    /// Usage of the run in progress, replaced as the stream reports it.
    pub current: &'a mut LiveUsage,
    /// The run's final usage arrived: fold `current` into the job's total.
    pub run_done: &'a mut bool,
    /// Adapter memory across events (e.g. claude message ids already counted).
    pub seen: &'a mut Vec<String>,
}

impl EventSink<'_> {
    pub fn push(&mut self, kind: ActivityKind, summary: &str, detail: Option<&str>) {
        self.out.push(Activity::new(kind, summary, detail));
    }
}

/// Reads a runtime's output stream line by line, over all the runs of one job.
#[derive(Debug)]
pub struct StreamParser {
    kind: RuntimeKind,
    finished: LiveUsage,
    current: LiveUsage,
    seen: Vec<String>,
}

impl StreamParser {
    pub fn new(kind: RuntimeKind) -> Self {
        Self {
            kind,
            finished: LiveUsage::default(),
            current: LiveUsage::default(),
            seen: Vec::new(),
        }
    }

    /// The records one line yields (often none, sometimes several).
    pub fn line(&mut self, line: &OutputLine) -> Vec<Activity> {
        let text = String::from_utf8_lossy(&line.bytes);
        // Only the end is trimmed: a line's indentation is part of what it says (stack
        // traces, nested output).
        let text = text.trim_end();
        let mut out = Vec::new();
        if text.trim_start().is_empty() {
            return out;
        }
        if line.stream == OutputStream::Stderr {
            out.push(Activity::new(ActivityKind::Stderr, text, Some(text)));
            return out;
        }
        let event = match self.kind {
            RuntimeKind::Shell => None,
            _ => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object),
        };
        let Some(event) = event else {
            out.push(Activity::new(ActivityKind::Output, text, Some(text)));
            return out;
        };
        let mut run_done = false;
        let mut sink = EventSink {
            out: &mut out,
            current: &mut self.current,
            run_done: &mut run_done,
            seen: &mut self.seen,
        };
        super::read_event(self.kind, &event, &mut sink);
        if run_done {
            self.finished.add(&self.current);
            self.current = LiveUsage::default();
            self.seen.clear();
        }
        out
    }

    /// The job's usage so far: finished runs plus the one in progress.
    pub fn usage(&self) -> LiveUsage {
        let mut u = self.finished;
        u.add(&self.current);
        u
    }
}

/// The first non-empty line, control characters and ANSI escapes removed, its
/// indentation kept and the whitespace after it collapsed, cut to `SUMMARY_MAX` characters
/// (with an ellipsis).
pub fn summarize(text: &str) -> String {
    let line = text
        .lines()
        .map(strip_controls)
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let body = line.trim_start();
    // The indent kept, then the words one space apart: one string built once, as every
    // line an agent prints passes through here.
    let mut collapsed = String::with_capacity(line.len());
    collapsed.push_str(&line[..line.len() - body.len()]);
    for (n, word) in body.split_whitespace().enumerate() {
        if n > 0 {
            collapsed.push(' ');
        }
        collapsed.push_str(word);
    }
    if collapsed.chars().count() <= SUMMARY_MAX {
        return collapsed;
    }
    let mut cut: String = collapsed.chars().take(SUMMARY_MAX - 1).collect();
    cut.push('…');
    cut
}

/// Removes ANSI escape sequences and other control characters (tabs become spaces).
fn strip_controls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ params final-byte; other escapes drop one following character.
            if chars.peek() == Some(&'[') {
                chars.next();
                for n in chars.by_ref() {
                    if ('@'..='~').contains(&n) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else if c == '\t' {
            // As wide as the widgets draw a tab, so an indented line keeps its depth.
            out.push_str("    ");
        } else if !c.is_control() {
            out.push(c);
        }
    }
    out
}

/// Cuts `text` to `DETAIL_MAX` bytes on a character boundary, marking the cut.
fn cap_detail(text: &str) -> String {
    if text.len() <= DETAIL_MAX {
        return text.to_string();
    }
    let mut end = DETAIL_MAX - 4;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n…", &text[..end])
}

/// A compact one-line rendering of a tool's JSON input.
pub(crate) fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The text of a tool result's `content`: a string, or the text parts of an array.
pub(crate) fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdout(s: &str) -> OutputLine {
        OutputLine {
            stream: OutputStream::Stdout,
            bytes: s.as_bytes().to_vec(),
        }
    }

    #[test]
    fn summaries_are_one_clean_line_of_at_most_200_characters() {
        assert_eq!(
            summarize("\n\x1b[31mred\x1b[0m\ttext  here\nsecond"),
            "red text here"
        );
        let long = "é".repeat(500);
        let s = summarize(&long);
        assert_eq!(s.chars().count(), SUMMARY_MAX);
        assert!(s.ends_with('…'));
    }

    #[test]
    fn output_lines_keep_their_indentation() {
        assert_eq!(summarize("    at main.rs:12"), "    at main.rs:12");
        assert_eq!(summarize("\tat  lib.rs:3  "), "    at lib.rs:3");
        let mut p = StreamParser::new(RuntimeKind::Shell);
        let got = p.line(&stdout("      File \"app.py\", line 3"));
        assert_eq!(got[0].summary, "      File \"app.py\", line 3");
    }

    #[test]
    fn details_are_capped_on_a_character_boundary() {
        let a = Activity::new(ActivityKind::Output, "x", Some(&"é".repeat(DETAIL_MAX)));
        let d = a.detail.unwrap();
        assert!(d.len() <= DETAIL_MAX && d.ends_with('…'));
    }

    #[test]
    fn non_json_lines_are_plain_output_and_stderr_is_its_own_kind() {
        let mut p = StreamParser::new(RuntimeKind::Codex);
        let got = p.line(&stdout("WARNING: proceeding"));
        assert_eq!(got[0].kind, ActivityKind::Output);
        let got = p.line(&OutputLine {
            stream: OutputStream::Stderr,
            bytes: b"Reading additional input from stdin...".to_vec(),
        });
        assert_eq!(got[0].kind, ActivityKind::Stderr);
        assert!(p.line(&stdout("   ")).is_empty());
        // A shell agent's JSON is its output, not an event.
        let mut p = StreamParser::new(RuntimeKind::Shell);
        assert_eq!(
            p.line(&stdout("{\"gitmoot_result\":{}}"))[0].kind,
            ActivityKind::Output
        );
    }
}
