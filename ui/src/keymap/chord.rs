//! A key chord: a key with its modifiers, parsed from a keymap's spelling ("ctrl-c",
//! "alt-enter", "K") and shown the way the help and the footer print it.
//!
//! Owns the chord and its normalisation only; which command a chord runs is the keymap's.

use std::fmt;
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key with its modifiers, normalised so `K` and `shift-k` are the same chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyChord {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl KeyChord {
    pub fn new(code: KeyCode, mods: KeyModifiers) -> Self {
        let mut mods = mods & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        let code = match code {
            // Terminals report Shift-Tab as BackTab, with or without SHIFT.
            KeyCode::BackTab => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Char(c) => {
                // The shift is already in the character.
                mods.remove(KeyModifiers::SHIFT);
                if mods.contains(KeyModifiers::CONTROL) {
                    KeyCode::Char(c.to_ascii_lowercase())
                } else {
                    KeyCode::Char(c)
                }
            }
            other => other,
        };
        KeyChord { code, mods }
    }

    pub fn from_event(k: &KeyEvent) -> Self {
        KeyChord::new(k.code, k.modifiers)
    }
}

impl FromStr for KeyChord {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            // A lone "-" is the minus key, not a separator.
            if rest.len() > 1 {
                if let Some(r) = rest.strip_prefix("ctrl-") {
                    mods |= KeyModifiers::CONTROL;
                    rest = r;
                    continue;
                }
                if let Some(r) = rest.strip_prefix("alt-") {
                    mods |= KeyModifiers::ALT;
                    rest = r;
                    continue;
                }
                if let Some(r) = rest.strip_prefix("shift-") {
                    mods |= KeyModifiers::SHIFT;
                    rest = r;
                    continue;
                }
            }
            break;
        }
        let code = match rest {
            "enter" => KeyCode::Enter,
            "esc" => KeyCode::Esc,
            "tab" if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            "delete" => KeyCode::Delete,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pgup" => KeyCode::PageUp,
            "pgdn" => KeyCode::PageDown,
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse().map_err(|_| format!("bad key \"{s}\""))?)
            }
            one if one.chars().count() == 1 => KeyCode::Char(one.chars().next().unwrap_or(' ')),
            _ => return Err(format!("unknown key \"{s}\"")),
        };
        Ok(KeyChord::new(code, mods))
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("Alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift-")?;
        }
        match self.code {
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Del"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// A key string the test knows is valid, parsed.
#[cfg(test)]
pub(super) fn chord(s: &str) -> KeyChord {
    s.parse().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_strings_parse_and_normalise() {
        assert_eq!(
            chord("K"),
            KeyChord::new(KeyCode::Char('K'), KeyModifiers::SHIFT)
        );
        assert_eq!(
            chord("ctrl-c"),
            KeyChord::new(KeyCode::Char('C'), KeyModifiers::CONTROL)
        );
        assert_eq!(
            chord("shift-tab"),
            KeyChord::new(KeyCode::BackTab, KeyModifiers::SHIFT)
        );
        assert_eq!(
            chord("alt-enter"),
            KeyChord::new(KeyCode::Enter, KeyModifiers::ALT)
        );
        assert_eq!(
            chord("-"),
            KeyChord::new(KeyCode::Char('-'), KeyModifiers::NONE)
        );
        assert_eq!(chord("f1").code, KeyCode::F(1));
        assert_eq!(chord("alt-enter").to_string(), "Alt-Enter");
    }
}
