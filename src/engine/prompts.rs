//! The prompts the engine writes into `jobs.prompt`: continuation, corrective, preflight
//! corrective, verify replan, finalize and the upstream-dependency block of a leg.
//!
//! Pure text building; the daemon appends the contract instructions when it runs a job.

use crate::contract::Delegation;

/// Per-body cap when a config gives 0.
pub const DEFAULT_BODY_CAP: usize = 32 * 1024;
/// Cap over all bodies of one prompt (continuation or upstream block).
pub const AGGREGATE_CAP: usize = 128 * 1024;
/// Summary preview length in upstream blocks.
pub const PREVIEW_BYTES: usize = 280;

/// How artifact bodies are inlined: the per-body cap and the home's artifacts folder
/// whose brief a truncated body points at.
#[derive(Debug, Clone)]
pub struct Inline {
    pub cap: usize,
    pub artifact_root: std::path::PathBuf,
}

/// One leg as a continuation prompt shows it.
#[derive(Debug, Clone)]
pub struct LegLine {
    pub id: String,
    pub job_id: Option<String>,
    pub agent: String,
    /// The decision, or the job state, or why it never ran.
    pub outcome: String,
    pub phase: Option<String>,
    pub summary: Option<String>,
    pub artifact_body: Option<String>,
}

/// Everything a continuation-like prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    pub goal: String,
    /// The rendered human answers block, when the continuation answers an ask round.
    pub answers: Option<String>,
    /// The rendered human approval block, when a human resumed a failure round with `continue`.
    pub approvals: Option<String>,
    /// Budget pressure line, when within 2 of a bound.
    pub pressure: Option<String>,
    pub legs: Vec<LegLine>,
    /// How artifact bodies are inlined; `None` = inlining off.
    pub inline: Option<Inline>,
}

fn head(f: &Frame) -> String {
    let mut s = String::new();
    if !f.goal.trim().is_empty() {
        s.push_str(&format!("Original goal:\n{}\n\n", f.goal.trim_end()));
    }
    if let Some(a) = &f.answers {
        s.push_str(
            "Human answers to your questions (you paused to ask these; use them and proceed):\n",
        );
        s.push_str(a);
        s.push('\n');
    }
    if let Some(a) = &f.approvals {
        s.push_str(
            "Human-approved continuation (a human reviewed the failed delegation(s) below and \
             approved proceeding; follow their instructions):\n",
        );
        s.push_str(a);
        s.push('\n');
    }
    s
}

fn pressure(f: &Frame, s: &mut String) {
    if let Some(p) = &f.pressure {
        s.push_str(p);
        s.push_str("\n\n");
    }
}

fn leg_lines(f: &Frame, s: &mut String) {
    if f.legs.is_empty() {
        return;
    }
    s.push_str("Delegation results:\n");
    let mut remaining = AGGREGATE_CAP;
    for l in &f.legs {
        match &l.job_id {
            Some(job) => {
                s.push_str(&format!(
                    "- delegation \"{}\" (job {job}, agent {}): {}",
                    l.id, l.agent, l.outcome
                ));
                if let Some(p) = l.phase.as_deref().filter(|p| !p.is_empty()) {
                    s.push_str(&format!(" [phase: {p}]"));
                }
                if let Some(sum) = l.summary.as_deref().filter(|x| !x.trim().is_empty()) {
                    s.push_str(&format!(" — {}", sum.trim()));
                }
                s.push('\n');
                if let (Some(inline), Some(body)) = (&f.inline, l.artifact_body.as_deref()) {
                    s.push_str(&inline_body(body, inline, &mut remaining, job));
                }
            }
            None => s.push_str(&format!(
                "- delegation \"{}\" (agent {}): {}\n",
                l.id, l.agent, l.outcome
            )),
        }
    }
    s.push('\n');
}

