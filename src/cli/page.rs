//! Paging and streaming for the listing verbs (`job list`, `chat inbox`): the newest page
//! by default, a cursor for the next one, and JSON written row by row so memory stays flat
//! at any history size.
//!
//! Owns the shared arguments and the writer only; each verb owns its query and columns.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::output::Out;

/// Rows a listing prints when not told otherwise.
pub(crate) const DEFAULT_PAGE: usize = 50;

/// `--limit N`, `--all`, `--jsonl` of a paged listing.
#[derive(Debug, Clone, Args)]
pub struct PageArgs {
    /// Print at most N rows, newest first (default 50).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub limit: Option<usize>,
    /// Print every row (streamed; memory stays flat).
    #[arg(long)]
    pub all: bool,
    /// JSON Lines: one object a line, written as each row is read.
    #[arg(long, conflicts_with = "json")]
    pub jsonl: bool,
}

impl PageArgs {
    /// The SQL limit: `None` reads everything.
    pub fn limit(&self) -> Option<usize> {
        if self.all {
            None
        } else {
            Some(self.limit.unwrap_or(DEFAULT_PAGE))
        }
    }
}

/// A JSON listing written as it is read: one array (`[`, the rows, `]`) or JSON Lines.
pub(crate) struct JsonStream<W: Write> {
    out: W,
    lines: bool,
    rows: usize,
}

impl JsonStream<Out> {
    /// A stream to standard output, in blocks, exact (JSON escapes what it must).
    pub fn stdout(lines: bool) -> Self {
        Self::new(Out::block().exact(), lines)
    }
}

impl<W: Write> JsonStream<W> {
    pub fn new(out: W, lines: bool) -> Self {
        Self {
            out,
            lines,
            rows: 0,
        }
    }

    /// Writes one row.
    pub fn row(&mut self, v: &impl Serialize) -> anyhow::Result<()> {
        let sep: &[u8] = match (self.lines, self.rows) {
            (true, _) => b"",
            (false, 0) => b"[\n",
            (false, _) => b",\n",
        };
        self.out.write_all(sep)?;
        // Serialized first: `to_writer` would hide a write's `io::Error` (and with it a
        // closed stdout) inside a `serde_json::Error`.
        self.out.write_all(serde_json::to_string(v)?.as_bytes())?;
        if self.lines {
            self.out.write_all(b"\n")?;
        }
        self.rows += 1;
        Ok(())
    }

    /// Closes the array (an empty listing is `[]`) and flushes; returns the row count.
    pub fn finish(mut self) -> anyhow::Result<usize> {
        if !self.lines {
            self.out
                .write_all(if self.rows == 0 { b"[]\n" } else { b"\n]\n" })?;
        }
        self.out.flush()?;
        Ok(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(rows: &[serde_json::Value], lines: bool) -> String {
        let mut buf = Vec::new();
        let mut s = JsonStream::new(&mut buf, lines);
        for r in rows {
            s.row(r).unwrap();
        }
        assert_eq!(s.finish().unwrap(), rows.len());
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn an_array_streamed_row_by_row_parses_as_one_document() {
        let rows = [serde_json::json!({"a": 1}), serde_json::json!({"b": [2]})];
        let text = stream(&rows, false);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::json!(rows)
        );
        assert_eq!(stream(&[], false), "[]\n");
        assert_eq!(stream(&rows, true), "{\"a\":1}\n{\"b\":[2]}\n");
        assert_eq!(stream(&[], true), "");
    }
}
