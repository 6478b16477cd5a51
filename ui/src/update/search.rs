//! The Search view's keys (`Ctrl-f`): typing the query, Enter asking the loader for its
//! hits (`Load::Search`), moving between hits, and Enter on a hit jumping to its job's
//! drawer (or, for a chat hit, to its thread).
//!
//! Owns the keys only; the hits are the loader's (`search`, the CLI verb's function).

use crossterm::event::KeyEvent;

use crate::action::{Action, Load};
use crate::keymap::{Command, Context, KeyChord};
use crate::live::DetailTab;
use crate::pane::Pane;
use crate::state::{Overlay, Section, State};
use crate::view::SearchSource;
use crate::view::Snapshot;

/// Opens the view on an empty query, typing.
pub(super) fn open(state: &mut State) {
    state.overlay = Some(Overlay::Search {
        query: String::new(),
        typing: true,
        sel: 0,
    });
}

/// Handles one key in the open Search view; returns whether the view stays open.
pub(super) fn key(
    state: &mut State,
    snap: &Snapshot,
    (query, typing, sel): (&mut String, &mut bool, &mut usize),
    k: &KeyEvent,
    chord: KeyChord,
    out: &mut Vec<Action>,
) -> bool {
    if *typing {
        super::search_key(query, typing, k);
        if !*typing && !query.trim().is_empty() {
            *sel = 0;
            out.push(Action::Load(Load::Search(query.trim().to_string())));
        }
        return *typing || !query.trim().is_empty();
    }
    let n = snap.search.len();
    match state.keymap.lookup(Context::Global, chord) {
        Some(Command::Down) => *sel = (*sel + 1).min(n.saturating_sub(1)),
        Some(Command::Up) => *sel = sel.saturating_sub(1),
        Some(Command::Filter | Command::Search) => *typing = true,
        Some(Command::Open) | None if k.code == crossterm::event::KeyCode::Enter => {
            return !jump(state, snap, *sel, out);
        }
        Some(Command::Back | Command::Quit) => return false,
        _ => {}
    }
    true
}

/// Opens where hit `i` lives; returns whether there was one to open.
fn jump(state: &mut State, snap: &Snapshot, i: usize, out: &mut Vec<Action>) -> bool {
    let Some(hit) = snap.search.get(i) else {
        return false;
    };
    if let Some(job) = &hit.job {
        state.sel.tree = Some(job.clone());
        state.focus = Pane::Tree;
        if hit.source == SearchSource::Activity {
            state.detail_tab = DetailTab::Activity;
        }
        super::panes::open_detail(state, job.clone(), out);
    } else if let Some(slug) = &hit.thread {
        // A hit names its thread by slug; the panes and the loader go by id.
        let thread = snap
            .threads
            .iter()
            .find(|t| &t.slug == slug)
            .map_or(slug, |t| &t.id);
        state.sel.thread = Some(thread.clone());
        state.sel.message = hit.seq;
        state.section = Section::Transcript;
        state.focus = Pane::Threads;
        state.right = Pane::Threads;
        out.push(Action::Load(Load::Thread(thread.clone())));
    }
    true
}
