//! Strips terminal control from agent-provided text before it reaches a widget.
//!
//! Owns the one rule "an agent can never drive the operator's terminal": every string that
//! came from an agent, a prompt or a chat message passes through [`clean`] (single line
//! contexts use [`clean_line`]); the CLI's human output uses [`clean_keeping_tabs`]. Must
//! not touch styling or layout.

/// What a byte-level scanner is in the middle of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Text,
    /// After a lone ESC: the next char decides the sequence type.
    Escape,
    /// CSI parameters until a final byte in 0x40..=0x7e.
    Csi,
    /// OSC, DCS, SOS, PM, APC: a string until BEL or ST (ESC \ or 0x9c).
    StringSeq,
    /// Inside a string sequence, just saw ESC (maybe the start of ST).
    StringEsc,
    /// ESC followed by intermediates (0x20..=0x2f) until a final byte.
    EscIntermediate,
}

/// Removes escape sequences (CSI, OSC, DCS, SOS/PM/APC, C1 controls, lone ESC) and control
/// characters. Keeps `\n`; turns `\t` into four spaces; drops `\r` (a carriage return
/// would let text overwrite what came before it on the same line) and backspace.
pub fn clean(input: &str) -> String {
    strip(input, "    ")
}

/// [`clean`] with `\t` kept as it is: for a terminal's plain text, where a tab is layout
/// the reader expects (a widget cannot draw one, a terminal can).
pub fn clean_keeping_tabs(input: &str) -> String {
    strip(input, "\t")
}

/// The scanner both faces share; `tab` is what a `\t` becomes.
fn strip(input: &str, tab: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut mode = Mode::Text;
    for c in input.chars() {
        mode = match mode {
            Mode::Text => text_char(c, tab, &mut out),
            Mode::Escape => match c {
                '[' => Mode::Csi,
                ']' | 'P' | 'X' | '^' | '_' => Mode::StringSeq,
                '\u{20}'..='\u{2f}' => Mode::EscIntermediate,
                // Any other char is the final byte of a two-char escape: swallow it.
                _ => Mode::Text,
            },
            Mode::Csi => match c {
                '\u{40}'..='\u{7e}' => Mode::Text,
                '\u{1b}' => Mode::Escape,
                _ => Mode::Csi,
            },
            Mode::StringSeq => match c {
                '\u{07}' | '\u{9c}' => Mode::Text,
                '\u{1b}' => Mode::StringEsc,
                _ => Mode::StringSeq,
            },
            Mode::StringEsc => match c {
                '\\' => Mode::Text,
                '\u{1b}' => Mode::StringEsc,
                _ => Mode::StringSeq,
            },
            Mode::EscIntermediate => match c {
                '\u{20}'..='\u{2f}' => Mode::EscIntermediate,
                _ => Mode::Text,
            },
        };
    }
    out
}

fn text_char(c: char, tab: &str, out: &mut String) -> Mode {
    match c {
        '\u{1b}' => Mode::Escape,
        '\u{9b}' => Mode::Csi,
        '\u{90}' | '\u{9d}' | '\u{98}' | '\u{9e}' | '\u{9f}' => Mode::StringSeq,
        '\n' => {
            out.push('\n');
            Mode::Text
        }
        '\t' => {
            out.push_str(tab);
            Mode::Text
        }
        // Other C0, DEL and C1 controls; also bidi overrides, which can reorder what the
        // operator reads (the "trojan source" trick).
        c if c.is_control() || is_bidi_control(c) => Mode::Text,
        c => {
            out.push(c);
            Mode::Text
        }
    }
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// [`clean`], then newlines folded into spaces: for list rows and titles.
pub fn clean_line(input: &str) -> String {
    let cleaned = clean(input);
    let mut out = String::with_capacity(cleaned.len());
    for (i, line) in cleaned.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(line.trim());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_unchanged() {
        assert_eq!(clean("hello, wörld ✓\nsecond"), "hello, wörld ✓\nsecond");
    }

    #[test]
    fn csi_colour_and_cursor_moves_are_removed() {
        assert_eq!(clean("\x1b[31mred\x1b[0m"), "red");
        assert_eq!(clean("a\x1b[2J\x1b[H\x1b[10;20Hb"), "ab");
        assert_eq!(clean("x\x1b[?1049hy"), "xy");
    }

    #[test]
    fn osc_title_and_clipboard_writes_are_removed() {
        assert_eq!(clean("\x1b]0;pwned\x07ok"), "ok");
        assert_eq!(clean("\x1b]52;c;ZXZpbA==\x1b\\ok"), "ok");
        assert_eq!(clean("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\"), "link");
    }

    #[test]
    fn dcs_and_apc_strings_are_removed() {
        assert_eq!(clean("a\x1bPq#0;2;0;0;0\x1b\\b"), "ab");
        assert_eq!(clean("a\x1b_payload\x07b"), "ab");
    }

    #[test]
    fn c1_controls_are_removed() {
        assert_eq!(clean("a\u{9b}31mb"), "ab");
        assert_eq!(clean("a\u{9d}0;t\u{9c}b"), "ab");
        assert_eq!(clean("a\u{85}b"), "ab");
    }

    #[test]
    fn lone_esc_bel_backspace_and_cr_are_removed() {
        assert_eq!(clean("a\x1b"), "a");
        assert_eq!(clean("ding\x07"), "ding");
        assert_eq!(clean("safe\x08\x08\x08\x08evil"), "safeevil");
        assert_eq!(clean("rm -rf /\rls"), "rm -rf /ls");
        assert_eq!(clean("a\x1b7b\x1b8c"), "abc");
        assert_eq!(clean("a\x1b(Bb"), "ab");
    }

    #[test]
    fn tabs_become_spaces_and_newlines_stay() {
        assert_eq!(clean("a\tb\nc"), "a    b\nc");
    }

    #[test]
    fn the_terminal_face_keeps_tabs_and_strips_the_rest() {
        assert_eq!(clean_keeping_tabs("a\tb\nc"), "a\tb\nc");
        assert_eq!(
            clean_keeping_tabs("\x1b]52;c;ZXZpbA==\x07x\x1b[2J\ty\r"),
            "x\ty"
        );
    }

    #[test]
    fn unterminated_sequences_swallow_the_rest() {
        assert_eq!(clean("ok\x1b]0;never ends"), "ok");
        assert_eq!(clean("ok\x1b[123"), "ok");
    }

    #[test]
    fn bidi_overrides_are_removed() {
        assert_eq!(clean("a\u{202e}cba\u{202c}"), "acba");
    }

    /// Whatever an agent prints, the result holds no control character but `\n`.
    #[test]
    fn arbitrary_input_never_yields_controls() {
        let alphabet: Vec<char> =
            "\x1b\x07\x08\r\n\t[]P\\;0123abc\u{9b}\u{9c}\u{9d}\u{90}\u{85}\u{202e}é✓"
                .chars()
                .collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..5_000 {
            let mut s = String::new();
            for _ in 0..24 {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                s.push(alphabet[(seed >> 33) as usize % alphabet.len()]);
            }
            let out = clean(&s);
            assert!(
                !out.chars()
                    .any(|c| (c.is_control() && c != '\n') || is_bidi_control(c)),
                "{s:?} -> {out:?}"
            );
            assert!(!clean_line(&s).contains('\n'));
        }
    }

    #[test]
    fn clean_line_folds_lines() {
        assert_eq!(clean_line("  one \n\n two\r\n"), "one two");
    }
}