fn closing(f: &Frame) -> &'static str {
    if f.goal.trim().is_empty() {
        "Synthesize a final answer from these results: reconcile conflicts and flag gaps. Return new \
         delegations only for a genuine remaining gap; otherwise return an EMPTY delegations list."
    } else {
        "Synthesize an answer to the original goal from these results: reconcile conflicts and flag \
         gaps. Return new delegations only for a genuine remaining gap; otherwise return an EMPTY \
         delegations list."
    }
}

fn set_lines(title: &str, set: &[Delegation], s: &mut String) {
    if set.is_empty() {
        return;
    }
    s.push_str(title);
    s.push('\n');
    for d in set {
        s.push_str(&format!(
            "- delegation \"{}\" (agent {}, action {})\n",
            d.id,
            agent_label(d),
            d.action
        ));
    }
    s.push('\n');
}

/// The agent a delegation names, or its ephemeral runtime.
pub fn agent_label(d: &Delegation) -> String {
    match (&d.agent, &d.ephemeral) {
        (Some(a), _) => a.clone(),
        (None, Some(e)) => format!("ephemeral {}", e.runtime),
        (None, None) => "-".into(),
    }
}

/// The normal synthesis continuation (also the answer continuation).
pub fn continuation(f: &Frame) -> String {
    let mut s = head(f);
    if !f.legs.is_empty() {
        s.push_str("All delegated jobs have finished. Review the results below.\n\n");
    }
    pressure(f, &mut s);
    leg_lines(f, &mut s);
    s.push_str(closing(f));
    s.push('\n');
    s
}

/// The terminal finalize continuation after a backstop tripped.
pub fn finalize(f: &Frame, reason: &str, not_dispatched: &[Delegation]) -> String {
    let mut s = head(f);
    s.push_str(&format!(
        "A termination backstop was reached ({reason}). You cannot delegate any more work.\n\n"
    ));
    pressure(f, &mut s);
    leg_lines(f, &mut s);
    set_lines(
        "Delegations that were NOT dispatched:",
        not_dispatched,
        &mut s,
    );
    s.push_str(
        "Synthesize a best-effort FINAL answer to the original goal from what you have: reconcile \
         conflicts and flag gaps. Return an EMPTY delegations list. Any delegations you return now \
         will be ignored.\n",
    );
    s
}

/// The corrective continuation after a repeated set or a non-progress streak.
pub fn corrective(f: &Frame, set: &[Delegation]) -> String {
    let mut s = head(f);
    s.push_str(
        "You delegated the same set as a previous round; it did not change the outcome. Change \
         your approach or return an EMPTY delegations list to finish.\n\n",
    );
    pressure(f, &mut s);
    leg_lines(f, &mut s);
    set_lines("Repeated delegation set:", set, &mut s);
    s.push_str(closing(f));
    s.push('\n');
    s
}

/// The corrective continuation after a preflight failure (nothing was dispatched).
pub fn preflight(f: &Frame, reason: &str, set: &[Delegation]) -> String {
    let mut s = head(f);
    s.push_str(&format!(
        "None of your delegations were dispatched: the set is preflighted as a whole and one leg \
         is unroutable.\n{reason}\n\nThe `agent` field names a registered agent, not a runtime \
         (codex, claude and kimi are runtimes). Use one of the valid agents, or an inline \
         `ephemeral` spec with a runtime, or return an EMPTY delegations list to finish.\n\n"
    ));
    pressure(f, &mut s);
    set_lines("Delegations that were NOT dispatched:", set, &mut s);
    s.push_str(closing(f));
    s.push('\n');
    s
}

