//! The CLI's standard output: `Out`, the one writer every verb prints through (a reader
//! that goes away is a normal end, not a failure; text written to it is stripped of
//! terminal control, JSON is written exact), and the shared shapes printed through it:
//! JSON documents, aligned tables, human-readable ages.
//!
//! Owns how output reaches stdout; must not decide what a verb prints or read the store.

use std::io::{self, BufWriter, StdoutLock, Write};

use serde::Serialize;

use crate::clock::Millis;

/// Standard output as the verbs write it. Every write error comes back as an
/// `io::Error`; one of kind `BrokenPipe` carries [`ReaderGone`], so `main` ends quietly
/// with exit 0 when the reader of the pipe left (`gitmoot job list | head -1`) and only then.
///
/// Human text is the chokepoint for agent-controlled strings (summaries, prompts, titles,
/// errors, chat bodies): every `write` passes through the control room's own
/// `sanitize::clean_keeping_tabs`, so an agent can neither set the terminal's title, write
/// its clipboard (OSC 52) nor clear the screen, and newlines and tabs stay layout. The CLI
/// prints no styling of its own, so nothing intended is lost. Each `write` is cleaned on
/// its own: `writeln!` hands each formatted field over in one piece, so an unterminated
/// sequence swallows the rest of its own field only. JSON (`json`, `json_line`, an
/// [`Out::exact`] writer) is written byte for byte: serde escapes C0 controls itself and
/// `--json` must hold the agent's text exactly.
pub(crate) struct Out {
    sink: Sink,
    /// Whether `write` strips terminal control (off for machine output).
    scrub: bool,
}

enum Sink {
    /// Line by line, the lock taken per write: what a stream needs (`job logs -f`,
    /// `daemon run`, whose poller prints from another thread), and cheap for a few lines.
    Lines(io::Stdout),
    /// Written in large blocks under one lock until `finish`: for listings of any length.
    Block(BufWriter<StdoutLock<'static>>),
}

/// The cause inside the `BrokenPipe` error of a write to a stdout nobody reads any more.
#[derive(Debug, thiserror::Error)]
#[error("the reader of standard output went away")]
pub(crate) struct ReaderGone;

impl Out {
    /// Each line reaches the reader as soon as it is written.
    pub fn lines() -> Self {
        Self {
            sink: Sink::Lines(io::stdout()),
            scrub: true,
        }
    }

    /// Buffered: a long listing in few writes. Call `finish` so the last block's error
    /// is seen (dropping it unflushed loses that error).
    pub fn block() -> Self {
        Self {
            sink: Sink::Block(BufWriter::new(io::stdout().lock())),
            scrub: true,
        }
    }

    /// Written byte for byte: for machine output (a JSON stream, a completion script, a
    /// demo agent's result), which is no terminal's text.
    pub fn exact(mut self) -> Self {
        self.scrub = false;
        self
    }

    /// Writes what is still buffered.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush()
    }

    /// One pretty JSON document and a newline.
    pub fn json<T: Serialize + ?Sized>(&mut self, value: &T) -> anyhow::Result<()> {
        self.exact_line(&serde_json::to_string_pretty(value)?)
    }

    /// One compact JSON document and a newline: a JSON Lines row.
    pub fn json_line<T: Serialize + ?Sized>(&mut self, value: &T) -> anyhow::Result<()> {
        self.exact_line(&serde_json::to_string(value)?)
    }

    /// `text` and a newline, past the scrubbing.
    fn exact_line(&mut self, text: &str) -> anyhow::Result<()> {
        let sink = self.sink_mut();
        sink.write_all(text.as_bytes())
            .and_then(|()| sink.write_all(b"\n"))
            .map_err(mark_reader_gone)?;
        Ok(())
    }

    fn sink_mut(&mut self) -> &mut dyn Write {
        match &mut self.sink {
            Sink::Lines(w) => w,
            Sink::Block(w) => w,
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let clean;
        let bytes = if self.scrub && !plain(buf) {
            // Bytes that are not UTF-8 are no text a reader wants either: they print as
            // U+FFFD, as `from_utf8_lossy` spells them.
            clean = gitmoot_ui::sanitize::clean_keeping_tabs(&String::from_utf8_lossy(buf));
            clean.as_bytes()
        } else {
            buf
        };
        self.sink_mut().write_all(bytes).map_err(mark_reader_gone)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Lines(w) => w.flush(),
            Sink::Block(w) => w.flush(),
        }
        .map_err(mark_reader_gone)
    }
}

/// Printable ASCII, newlines and tabs only: nothing to strip (the common case, copied
/// without a scan of its chars).
fn plain(buf: &[u8]) -> bool {
    buf.iter()
        .all(|&b| matches!(b, b' '..=b'~' | b'\n' | b'\t'))
}

/// A broken pipe on stdout, told apart from one on an agent's pipe or the relay socket.
fn mark_reader_gone(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, ReaderGone)
    } else {
        e
    }
}

/// Whether the command failed only because the reader of its stdout went away.
pub fn is_reader_gone(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .and_then(|io| io.get_ref())
            .is_some_and(|inner| inner.is::<ReaderGone>())
    })
}

/// Prints one pretty JSON document and a newline.
pub(crate) fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    Out::lines().json(value)
}

/// A table with a header row and columns aligned to their widest cell (the last column is
/// not padded), one row a line.
///
/// Hand-written rather than `comfy-table`/`tabled`: plain space-aligned columns are what
/// `kubectl get` prints and what scripts `awk`, and this is a dozen lines against a crate
/// with borders, styling and terminal-width probing the CLI does not want.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    // Cleaned before measuring, so a cell's escapes cannot shift the columns and a
    // newline in it cannot forge a row.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| gitmoot_ui::sanitize::clean_line(c))
                .collect()
        })
        .collect();
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(width(cell));
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i == last {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c}{}  ", " ".repeat(w - width(c))));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(headers.to_vec());
    for r in &rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

/// "3s", "5m", "2h", "4d" since `then`.
pub fn age(now: Millis, then: Millis) -> String {
    let secs = ((now - then).max(0) / 1000) as u64;
    match secs {
        0..60 => format!("{secs}s"),
        60..3_600 => format!("{}m", secs / 60),
        3_600..86_400 => format!("{}h", secs / 3_600),
        _ => format!("{}d", secs / 86_400),
    }
}
