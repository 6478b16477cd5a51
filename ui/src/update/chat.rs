//! Chat commands: compose, reply, promote, mark an inbox read, and `@mention` completion.

use ratatui_textarea::TextArea;

use super::{refuse_readonly, textarea};
use crate::action::{Action, Write};
use crate::rows;
use crate::sanitize;
use crate::state::{Overlay, Pane, State, ToastLevel};
use crate::view::Snapshot;

/// The agents the control room has seen: with an inbox or on a job of a loaded tree.
pub(super) fn known_agents(snap: &Snapshot) -> Vec<String> {
    let mut v: Vec<String> = snap.inboxes.iter().map(|i| i.agent.clone()).collect();
    for r in &snap.roots {
        r.tree.walk(&mut |n| v.push(n.agent.clone()));
    }
    v.sort();
    v.dedup();
    v
}

pub(super) fn compose(state: &mut State, snap: &Snapshot, reply_to: Option<(u64, String)>) {
    if refuse_readonly(state, "sending") {
        return;
    }
    let Some(thread_id) = state.sel.thread.clone() else {
        state.notify(ToastLevel::Info, "select a thread first");
        return;
    };
    let mut text = textarea("message; @agent mentions, Tab completes");
    if let Some((_, author)) = &reply_to {
        text.insert_str(format!("@{author} "));
    }
    state.overlay = Some(Overlay::Compose {
        thread_id,
        reply_to: reply_to.map(|(s, _)| s),
        text,
        agents: known_agents(snap),
    });
}

fn selected_message<'a>(state: &State, snap: &'a Snapshot) -> Option<&'a crate::view::Message> {
    rows::message_rows(snap, state)
        .into_iter()
        .find(|m| Some(m.seq) == state.sel.message)
}

pub(super) fn reply(state: &mut State, snap: &Snapshot) {
    let target = selected_message(state, snap).map(|m| (m.seq, sanitize::clean_line(&m.author)));
    if target.is_none() {
        state.notify(ToastLevel::Info, "select a message to reply to");
        return;
    }
    compose(state, snap, target);
}

pub(super) fn promote(state: &mut State, snap: &Snapshot) {
    if refuse_readonly(state, "promote") {
        return;
    }
    match (selected_message(state, snap), state.sel.thread.clone()) {
        (Some(m), Some(thread_id)) => {
            state.overlay = Some(Overlay::Promote {
                thread_id,
                seq: m.seq,
                choice: 0,
            })
        }
        _ => state.notify(ToastLevel::Info, "select a message to promote"),
    }
}

pub(super) fn mark_read(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    let Some(inbox) = rows::inbox_rows(snap)
        .into_iter()
        .find(|i| Some(&i.agent) == state.sel.inbox.as_ref())
    else {
        state.notify(ToastLevel::Info, "select an inbox (h/l to the inbox list)");
        return;
    };
    let mut threads: Vec<&str> = inbox
        .items
        .iter()
        .filter(|i| !i.read)
        .map(|i| i.thread_id.as_str())
        .collect();
    threads.dedup();
    threads.sort();
    threads.dedup();
    for t in threads {
        let seqs = inbox
            .items
            .iter()
            .filter(|i| !i.read && i.thread_id == t)
            .map(|i| i.seq)
            .collect();
        out.push(Action::Write(Write::MarkRead {
            agent: inbox.agent.clone(),
            thread_id: t.to_string(),
            seqs,
        }));
    }
    if out.is_empty() {
        state.notify(
            ToastLevel::Info,
            format!("{}'s inbox has nothing unread", inbox.agent),
        );
    }
}

/// Completes the `@word` before the cursor with the first agent it prefixes.
pub(super) fn complete_mention(text: &mut TextArea<'static>, agents: &[String]) {
    let ratatui_textarea::DataCursor(row, col) = text.cursor();
    let line: Vec<char> = text.lines()[row].chars().collect();
    let before: String = line[..col.min(line.len())].iter().collect();
    let Some(at) = before.rfind('@') else { return };
    let partial = &before[at + 1..];
    if partial.contains(char::is_whitespace) {
        return;
    }
    if let Some(agent) = agents
        .iter()
        .find(|a| a.starts_with(partial) && a.as_str() != partial)
    {
        text.insert_str(format!("{} ", &agent[partial.len()..]));
    }
}

/// The operator reads a thread by looking at it: while its transcript is on screen with
/// unread messages, its newest seq is reported read, once per position. A read-only
/// control room writes nothing, read positions included.
pub(super) fn seen(state: &mut State, snap: &Snapshot, out: &mut Vec<Action>) {
    if state.readonly || state.right_pane() != Pane::Threads {
        return;
    }
    let Some(t) = snap.transcript.as_ref() else {
        return;
    };
    let unread = snap
        .threads
        .iter()
        .find(|v| v.id == t.thread_id)
        .map_or(0, |v| v.unread);
    let (Some(newest), true) = (t.messages.last(), unread > 0) else {
        return;
    };
    if state.sel.thread.as_deref() != Some(t.thread_id.as_str()) {
        return;
    }
    let pos = (t.thread_id.clone(), newest.seq);
    if state.seen_sent.as_ref() == Some(&pos) {
        return;
    }
    state.seen_sent = Some(pos.clone());
    out.push(Action::Write(Write::MarkSeen {
        thread_id: pos.0,
        seq: pos.1,
    }));
}
