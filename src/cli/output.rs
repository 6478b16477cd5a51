//! Shared output helpers: JSON documents and human-readable times.

use serde::Serialize;

use crate::clock::Millis;

/// Prints one pretty JSON document and a newline.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
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
