//! What the terminal can show: its colour depth (from `COLORTERM`/`TERM`, overridden by
//! `GITMOOT_COLORS=truecolor|256|16`) and, for `--theme auto`, whether its background is
//! light (asked with OSC 11, else `COLORFGBG`, else dark).
//!
//! Owns those two questions only; must not draw or keep the terminal in raw mode.

use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsRawFd;

use gitmoot_ui::ColorDepth;

/// The colour depth to draw with.
pub fn depth() -> ColorDepth {
    let var = |k: &str| std::env::var(k).ok();
    depth_from(
        var("GITMOOT_COLORS").as_deref(),
        var("COLORTERM").as_deref(),
        var("TERM").as_deref(),
    )
}

/// `GITMOOT_COLORS` when it names a depth, else what `COLORTERM`/`TERM` promise.
fn depth_from(over: Option<&str>, colorterm: Option<&str>, term: Option<&str>) -> ColorDepth {
    over.and_then(ColorDepth::parse)
        .unwrap_or_else(|| ColorDepth::detect(colorterm, term))
}

/// The built-in theme `auto` stands for: `light` on a light background, else `default`.
pub(crate) fn auto_theme() -> &'static str {
    let colorfgbg = std::env::var("COLORFGBG").ok();
    auto_from(query_background(), colorfgbg.as_deref())
}

/// The terminal's own answer decides; `COLORFGBG` stands in when it gave none, and a
/// terminal that says nothing either way gets the dark theme.
fn auto_from(background: Option<(u8, u8, u8)>, colorfgbg: Option<&str>) -> &'static str {
    let light = background
        .map(|(r, g, b)| gitmoot_ui::theme::is_light_background(r, g, b))
        .or_else(|| colorfgbg_is_light(colorfgbg?))
        .unwrap_or(false);
    if light { "light" } else { "default" }
}

/// `COLORFGBG="15;0"`: the last field is the background's ANSI index (7 and 15 are light).
fn colorfgbg_is_light(v: &str) -> Option<bool> {
    let bg: u8 = v.rsplit(';').next()?.parse().ok()?;
    Some(matches!(bg, 7 | 15))
}

/// Asks the terminal for its background (OSC 11) and waits briefly for the answer;
/// terminals that do not answer cost that short wait and nothing else.
fn query_background() -> Option<(u8, u8, u8)> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return None;
    }
    crossterm::terminal::enable_raw_mode().ok()?;
    let answer = (|| {
        let mut out = std::io::stdout();
        out.write_all(b"\x1b]11;?\x1b\\").ok()?;
        out.flush().ok()?;
        let mut stdin = std::io::stdin();
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while buf.len() < 64 {
            let mut fds = libc::pollfd {
                fd: stdin.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for our own stdin.
            if unsafe { libc::poll(&mut fds, 1, 200) } <= 0 {
                break;
            }
            if stdin.read(&mut byte).ok()? == 0 {
                break;
            }
            buf.push(byte[0]);
            if byte[0] == 0x07 || buf.ends_with(b"\x1b\\") {
                break;
            }
        }
        parse_osc11(&String::from_utf8_lossy(&buf))
    })();
    let _ = crossterm::terminal::disable_raw_mode();
    answer
}

/// `ESC ] 11 ; rgb:RRRR/GGGG/BBBB BEL` → the colour's top bytes.
fn parse_osc11(reply: &str) -> Option<(u8, u8, u8)> {
    let rgb = reply.split("rgb:").nth(1)?;
    let mut parts = rgb
        .split(['/', '\x07', '\x1b'])
        .take(3)
        .map(|p| u16::from_str_radix(&p[..p.len().min(2)], 16).ok());
    let (r, g, b) = (parts.next()??, parts.next()??, parts.next()??);
    Some((r as u8, g as u8, b as u8))
}

#[cfg(test)]
mod tests {
    use gitmoot_ui::ColorDepth;

    use super::{auto_from, depth_from, parse_osc11};

    #[test]
    fn the_override_beats_what_the_terminal_promises() {
        let truecolor = (Some("truecolor"), Some("xterm-256color"));
        assert_eq!(
            depth_from(None, truecolor.0, truecolor.1),
            ColorDepth::TrueColor
        );
        assert_eq!(
            depth_from(Some("16"), truecolor.0, truecolor.1),
            ColorDepth::Ansi16
        );
        assert_eq!(
            depth_from(Some("256"), None, Some("xterm")),
            ColorDepth::Ansi256
        );
        assert_eq!(
            depth_from(Some("lots"), None, Some("xterm-256color")),
            ColorDepth::Ansi256,
            "an unknown override is ignored"
        );
        assert_eq!(depth_from(None, None, Some("linux")), ColorDepth::Ansi16);
    }

    #[test]
    fn auto_is_light_only_on_a_light_background_and_dark_when_nobody_says() {
        assert_eq!(auto_from(Some((0xfd, 0xf6, 0xe3)), None), "light");
        assert_eq!(auto_from(Some((0x1e, 0x1e, 0x2e)), Some("0;15")), "default");
        assert_eq!(auto_from(None, Some("0;15")), "light");
        assert_eq!(auto_from(None, Some("15;0")), "default");
        assert_eq!(auto_from(None, Some("garbage")), "default");
        assert_eq!(auto_from(None, None), "default");
    }

    #[test]
    fn osc11_replies_parse() {
        assert_eq!(
            parse_osc11("\x1b]11;rgb:fdfd/f6f6/e3e3\x07"),
            Some((0xfd, 0xf6, 0xe3))
        );
        assert_eq!(
            parse_osc11("\x1b]11;rgb:1e/1e/2e\x1b\\"),
            Some((0x1e, 0x1e, 0x2e))
        );
        assert_eq!(parse_osc11("garbage"), None);
    }
}
