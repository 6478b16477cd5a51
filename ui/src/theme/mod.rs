//! Colour themes: a palette plus semantic style keys, parsed from TOML.
//!
//! Owns the list of semantic keys ([`Slot`]) — widgets can only ask for a `Slot`, so the
//! coverage test over [`Slot::ALL`] cannot drift from what the views use. Owns parsing of
//! the built-in themes (embedded from `themes/*.toml`) and of user theme text; fitting
//! a theme to the terminal's colour depth is `depth.rs`'s. Must not read files: the glue
//! reads a user theme from the home and passes the text in.

use std::collections::BTreeMap;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

mod depth;
use depth::degrade_color;
pub use depth::{ColorDepth, is_light_background};

/// Every semantic style key a widget may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    Text,
    Muted,
    Accent,
    Selection,
    PaneBorder,
    PaneFocus,
    PaneTitle,
    StatusBar,
    StatusWarn,
    FooterKey,
    FooterDesc,
    ToastInfo,
    ToastSuccess,
    ToastWarning,
    ToastError,
    DialogBorder,
    DialogDanger,
    JobQueued,
    JobRunning,
    JobSucceeded,
    JobFailed,
    JobBlocked,
    JobCancelled,
    RunRunning,
    RunAwaiting,
    RunDone,
    RunBlocked,
    RunFailed,
    RunKilled,
    AttentionAsk,
    AttentionFailure,
    AttentionAge,
    ChatAuthor,
    ChatMention,
    ChatSystem,
    ChatUnread,
    DagEdge,
    FilterMatch,
    InputText,
    DiffAdd,
    DiffRemove,
    DiffHunk,
}

impl Slot {
    pub const ALL: [Slot; 42] = [
        Slot::Text,
        Slot::Muted,
        Slot::Accent,
        Slot::Selection,
        Slot::PaneBorder,
        Slot::PaneFocus,
        Slot::PaneTitle,
        Slot::StatusBar,
        Slot::StatusWarn,
        Slot::FooterKey,
        Slot::FooterDesc,
        Slot::ToastInfo,
        Slot::ToastSuccess,
        Slot::ToastWarning,
        Slot::ToastError,
        Slot::DialogBorder,
        Slot::DialogDanger,
        Slot::JobQueued,
        Slot::JobRunning,
        Slot::JobSucceeded,
        Slot::JobFailed,
        Slot::JobBlocked,
        Slot::JobCancelled,
        Slot::RunRunning,
        Slot::RunAwaiting,
        Slot::RunDone,
        Slot::RunBlocked,
        Slot::RunFailed,
        Slot::RunKilled,
        Slot::AttentionAsk,
        Slot::AttentionFailure,
        Slot::AttentionAge,
        Slot::ChatAuthor,
        Slot::ChatMention,
        Slot::ChatSystem,
        Slot::ChatUnread,
        Slot::DagEdge,
        Slot::FilterMatch,
        Slot::InputText,
        Slot::DiffAdd,
        Slot::DiffRemove,
        Slot::DiffHunk,
    ];

