//! Confirmation dialogs (kill root, cancel job, abort, quit), the quitting frame and the
//! promote action picker. Each states exactly what will happen before anything does, sized
//! from the screen so its text and choices show whole from 80×24 up.
//!
//! Owns drawing; the confirmed action is built in `update`.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{centered, draw_overlay, hints, overlay_block};
use crate::action::{BulkVerb, PromoteAction};
use crate::state::Confirm;
use crate::theme::{Slot, Theme};
use crate::view::{Counts, Snapshot};
use crate::work::LandStrategy;

/// The dialog's width on this screen: roomy on a wide one, the screen less a margin on a
/// narrow one.
fn dialog_width(area: Rect) -> u16 {
    area.width.saturating_sub(4).clamp(area.width.min(30), 76)
}

/// Rows `lines` take when wrapped into `inner_w` columns.
fn wrapped_height(lines: &[Line], inner_w: u16) -> u16 {
    let w = inner_w.max(1) as usize;
    lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(w) as u16)
        .sum()
}

/// Draws the box and its wrapped lines, as tall as they need (up to the screen).
fn dialog(
    frame: &mut Frame,
    area: Rect,
    lines: Vec<Line>,
    title: &str,
    theme: &Theme,
    danger: bool,
) {
    let w = dialog_width(area);
    let h = wrapped_height(&lines, w.saturating_sub(2)) + 2;
    let inner = frame_box(frame, area, w, h, title, theme, danger);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

fn frame_box(
    frame: &mut Frame,
    area: Rect,
    w: u16,
    h: u16,
    title: &str,
    theme: &Theme,
    danger: bool,
) -> Rect {
    let style = if danger {
        theme.style(Slot::DialogDanger)
    } else {
        theme.style(Slot::DialogBorder)
    };
    let block = overlay_block(style, Span::styled(format!(" {title} "), style));
    draw_overlay(frame, centered(area, w, h), block)
}

/// One line of dialog text in one style.
fn say<'a>(text: impl Into<Cow<'a, str>>, style: Style) -> Line<'a> {
    Line::from(Span::styled(text, style))
}

/// Closes a dialog's text: a blank line, then its keys.
fn push_keys(lines: &mut Vec<Line>, keys: &[(String, &str)], theme: &Theme) {
    lines.push(Line::raw(""));
    let mut k = vec![Span::raw(" ")];
    k.extend(hints(keys, theme));
    lines.push(Line::from(k));
}

/// `counts` is the snapshot's: the quit question names the work as it stands now.
pub fn render_confirm(frame: &mut Frame, area: Rect, c: &Confirm, counts: Counts, theme: &Theme) {
    let text = theme.style(Slot::Text);
    let muted = theme.style(Slot::Muted);
    let (title, mut lines, keys): (String, Vec<Line>, Vec<(String, &str)>) = match c {
        Confirm::KillRoot {
            root_id,
            title,
            queued,
            running,
        } => (
            format!("Kill {root_id}?"),
            vec![
                say(format!(" \"{title}\""), theme.style(Slot::PaneTitle)),
                Line::raw(""),
                say(
                    format!(" • no new delegations; queued jobs ({queued}) are cancelled"),
                    text,
                ),
                say(
                    format!(" • running jobs ({running}) finish their current turn"),
                    text,
                ),
                say(
                    " • then exactly one finalize continuation runs on what completed",
                    text,
                ),
                say(" • the run ends as killed", text),
                say(
                    " Force terminates the running jobs' processes instead of waiting.",
                    muted,
                ),
            ],
            vec![
                ("y".into(), "kill"),
                ("F".into(), "force kill"),
                ("n/Esc".into(), "keep running"),
            ],
        ),
        Confirm::CancelJob { job_id } => (
            format!("Cancel {job_id}?"),
            vec![
                say(
                    " The job stops (a running one is terminated) and is marked cancelled.",
                    text,
                ),
                say(
                    " Its coordinator treats it as a failed leg under its failure policy.",
                    muted,
                ),
            ],
            vec![("y".into(), "cancel job"), ("n/Esc".into(), "keep it")],
        ),
        Confirm::Abort { job_id } => (
            format!("Abort {job_id}?"),
            vec![
                say(
                    " • the escalation resolves with abort: the failed leg is not retried",
                    text,
                ),
                say(
                    " • no new delegations; one finalize runs on what completed",
                    text,
                ),
                say(" • the run ends as aborted (⊗)", text),
                say(" Same as `gitmoot job resume … abort`.", muted),
            ],
            vec![("y".into(), "abort"), ("n/Esc".into(), "back")],
        ),
        Confirm::Quit => (
            "Quit the control room?".to_string(),
            vec![
                say(
                    format!(
                        " This control room's daemon has {} running, {} queued job(s).",
                        counts.running, counts.queued
                    ),
                    text,
                ),
                Line::raw(""),
                say(
                    " d  detach: quit now; the daemon keeps running the jobs",
                    text,
                ),
                say(
                    "    in the background; `gitmoot tui` attaches to it again,",
                    muted,
                ),
                say("    `gitmoot daemon stop` stops it", muted),
                say(
                    " w  wait: quit once every running and queued job has finished",
                    text,
                ),
                say(
                    " k  kill: stop the daemon; running jobs get the shutdown grace,",
                    text,
                ),
                say(
                    "    then are terminated and recorded failed; queued jobs stay queued",
                    text,
                ),
            ],
            vec![
                ("d/Enter".into(), "detach"),
                ("w".into(), "wait"),
                ("k".into(), "kill"),
                ("Esc".into(), "stay"),
            ],
        ),
        Confirm::Land { .. } | Confirm::Discard { .. } | Confirm::Review { .. } => {
            write_job_confirm(c, theme)
        }
        Confirm::Bulk { .. } | Confirm::BulkAnswer { .. } => many_confirm(c, theme),
    };
    push_keys(&mut lines, &keys, theme);
    let danger = !matches!(c, Confirm::Quit | Confirm::Review { .. });
    dialog(frame, area, lines, &title, theme, danger);
}

