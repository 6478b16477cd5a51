//! A block's text as the words textwrap places: split at its line breaks and spaces, each
//! word a list of styled runs with its width, and each wrapped line joined back.

use textwrap::core::Fragment;

use super::look::{Look, Run};
use crate::widgets::str_width;

/// The runs of a block split at its line breaks.
pub(super) fn split_lines(runs: Vec<Run>) -> Vec<Vec<Run>> {
    let mut out = vec![Vec::new()];
    for (text, look) in runs {
        for (i, part) in text.split('\n').enumerate() {
            if i > 0 {
                out.push(Vec::new());
            }
            if !part.is_empty() {
                out.last_mut()
                    .expect("one line at least")
                    .push((part.to_string(), look));
            }
        }
    }
    out
}

/// A word of styled text as textwrap places it: its runs, its width, and whether a space
/// follows it.
#[derive(Debug)]
pub(super) struct Word {
    runs: Vec<Run>,
    width: usize,
    space: bool,
}

impl Fragment for Word {
    fn width(&self) -> f64 {
        self.width as f64
    }
    fn whitespace_width(&self) -> f64 {
        if self.space { 1.0 } else { 0.0 }
    }
    fn penalty_width(&self) -> f64 {
        0.0
    }
}

/// The words of a line; a word wider than `avail` is cut into pieces that fit.
pub(super) fn words(runs: &[Run], avail: usize) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    let mut cur = Word {
        runs: Vec::new(),
        width: 0,
        space: false,
    };
    for (text, look) in runs {
        for c in text.chars() {
            if c == ' ' {
                end(&mut cur, true, &mut out);
                continue;
            }
            let cw = str_width(c.encode_utf8(&mut [0; 4]));
            if cur.width + cw > avail {
                end(&mut cur, false, &mut out);
            }
            match cur.runs.last_mut() {
                Some((t, l)) if l == look => t.push(c),
                _ => cur.runs.push((c.to_string(), *look)),
            }
            cur.width += cw;
        }
    }
    end(&mut cur, false, &mut out);
    out
}

/// Ends the word being read (a space after it, or not); a space with no word before it
/// belongs to the word before.
fn end(cur: &mut Word, space: bool, out: &mut Vec<Word>) {
    if cur.width > 0 {
        cur.space = space;
        out.push(std::mem::replace(
            cur,
            Word {
                runs: Vec::new(),
                width: 0,
                space: false,
            },
        ));
    } else if space && let Some(last) = out.last_mut() {
        last.space = true;
    }
}

/// One wrapped line's words as runs, a space between words that had one.
pub(super) fn join(line: &[Word]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    let mut push = |text: &str, look: Look| match out.last_mut() {
        Some((t, l)) if *l == look => t.push_str(text),
        _ => out.push((text.to_string(), look)),
    };
    for (i, word) in line.iter().enumerate() {
        // The space between words is plain: a code span's background starts at its text.
        if i > 0 && line[i - 1].space {
            push(" ", Look::default());
        }
        for (text, look) in &word.runs {
            push(text, *look);
        }
    }
    out
}
