//! Keys while a line is edited: the `:` command line (history, completion of verbs, flags
//! and the names on screen) and the `/` filter.

use crossterm::event::{KeyCode, KeyEvent};

use super::chat::known_agents;
use super::overlay::open_messages;
use super::select::reconcile;
use super::{edit_key, search_key};
use crate::action::{Action, Write};
use crate::complete::Names;
use crate::state::{State, ToastLevel};
use crate::view::Snapshot;

pub(super) fn command_line_key(
    state: &mut State,
    snap: &Snapshot,
    k: KeyEvent,
    out: &mut Vec<Action>,
) {
    let Some(line) = state.command.as_mut() else {
        return;
    };
    if k.code != KeyCode::Tab {
        state.candidates.clear();
    }
    match k.code {
        KeyCode::Esc => state.command = None,
        KeyCode::Enter => {
            let text = line
                .trim()
                .trim_start_matches("gitmoot ")
                .trim()
                .to_string();
            state.command = None;
            if text.is_empty() {
                return;
            }
            state.remember(&text);
            if text == "messages" {
                open_messages(state, snap);
            } else if state.readonly && !crate::complete::is_read_command(&text) {
                state.notify(
                    ToastLevel::Error,
                    format!("read-only: `{text}` writes; only read verbs run (--readonly)"),
                );
            } else {
                out.push(Action::Write(Write::RunCommand(text)));
            }
        }
        KeyCode::Tab => {
            let names = names_on_screen(snap);
            let (done, cands) = crate::complete::complete(&state.completions, &names, line);
            *line = done;
            state.candidates = cands;
        }
        KeyCode::Up | KeyCode::Down => {
            let n = state.history.len();
            if n == 0 {
                return;
            }
            let pos = match (k.code, state.history_pos) {
                (KeyCode::Up, None) => Some(n - 1),
                (KeyCode::Up, Some(p)) => Some(p.saturating_sub(1)),
                (_, Some(p)) if p + 1 < n => Some(p + 1),
                _ => None,
            };
            state.history_pos = pos;
            *line = pos.map(|p| state.history[p].clone()).unwrap_or_default();
        }
        _ => {
            edit_key(line, &k);
        }
    }
}

/// What the `:` line's values complete from: the jobs, agents, threads and repos loaded.
fn names_on_screen(snap: &Snapshot) -> Names {
    let mut jobs = Vec::new();
    let mut repos: Vec<String> = Vec::new();
    for r in snap.roots_newest_first() {
        r.tree.walk(&mut |n| jobs.push(n.id.clone()));
        repos.extend(r.repo.clone());
    }
    repos.extend(snap.threads.iter().filter_map(|t| t.repo.clone()));
    repos.sort();
    repos.dedup();
    Names {
        jobs,
        agents: known_agents(snap),
        threads: snap.threads.iter().map(|t| t.slug.clone()).collect(),
        repos,
    }
}

pub(super) fn filter_key(state: &mut State, snap: &Snapshot, k: KeyEvent) {
    if search_key(&mut state.filter, &mut state.filter_editing, &k) {
        reconcile(state, snap);
    }
}