/// The many-jobs dialogs: one verb, or one answer's choice, on every marked job.
fn many_confirm<'a>(c: &'a Confirm, theme: &Theme) -> Dialog<'a> {
    match c {
        Confirm::BulkAnswer {
            job_ids,
            choices,
            at,
            lines,
        } => bulk_answer_confirm(job_ids.len(), &choices[*at], &lines[*at], theme),
        Confirm::Bulk {
            verb,
            job_ids,
            lines,
        } => bulk_confirm(*verb, job_ids.len(), lines, theme),
        _ => (String::new(), Vec::new(), Vec::new()),
    }
}

/// Lines a many-jobs dialog lists before it sums up the rest.
const BULK_SHOWN: usize = 14;

/// One verb on many marked jobs: what each will do, a refusal named as one.
fn bulk_confirm<'a>(verb: BulkVerb, n: usize, each: &'a [String], theme: &Theme) -> Dialog<'a> {
    let text = theme.style(Slot::Text);
    let muted = theme.style(Slot::Muted);
    let mut lines: Vec<Line> = each
        .iter()
        .take(BULK_SHOWN)
        .map(|l| say(format!(" • {l}"), text))
        .collect();
    if each.len() > BULK_SHOWN {
        lines.push(say(
            format!(" … and {} more", each.len() - BULK_SHOWN),
            muted,
        ));
    }
    lines.push(say(
        format!(" Same as `gitmoot job {verb} --where …`; a refused job leaves the rest going."),
        muted,
    ));
    (
        format!("{verb} {n} marked job(s)?"),
        lines,
        vec![("y".into(), verb.as_str()), ("n/Esc".into(), "back")],
    )
}

/// One choice for many marked jobs' questions: what each will do with `choice`.
fn bulk_answer_confirm<'a>(
    n: usize,
    choice: &str,
    each: &'a [String],
    theme: &Theme,
) -> Dialog<'a> {
    let (_, lines, _) = bulk_confirm(BulkVerb::Answer, n, each, theme);
    (
        format!("answer {n} marked job(s) {choice:?}?"),
        lines,
        vec![
            ("↑/↓".into(), "choice"),
            ("y".into(), "answer"),
            ("n/Esc".into(), "back"),
        ],
    )
}

/// What each land strategy does, as the land dialog states it.
fn strategy_says(s: LandStrategy, base: &str) -> String {
    match s {
        LandStrategy::Auto => {
            format!("fast-forward {base} when it has not moved, else a merge commit")
        }
        LandStrategy::Squash => format!("one new commit on {base} holding all of the work"),
        LandStrategy::Merge => format!("a merge commit on {base}, always"),
        LandStrategy::Rebase => format!("the job's commits replayed on {base}'s tip"),
    }
}

