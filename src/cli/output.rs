//! The CLI's standard output: `Out`, the one writer every verb prints through (a reader
//! that goes away is a normal end, not a failure), and the shared shapes printed through
//! it: JSON documents, aligned tables, human-readable ages.
//!
//! Owns how output reaches stdout; must not decide what a verb prints or read the store.

use std::io::{self, BufWriter, StdoutLock, Write};

use serde::Serialize;

use crate::clock::Millis;

/// Standard output as the verbs write it. Every write error comes back as an
/// `io::Error`; one of kind `BrokenPipe` carries [`ReaderGone`], so `main` ends quietly
/// with exit 0 when the reader of the pipe left (`gitmoot job list | head -1`) and only then.
pub(crate) struct Out {
    sink: Sink,
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
        }
    }

    /// Buffered: a long listing in few writes. Call `finish` so the last block's error
    /// is seen (dropping it unflushed loses that error).
    pub fn block() -> Self {
        Self {
            sink: Sink::Block(BufWriter::new(io::stdout().lock())),
        }
    }

    /// Writes what is still buffered.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush()
    }

    /// One pretty JSON document and a newline.
    pub fn json<T: Serialize + ?Sized>(&mut self, value: &T) -> anyhow::Result<()> {
        writeln!(self, "{}", serde_json::to_string_pretty(value)?)?;
        Ok(())
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Lines(w) => w.write(buf),
            Sink::Block(w) => w.write(buf),
        }
        .map_err(mark_reader_gone)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Lines(w) => w.flush(),
            Sink::Block(w) => w.flush(),
        }
        .map_err(mark_reader_gone)
    }
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
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for r in rows {
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
    for r in rows {
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
