//! Human durations as written in config and flags: "90s", "10m", "1h30m", "24h", "250ms".
//!
//! Owns parsing and formatting; values are integer milliseconds.

use crate::Invalid;

/// Parses a Go-style duration. Zero ("0") is accepted; negative values are not.
pub(crate) fn parse_ms(text: &str) -> Result<i64, Invalid> {
    let s = text.trim();
    let bad = || {
        Invalid(format!(
            "invalid duration {text:?} (use forms like 90s, 10m, 1h30m)"
        ))
    };
    if s.is_empty() {
        return Err(bad());
    }
    if s == "0" {
        return Ok(0);
    }
    let mut total: f64 = 0.0;
    let mut rest = s;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if num_end == 0 {
            return Err(bad());
        }
        let value: f64 = rest[..num_end].parse().map_err(|_| bad())?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_end] {
            "ms" => 1.0,
            "s" => 1_000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            "d" => 86_400_000.0,
            _ => return Err(bad()),
        };
        total += value * factor;
        rest = &rest[unit_end..];
    }
    Ok(total.round() as i64)
}

/// Parses a duration that must be strictly positive.
pub(crate) fn parse_positive_ms(text: &str) -> Result<i64, Invalid> {
    match parse_ms(text)? {
        0 => Err(Invalid(format!("duration {text:?} must be positive"))),
        ms => Ok(ms),
    }
}

/// Formats milliseconds compactly: 1h30m, 10m, 45s, 250ms.
pub(crate) fn format_ms(ms: i64) -> String {
    if ms <= 0 {
        return "0s".into();
    }
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    let secs = ms / 1_000;
    let (d, h, m, s) = (secs / 86_400, secs / 3_600 % 24, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    for (v, u) in [(d, "d"), (h, "h"), (m, "m"), (s, "s")] {
        if v > 0 {
            out.push_str(&format!("{v}{u}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_operators_write() {
        assert_eq!(parse_ms("10m").unwrap(), 600_000);
        assert_eq!(parse_ms("24h").unwrap(), 86_400_000);
        assert_eq!(parse_ms("1h30m").unwrap(), 5_400_000);
        assert_eq!(parse_ms("250ms").unwrap(), 250);
        assert_eq!(parse_ms("1.5s").unwrap(), 1_500);
        assert_eq!(parse_ms("0").unwrap(), 0);
    }

    #[test]
    fn rejects_garbage_and_non_positive_where_required() {
        for bad in ["", "10", "m", "10x", "-5m", "1h-2m"] {
            assert!(parse_ms(bad).is_err(), "{bad}");
        }
        assert!(parse_positive_ms("0s").is_err());
    }

    #[test]
    fn formats_round_trip() {
        for ms in [250, 1_000, 600_000, 5_400_000, 86_400_000] {
            assert_eq!(parse_ms(&format_ms(ms)).unwrap(), ms);
        }
    }
}