type Dialog<'a> = (String, Vec<Line<'a>>, Vec<(String, &'static str)>);

/// The land, discard and review questions: each names what it will change.
fn write_job_confirm<'a>(c: &'a Confirm, theme: &Theme) -> Dialog<'a> {
    let text = theme.style(Slot::Text);
    let muted = theme.style(Slot::Muted);
    let accent = theme.style(Slot::Accent);
    match c {
        Confirm::Land {
            job_id,
            strategy,
            branch,
            base,
            files,
            added,
            removed,
            conflict,
        } => {
            let mut lines = vec![say(
                format!(" {branch} → {base}: {files} file(s), +{added} −{removed}"),
                text,
            )];
            if let Some(c) = conflict {
                lines.push(say(
                    format!(" ✗ {c}: a merge or squash is refused; rebase it first"),
                    theme.style(Slot::AttentionFailure),
                ));
            }
            lines.push(Line::raw(""));
            for s in LandStrategy::ALL {
                let (mark, style) = if s == strategy {
                    ("▸", accent)
                } else {
                    (" ", muted)
                };
                lines.push(say(
                    format!(" {mark} {:<7} {}", s.as_str(), strategy_says(*s, base)),
                    style,
                ));
            }
            lines.push(Line::raw(""));
            lines.push(say(
                format!(
                    " Moves {base} in the registered checkout; the worktree is removed. Refused, changing nothing, on a conflict or uncommitted changes to the same files."
                ),
                muted,
            ));
            (
                format!("Land {job_id} on {base} ({})?", strategy.as_str()),
                lines,
                vec![
                    ("y".into(), "land"),
                    ("↑/↓".into(), "strategy"),
                    ("n/Esc".into(), "keep it"),
                ],
            )
        }
        Confirm::Discard { job_id, loss } => (
            format!("Discard {job_id}'s work?"),
            vec![
                say(format!(" Loses {loss}."), text),
                say(
                    " The worktree and its branch are removed; nothing was landed.",
                    text,
                ),
                say(" Same as `gitmoot job discard … --force`.", muted),
            ],
            vec![("y".into(), "discard"), ("n/Esc".into(), "keep it")],
        ),
        Confirm::Review {
            job_id,
            agent,
            round,
            comments,
        } => {
            let mut lines = vec![
                say(
                    format!(
                        " {agent} works on {job_id} again in its worktree (review round {round}, its next attempt), with these comments on top of its prompt:"
                    ),
                    text,
                ),
                Line::raw(""),
            ];
            lines.extend(comments.iter().map(|c| say(format!("   {c}"), accent)));
            (
                format!("Send {job_id} back for review?"),
                lines,
                vec![("y".into(), "send back"), ("n/Esc".into(), "keep editing")],
            )
        }
        _ => (String::new(), Vec::new(), Vec::new()),
    }
}

/// The frame shown while quitting waits: what is left and how to leave now.
pub fn render_stopping(frame: &mut Frame, area: Rect, kill: bool, snap: &Snapshot, theme: &Theme) {
    let text = theme.style(Slot::Text);
    let c = snap.counts;
    let what = if kill {
        format!(
            " stopping: {} job(s) — terminated after the daemon's shutdown grace",
            c.running
        )
    } else {
        format!(
            " stopping: {} job(s) — {} running, {} queued; quitting when all finish",
            c.running + c.queued,
            c.running,
            c.queued
        )
    };
    let mut lines = vec![say(what, text)];
    let keys: Vec<(String, &str)> = if kill {
        vec![("d".into(), "detach: the daemon finishes stopping alone")]
    } else {
        vec![
            ("d".into(), "detach now"),
            ("k".into(), "kill"),
            ("Esc".into(), "stay"),
        ]
    };
    push_keys(&mut lines, &keys, theme);
    dialog(frame, area, lines, "Quitting", theme, kill);
}

/// The promote picker: the message being promoted, then ask / review / implement.
/// The promote dialog's first line: the agent the job will run (the message's one
/// @mention), or why `chat task` will refuse it.
fn promote_target(seq: u64, mentions: &[String]) -> String {
    let names = |m: &[String]| {
        m.iter()
            .map(|a| format!("@{}", crate::sanitize::clean_line(a)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match mentions {
        [agent] => format!(
            " Run message #{seq} as a job (chat task) run by {}:",
            names(std::slice::from_ref(agent))
        ),
        [] => format!(" Message #{seq} mentions no agent: chat task needs one @agent to run it"),
        many => format!(
            " Message #{seq} mentions {}: chat task runs it only if exactly one is a \
             registered agent",
            names(many)
        ),
    }
}

pub fn render_promote(
    frame: &mut Frame,
    area: Rect,
    (seq, body, mentions): (u64, &str, &[String]),
    choice: usize,
    theme: &Theme,
) {
    let mut lines = vec![say(promote_target(seq, mentions), theme.style(Slot::Text))];
    let body = crate::sanitize::clean_line(body);
    if !body.is_empty() {
        let w = dialog_width(area).saturating_sub(6) as usize;
        let mut quoted = super::wrap(&body, w);
        if quoted.len() > 3 {
            quoted.truncate(3);
            if let Some(last) = quoted.last_mut() {
                last.push('…');
            }
        }
        for q in quoted {
            lines.push(say(format!("   │ {q}"), theme.style(Slot::Muted)));
        }
    }
    lines.push(Line::raw(""));
    for (i, a) in PromoteAction::ALL.iter().enumerate() {
        let sel = i == choice;
        let style = if sel {
            theme.style(Slot::Selection)
        } else {
            theme.style(Slot::Text)
        };
        let what = match a {
            PromoteAction::Ask => "answer a question, change nothing",
            PromoteAction::Review => "review and return a verdict",
            PromoteAction::Implement => "make the change",
        };
        lines.push(say(
            format!(" {} {:<10} {what}", if sel { "›" } else { " " }, a.as_str()),
            style,
        ));
    }
    push_keys(
        &mut lines,
        &[
            ("↑/↓".into(), "choose"),
            ("Enter".into(), "promote"),
            ("Esc".into(), "cancel"),
        ],
        theme,
    );
    dialog(frame, area, lines, "Promote to a job", theme, false);
}
