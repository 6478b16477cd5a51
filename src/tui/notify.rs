//! The control room's half of the local @-tag: when a new attention item arrives while
//! the Attention pane is not focused, ring the terminal bell and send a desktop
//! notification (OSC 9 and OSC 777, which terminals without support ignore). Both follow
//! `[notify] bell` / `[notify] desktop`.
//!
//! Owns only the "is it new" memory and the escape sequences; it never changes the view.

use std::collections::HashSet;
use std::io::Write;

use gitmoot_ui::State;
use gitmoot_ui::state::Pane;
use gitmoot_ui::view::{AttentionKind, Snapshot};

use crate::config::{Config, NotifyConfig};
use crate::home::Home;

pub(crate) struct Bell {
    config: NotifyConfig,
    /// Keys of the items already seen; `None` until the first snapshot, whose items
    /// were waiting before the room opened and so are not news.
    seen: Option<HashSet<String>>,
}

impl Bell {
    /// `[notify]` of the home's config; a config that does not load keeps the defaults
    /// (the room reports config errors elsewhere).
    pub fn new(home: &Home) -> Self {
        let config = Config::load(&home.config_path())
            .map(|c| c.notify)
            .unwrap_or_default();
        Self::with(config)
    }

    pub fn with(config: NotifyConfig) -> Self {
        Self { config, seen: None }
    }

    /// The bytes to send for this snapshot: empty unless an item is new and the
    /// Attention pane is not where the operator is looking.
    pub fn signal(&mut self, snap: &Snapshot, state: &State) -> String {
        let keys: HashSet<String> = snap.attention.iter().map(|a| a.key()).collect();
        let Some(seen) = self.seen.replace(keys.clone()) else {
            return String::new();
        };
        let fresh: Vec<_> = snap
            .attention
            .iter()
            .filter(|a| !seen.contains(&a.key()))
            .collect();
        if fresh.is_empty() || state.focus == Pane::Attention {
            return String::new();
        }
        let mut out = String::new();
        if self.config.bell {
            out.push('\x07');
        }
        if self.config.desktop {
            let first = fresh[0];
            let what = match &first.kind {
                AttentionKind::Ask { .. } => "asks a question",
                AttentionKind::Failure { .. } => "has a failed leg",
                AttentionKind::Preflight { .. } => "could not route its delegations",
                AttentionKind::Overlap { .. } => "changes files another open job changes",
                AttentionKind::Conflict { on_base: true, .. } => {
                    "conflicts with work landed on its base"
                }
                AttentionKind::Conflict { .. } => "conflicts with another open job's work",
                AttentionKind::Stall { .. } => "looks stalled",
            };
            let more = match fresh.len() {
                1 => String::new(),
                n => format!(" (+{} more)", n - 1),
            };
            let text = plain(&format!(
                "gitmoot: {} {what}; a human is needed{more}",
                first.job_id
            ));
            out.push_str(&format!("\x1b]9;{text}\x1b\\"));
            out.push_str(&format!("\x1b]777;notify;gitmoot;{text}\x1b\\"));
        }
        out
    }

    /// Sends `signal`'s bytes to the terminal.
    pub(crate) fn ring(&mut self, snap: &Snapshot, state: &State) {
        let bytes = self.signal(snap, state);
        if bytes.is_empty() {
            return;
        }
        let mut out = std::io::stdout();
        let _ = out.write_all(bytes.as_bytes());
        let _ = out.flush();
    }
}

/// Text safe inside an OSC string: no control characters, and no `;` (OSC 777's field
/// separator).
fn plain(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() || c == ';' { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gitmoot_ui::view::AttentionItem;

    fn item(job: &str) -> AttentionItem {
        AttentionItem {
            job_id: job.into(),
            root_id: job.into(),
            agent: "lead".into(),
            why: None,
            opened_ms: 0,
            thread: None,
            kind: AttentionKind::Preflight {
                reason: "unknown".into(),
            },
        }
    }

    fn snap(items: &[&str]) -> Snapshot {
        let mut s = Snapshot::empty(0);
        s.attention = items.iter().map(|j| item(j)).collect();
        s
    }

    #[test]
    fn only_a_new_item_away_from_the_attention_pane_rings_and_each_half_can_be_off() {
        let mut state = State::new(gitmoot_ui::Keymap::builtin(), false, 0);
        state.focus = Pane::Tree;
        let mut bell = Bell::with(NotifyConfig::default());
        assert_eq!(bell.signal(&snap(&["a"]), &state), "", "already waiting");
        let out = bell.signal(&snap(&["a", "b"]), &state);
        assert!(out.starts_with('\x07'), "{out:?}");
        assert!(out.contains("\x1b]9;gitmoot: b could not route"), "{out:?}");
        assert!(
            out.contains("\x1b]777;notify;gitmoot;gitmoot: b"),
            "{out:?}"
        );
        assert_eq!(
            bell.signal(&snap(&["a", "b"]), &state),
            "",
            "not news twice"
        );
        state.focus = Pane::Attention;
        assert_eq!(bell.signal(&snap(&["a", "b", "c"]), &state), "");

        state.focus = Pane::Tree;
        let mut quiet = Bell::with(NotifyConfig {
            bell: false,
            desktop: false,
            ..NotifyConfig::default()
        });
        quiet.signal(&snap(&[]), &state);
        assert_eq!(quiet.signal(&snap(&["a"]), &state), "");
        let mut no_bell = Bell::with(NotifyConfig {
            bell: false,
            ..NotifyConfig::default()
        });
        no_bell.signal(&snap(&[]), &state);
        let out = no_bell.signal(&snap(&["a"]), &state);
        assert!(out.starts_with("\x1b]9;"), "{out:?}");
        assert!(!out.contains('\x07'), "{out:?}");
    }
}
