//! Shared output helpers: JSON documents and human-readable times.

use serde::Serialize;

use crate::clock::Millis;

/// Prints one pretty JSON document and a newline.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
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