    /// The key as written in a theme file.
    pub fn key(self) -> &'static str {
        match self {
            Slot::Text => "ui.text",
            Slot::Muted => "ui.muted",
            Slot::Accent => "ui.accent",
            Slot::Selection => "ui.selection",
            Slot::PaneBorder => "pane.border",
            Slot::PaneFocus => "pane.focus",
            Slot::PaneTitle => "pane.title",
            Slot::StatusBar => "status.bar",
            Slot::StatusWarn => "status.warn",
            Slot::FooterKey => "footer.key",
            Slot::FooterDesc => "footer.desc",
            Slot::ToastInfo => "toast.info",
            Slot::ToastSuccess => "toast.success",
            Slot::ToastWarning => "toast.warning",
            Slot::ToastError => "toast.error",
            Slot::DialogBorder => "dialog.border",
            Slot::DialogDanger => "dialog.danger",
            Slot::JobQueued => "job.state.queued",
            Slot::JobRunning => "job.state.running",
            Slot::JobSucceeded => "job.state.succeeded",
            Slot::JobFailed => "job.state.failed",
            Slot::JobBlocked => "job.state.blocked",
            Slot::JobCancelled => "job.state.cancelled",
            Slot::RunRunning => "run.state.running",
            Slot::RunAwaiting => "run.state.awaiting_human",
            Slot::RunDone => "run.state.done",
            Slot::RunBlocked => "run.state.blocked",
            Slot::RunFailed => "run.state.failed",
            Slot::RunKilled => "run.state.killed",
            Slot::AttentionAsk => "attention.ask",
            Slot::AttentionFailure => "attention.failure",
            Slot::AttentionAge => "attention.age",
            Slot::ChatAuthor => "chat.author",
            Slot::ChatMention => "chat.mention",
            Slot::ChatSystem => "chat.system",
            Slot::ChatUnread => "chat.unread",
            Slot::DagEdge => "dag.edge",
            Slot::FilterMatch => "filter.match",
            Slot::InputText => "input.text",
            Slot::DiffAdd => "diff.add",
            Slot::DiffRemove => "diff.remove",
            Slot::DiffHunk => "diff.hunk",
        }
    }

    fn from_key(key: &str) -> Option<Slot> {
        Slot::ALL.into_iter().find(|s| s.key() == key)
    }
}

/// Why a theme could not be used; always one line naming the theme and the entry.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ThemeError {
    #[error("theme {theme}: {message}")]
    Syntax { theme: String, message: String },
    #[error("theme {theme}: unknown style key \"{key}\"")]
    UnknownKey { theme: String, key: String },
    #[error(
        "theme {theme}: style \"{key}\": bad colour \"{value}\" (use a palette name, an ANSI name or #rrggbb)"
    )]
    BadColour {
        theme: String,
        key: String,
        value: String,
    },
    #[error("theme {theme}: inherits unknown theme \"{parent}\"")]
    UnknownParent { theme: String, parent: String },
    #[error("unknown theme \"{0}\" (built-in: default, light, high-contrast)")]
    UnknownBuiltin(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: Option<String>,
    inherits: Option<String>,
    #[serde(default)]
    palette: BTreeMap<String, String>,
    #[serde(default)]
    styles: BTreeMap<String, StyleSpec>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    dim: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underline: bool,
    #[serde(default)]
    reversed: bool,
}

/// The built-in theme files, by name.
pub const BUILTIN: [(&str, &str); 3] = [
    ("default", include_str!("../../../themes/default.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../../themes/high-contrast.toml"),
    ),
];

/// A resolved theme: one style per slot.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    styles: BTreeMap<Slot, Style>,
}

impl Theme {
    /// The style for a semantic key; a slot a user theme left out comes from its parent.
    pub fn style(&self, slot: Slot) -> Style {
        self.styles.get(&slot).copied().unwrap_or_default()
    }

    /// The theme as a terminal of `depth` can show it: 24-bit colours become the nearest
    /// of the 256-colour palette or of the 16 ANSI colours (named colours pass through).
    pub fn degrade(mut self, depth: ColorDepth) -> Theme {
        if depth == ColorDepth::TrueColor {
            return self;
        }
        let map = |c: Option<Color>| c.map(|c| degrade_color(c, depth));
        for style in self.styles.values_mut() {
            style.fg = map(style.fg);
            style.bg = map(style.bg);
            style.underline_color = map(style.underline_color);
        }
        self
    }

    /// The dark default.
    pub fn default_dark() -> Theme {
        Theme::builtin("default").expect("the embedded default theme parses")
    }

