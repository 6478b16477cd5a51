//! Colour depth: what the terminal can show (24-bit, 256 or 16 colours), and turning a
//! theme's 24-bit colours into the nearest the terminal has; also whether a background is
//! light, for `--theme auto`.
//!
//! Owns colour arithmetic only; which colour a slot gets is the theme's.

use ratatui::style::Color;

/// How many colours the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    Ansi256,
    Ansi16,
}

impl ColorDepth {
    /// From the environment as terminals advertise it: `COLORTERM=truecolor|24bit`, else a
    /// `TERM` naming 256 colours, else 16.
    pub fn detect(colorterm: Option<&str>, term: Option<&str>) -> ColorDepth {
        if colorterm.is_some_and(|c| c == "truecolor" || c == "24bit") {
            ColorDepth::TrueColor
        } else if term.is_some_and(|t| t.contains("256")) {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }

    pub fn parse(s: &str) -> Option<ColorDepth> {
        match s {
            "truecolor" | "24bit" => Some(ColorDepth::TrueColor),
            "256" => Some(ColorDepth::Ansi256),
            "16" => Some(ColorDepth::Ansi16),
            _ => None,
        }
    }
}

pub(super) fn degrade_color(c: Color, depth: ColorDepth) -> Color {
    let Color::Rgb(r, g, b) = c else {
        return c;
    };
    match depth {
        ColorDepth::TrueColor => c,
        ColorDepth::Ansi256 => Color::Indexed(nearest_256(r, g, b)),
        ColorDepth::Ansi16 => nearest_16(r, g, b),
    }
}

/// The nearest xterm-256 index: the 6×6×6 cube or the 24-step grey ramp, whichever is
/// closer.
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let step = |v: u8| {
        (0..6)
            .min_by_key(|i| (LEVELS[*i] as i32 - v as i32).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (step(r), step(g), step(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let avg = (r as u32 + g as u32 + b as u32) / 3;
    let gi_ramp = ((avg.saturating_sub(8)) / 10).min(23) as u8;
    let grey = 8 + gi_ramp * 10;
    let d = |(x, y, z): (u8, u8, u8)| {
        let f = |a: u8, b: u8| (a as i32 - b as i32).pow(2);
        f(x, r) + f(y, g) + f(z, b)
    };
    if d((grey, grey, grey)) < d(cube) {
        232 + gi_ramp
    } else {
        16 + 36 * ri as u8 + 6 * gi as u8 + bi as u8
    }
}

/// The nearest of the 16 ANSI colours (by their usual xterm values).
fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    const ANSI: [(Color, (u8, u8, u8)); 16] = [
        (Color::Black, (0, 0, 0)),
        (Color::Red, (205, 0, 0)),
        (Color::Green, (0, 205, 0)),
        (Color::Yellow, (205, 205, 0)),
        (Color::Blue, (0, 0, 238)),
        (Color::Magenta, (205, 0, 205)),
        (Color::Cyan, (0, 205, 205)),
        (Color::Gray, (229, 229, 229)),
        (Color::DarkGray, (127, 127, 127)),
        (Color::LightRed, (255, 0, 0)),
        (Color::LightGreen, (0, 255, 0)),
        (Color::LightYellow, (255, 255, 0)),
        (Color::LightBlue, (92, 92, 255)),
        (Color::LightMagenta, (255, 0, 255)),
        (Color::LightCyan, (0, 255, 255)),
        (Color::White, (255, 255, 255)),
    ];
    let d = |(x, y, z): (u8, u8, u8)| {
        let f = |a: u8, b: u8| (a as i32 - b as i32).pow(2);
        f(x, r) + f(y, g) + f(z, b)
    };
    ANSI.iter()
        .min_by_key(|(_, rgb)| d(*rgb))
        .map(|(c, _)| *c)
        .unwrap_or(Color::Reset)
}

/// Whether a background colour is light (relative luminance over one half), for
/// `--theme auto`.
pub fn is_light_background(r: u8, g: u8, b: u8) -> bool {
    let l = 0.2126 * r as f64 + 0.7152 * g as f64 + 0.0722 * b as f64;
    l > 127.5
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::{Slot, Theme};

    #[test]
    fn colours_degrade_to_the_palette() {
        assert_eq!(nearest_256(255, 0, 0), 196);
        assert_eq!(nearest_256(128, 128, 128), 244);
        assert_eq!(nearest_16(200, 10, 10), Color::Red);
        assert_eq!(nearest_16(250, 250, 250), Color::White);
        let t = Theme::default_dark().degrade(ColorDepth::Ansi16);
        assert!(
            Slot::ALL
                .iter()
                .all(|s| !matches!(t.style(*s).fg, Some(Color::Rgb(..) | Color::Indexed(_))))
        );
        let t = Theme::default_dark().degrade(ColorDepth::Ansi256);
        assert!(
            Slot::ALL
                .iter()
                .all(|s| !matches!(t.style(*s).fg, Some(Color::Rgb(..))))
        );
    }

    #[test]
    fn depth_comes_from_colorterm_then_term() {
        assert_eq!(
            ColorDepth::detect(Some("truecolor"), Some("xterm")),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::detect(None, Some("xterm-256color")),
            ColorDepth::Ansi256
        );
        assert_eq!(ColorDepth::detect(None, Some("screen")), ColorDepth::Ansi16);
        assert!(is_light_background(0xfd, 0xf6, 0xe3));
        assert!(!is_light_background(0x1e, 0x1e, 0x2e));
    }
}