/// The bounded verify→replan continuation.
pub fn replan(f: &Frame, findings: &[String], attempt: u32, cap: u32) -> String {
    let mut s = head(f);
    s.push_str(
        "Independent verification FAILED: the verify leg(s) did not approve the combined result.\n\n",
    );
    pressure(f, &mut s);
    s.push_str("Verification findings:\n");
    for line in findings {
        s.push_str(line);
        s.push('\n');
    }
    s.push('\n');
    leg_lines(f, &mut s);
    s.push_str(&format!(
        "This is verify→replan attempt {attempt} of {cap}. Re-plan to fix what verification found \
         and delegate again, including a verify leg."
    ));
    if attempt >= cap {
        s.push_str(" This is the LAST attempt: a further failure ends in a best-effort finalize.");
    }
    s.push_str("\n\n");
    s.push_str(closing(f));
    s.push('\n');
    s
}

/// The text of a body truncated to at most `max` bytes on a character boundary.
pub fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// An inlined artifact body in a fence longer than any backtick run inside it.
pub fn inline_body(body: &str, inline: &Inline, remaining: &mut usize, job: &str) -> String {
    if body.is_empty() || *remaining == 0 {
        return String::new();
    }
    let limit = inline.cap.min(*remaining);
    let kept = truncate_utf8(body, limit);
    *remaining -= kept.len();
    let mut inner = kept.to_string();
    if !inner.ends_with('\n') {
        inner.push('\n');
    }
    if kept.len() < body.len() {
        inner.push_str(&format!(
            "[... ({} bytes truncated; the full body is in the on-disk brief at {})]\n",
            body.len() - kept.len(),
            crate::home::Home::brief_path(&inline.artifact_root, job).display()
        ));
    }
    let longest = longest_backtick_run(&inner);
    let fence = "`".repeat((longest + 1).max(3));
    format!("  artifact_body:\n{fence}\n{inner}{fence}\n")
}

fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        if c == '`' {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// One succeeded dependency as the upstream block shows it.
#[derive(Debug, Clone)]
pub struct Upstream {
    pub id: String,
    pub agent: String,
    pub action: String,
    pub job_id: String,
    pub decision: String,
    pub summary: String,
    pub changes_made: usize,
    pub artifact_body: Option<String>,
}

/// The "Upstream dependency results" block appended to a dependent leg's prompt.
pub fn upstream_block(deps: &[Upstream], inline: &Inline) -> String {
    if deps.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n\nUpstream dependency results:\n");
    let mut remaining = AGGREGATE_CAP;
    for d in deps {
        s.push_str(&format!(
            "- dep \"{}\" (agent {}, action {}): {}",
            d.id, d.agent, d.action, d.decision
        ));
        let trimmed = d.summary.trim_end();
        if !trimmed.is_empty() {
            let mut preview = truncate_utf8(trimmed, PREVIEW_BYTES).to_string();
            if preview.len() < trimmed.len() {
                preview.push('…');
            }
            if preview.contains('`') {
                let fence = "`".repeat((longest_backtick_run(&preview) + 1).max(3));
                preview = format!("\n{fence}\n{preview}\n{fence}");
            }
            s.push_str(&format!(" — {preview}"));
        }
        if d.changes_made > 0 {
            s.push_str(&format!(" [changes_made: {}]", d.changes_made));
        }
        s.push('\n');
        if let Some(body) = &d.artifact_body {
            s.push_str(&inline_body(body, inline, &mut remaining, &d.job_id));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_utf8_safe_and_fences_outgrow_backticks() {
        assert_eq!(truncate_utf8("héllo", 2), "h");
        let inline = Inline {
            cap: 100,
            artifact_root: "/h/artifacts".into(),
        };
        let mut rem = 100;
        let b = inline_body("a ```` b", &inline, &mut rem, "j");
        assert!(b.contains("`````\n"), "{b}");
        let mut rem = 4;
        let b = inline_body("abcdefgh", &inline, &mut rem, "j");
        assert!(
            b.contains("abcd\n[... (4 bytes truncated; the full body is in the on-disk brief at /h/artifacts/delegations/j/brief.md)]"),
            "{b}"
        );
        assert_eq!(rem, 0);
        assert_eq!(inline_body("x", &inline, &mut rem, "j"), "");
    }
}