    /// A built-in theme by name.
    pub fn builtin(name: &str) -> Result<Theme, ThemeError> {
        let text = BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| ThemeError::UnknownBuiltin(name.to_string()))?;
        parse(name, text, None)
    }

    /// A user theme from TOML text. Keys it leaves out come from `inherits` (a built-in
    /// name; `default` when absent), so a user file may set only what it changes.
    pub fn from_toml(label: &str, text: &str) -> Result<Theme, ThemeError> {
        let file = read_file(label, text)?;
        let parent_name = file
            .inherits
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let parent = Theme::builtin(&parent_name).map_err(|_| ThemeError::UnknownParent {
            theme: label.to_string(),
            parent: parent_name,
        })?;
        resolve(label, file, Some(&parent))
    }

    /// The theme the control room should use: monochrome under `NO_COLOR`, else the user's
    /// theme text when the glue found `<home>/themes/<name>.toml`, else the built-in `name`.
    pub fn select(
        name: &str,
        user_text: Option<&str>,
        no_color: bool,
    ) -> Result<Theme, ThemeError> {
        match (no_color, user_text) {
            (true, _) => Ok(Theme::monochrome()),
            (false, Some(text)) => Theme::from_toml(name, text),
            (false, None) => Theme::builtin(name),
        }
    }

    /// No colours at all, only modifiers (for `NO_COLOR`): meaning survives through bold,
    /// dim, underline and reverse video.
    pub fn monochrome() -> Theme {
        let m = |m: Modifier| Style::default().add_modifier(m);
        let styles = Slot::ALL
            .into_iter()
            .map(|s| {
                let style = match s {
                    Slot::Selection
                    | Slot::StatusBar
                    | Slot::ToastError
                    | Slot::ToastInfo
                    | Slot::ToastSuccess
                    | Slot::ToastWarning => m(Modifier::REVERSED),
                    Slot::PaneFocus
                    | Slot::PaneTitle
                    | Slot::FooterKey
                    | Slot::JobFailed
                    | Slot::JobBlocked
                    | Slot::RunFailed
                    | Slot::RunBlocked
                    | Slot::RunAwaiting
                    | Slot::AttentionAsk
                    | Slot::AttentionFailure
                    | Slot::DialogDanger
                    | Slot::StatusWarn
                    | Slot::DiffAdd => m(Modifier::BOLD),
                    Slot::Muted
                    | Slot::PaneBorder
                    | Slot::JobCancelled
                    | Slot::JobQueued
                    | Slot::DagEdge
                    | Slot::RunKilled
                    | Slot::ChatSystem
                    | Slot::AttentionAge
                    | Slot::DiffRemove
                    | Slot::FooterDesc => m(Modifier::DIM),
                    Slot::ChatMention | Slot::FilterMatch | Slot::DiffHunk => {
                        m(Modifier::UNDERLINED)
                    }
                    _ => Style::default(),
                };
                (s, style)
            })
            .collect();
        Theme {
            name: "monochrome".to_string(),
            styles,
        }
    }
}

/// Which slots a theme file does not define itself (used by the coverage test and by
/// anyone shipping a theme).
pub fn missing_keys(label: &str, text: &str) -> Result<Vec<&'static str>, ThemeError> {
    let file = read_file(label, text)?;
    Ok(Slot::ALL
        .into_iter()
        .filter(|s| !file.styles.contains_key(s.key()))
        .map(Slot::key)
        .collect())
}

fn read_file(label: &str, text: &str) -> Result<ThemeFile, ThemeError> {
    toml::from_str(text).map_err(|e| ThemeError::Syntax {
        theme: label.to_string(),
        message: e.message().to_string(),
    })
}

fn parse(label: &str, text: &str, parent: Option<&Theme>) -> Result<Theme, ThemeError> {
    resolve(label, read_file(label, text)?, parent)
}

fn resolve(label: &str, file: ThemeFile, parent: Option<&Theme>) -> Result<Theme, ThemeError> {
    let mut styles = parent.map(|p| p.styles.clone()).unwrap_or_default();
    for (key, spec) in &file.styles {
        let slot = Slot::from_key(key).ok_or_else(|| ThemeError::UnknownKey {
            theme: label.to_string(),
            key: key.clone(),
        })?;
        let colour = |value: &Option<String>| -> Result<Option<Color>, ThemeError> {
            match value {
                None => Ok(None),
                Some(v) => {
                    colour(&file.palette, v)
                        .map(Some)
                        .ok_or_else(|| ThemeError::BadColour {
                            theme: label.to_string(),
                            key: key.clone(),
                            value: v.clone(),
                        })
                }
            }
        };
        let mut style = Style::default();
        if let Some(fg) = colour(&spec.fg)? {
            style = style.fg(fg);
        }
        if let Some(bg) = colour(&spec.bg)? {
            style = style.bg(bg);
        }
        for (on, m) in [
            (spec.bold, Modifier::BOLD),
            (spec.dim, Modifier::DIM),
            (spec.italic, Modifier::ITALIC),
            (spec.underline, Modifier::UNDERLINED),
            (spec.reversed, Modifier::REVERSED),
        ] {
            if on {
                style = style.add_modifier(m);
            }
        }
        styles.insert(slot, style);
    }
    Ok(Theme {
        name: file.name.unwrap_or_else(|| label.to_string()),
        styles,
    })
}

fn colour(palette: &BTreeMap<String, String>, value: &str) -> Option<Color> {
    let value = palette.get(value).map(String::as_str).unwrap_or(value);
    if let Some(hex) = value.strip_prefix('#') {
        if hex.len() != 6 {
            return None;
        }
        let n = u32::from_str_radix(hex, 16).ok()?;
        return Some(Color::Rgb((n >> 16) as u8, (n >> 8) as u8, n as u8));
    }
    Some(match value {
        "reset" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" => Color::Gray,
        "darkgray" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        other => Color::Indexed(other.parse().ok()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_theme_defines_every_slot() {
        for (name, text) in BUILTIN {
            let missing = missing_keys(name, text).unwrap();
            assert!(missing.is_empty(), "theme {name} lacks {missing:?}");
            Theme::builtin(name).unwrap();
        }
    }

    #[test]
    fn slot_keys_are_unique() {
        let mut keys: Vec<_> = Slot::ALL.iter().map(|s| s.key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), Slot::ALL.len());
    }

    #[test]
    fn user_theme_inherits_and_overrides() {
        let t = Theme::from_toml(
            "mine",
            "inherits = \"light\"\n[palette]\nhot = \"#ff0000\"\n[styles]\n\"job.state.failed\" = { fg = \"hot\", bold = true }\n",
        )
        .unwrap();
        assert_eq!(
            t.style(Slot::JobFailed),
            Style::default()
                .fg(Color::Rgb(255, 0, 0))
                .add_modifier(Modifier::BOLD)
        );
        assert_eq!(
            t.style(Slot::JobSucceeded),
            Theme::builtin("light").unwrap().style(Slot::JobSucceeded)
        );
    }

    #[test]
    fn bad_entries_are_named() {
        let e =
            Theme::from_toml("mine", "[styles]\n\"job.nope\" = { fg = \"red\" }\n").unwrap_err();
        assert_eq!(e.to_string(), "theme mine: unknown style key \"job.nope\"");
        let e = Theme::from_toml("mine", "[styles]\n\"ui.text\" = { fg = \"#12\" }\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("style \"ui.text\": bad colour \"#12\""),
            "{e}"
        );
        let e = Theme::from_toml("mine", "inherits = \"neon\"\n").unwrap_err();
        assert_eq!(e.to_string(), "theme mine: inherits unknown theme \"neon\"");
        let e =
            Theme::from_toml("mine", "[styles]\n\"ui.text\" = { colour = \"red\" }\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("theme mine: unknown field `colour`"),
            "{e}"
        );
        assert_eq!(
            Theme::builtin("neon").unwrap_err().to_string(),
            "unknown theme \"neon\" (built-in: default, light, high-contrast)"
        );
    }

    #[test]
    fn select_prefers_no_color_then_user_text_then_builtin() {
        assert_eq!(
            Theme::select("light", None, true).unwrap().name,
            "monochrome"
        );
        assert_eq!(
            Theme::select("mine", Some("name = \"mine\"\n"), false)
                .unwrap()
                .name,
            "mine"
        );
        assert_eq!(
            Theme::select("high-contrast", None, false).unwrap().name,
            "high-contrast"
        );
        assert!(Theme::select("neon", None, false).is_err());
    }

    #[test]
    fn monochrome_has_no_colours() {
        let t = Theme::monochrome();
        for s in Slot::ALL {
            assert_eq!(t.style(s).fg, None);
            assert_eq!(t.style(s).bg, None);
        }
    }
}
