//! Human gates: answering ask rounds, resuming failure rounds (retry|continue|abort), the
//! answers block of continuation prompts, and the `job pending` listing.
//!
//! Rounds are opened by `gates`; this module closes them.

use std::collections::BTreeMap;

use crate::store::Tx;
use serde::Serialize;
use serde_json::{Value, json};

use super::bounds::Carry;
use super::ctx::Ctx;
use super::{EngineError, Env};
use crate::Invalid;
use crate::clock::Millis;
use crate::contract::HumanQuestion;
/// The verbs this module resumes failure rounds with (the vocabulary crate spells them).
pub use crate::domain::ResumeVerb;
use crate::domain::{EventKind, JobKind, JobState};
use crate::store::StoreError;
use crate::store::delegations;
use crate::store::escalations::{self, Round, RoundKind};
use crate::store::jobs::{self, FollowUp};
use crate::store::runs;

/// One question as `job pending --json` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingQuestion {
    pub id: String,
    pub prompt: String,
    pub choices: Vec<String>,
}

/// Something awaiting a human (SPEC §8 `job pending --json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingItem {
    pub job_id: String,
    pub root_id: String,
    pub kind: RoundKind,
    pub questions: Vec<PendingQuestion>,
    pub reason: String,
    pub opened_at: Millis,
    pub thread: Option<String>,
}

/// Every open round, oldest first.
pub fn pending(conn: &Tx<'_>) -> Result<Vec<PendingItem>, EngineError> {
    pending_first(conn, None)
}

/// The oldest `limit` open rounds (every one with `None`): what a screen of them shows.
pub fn pending_first(conn: &Tx<'_>, limit: Option<usize>) -> Result<Vec<PendingItem>, EngineError> {
    Ok(escalations::open_first(conn, limit)?
        .into_iter()
        .map(|r| PendingItem {
            questions: questions_of(&r)
                .into_iter()
                .map(|q| PendingQuestion {
                    id: q.id,
                    prompt: q.prompt,
                    choices: q.choices,
                })
                .collect(),
            job_id: r.job_id,
            root_id: r.root_id,
            kind: r.kind,
            reason: r.reason,
            opened_at: r.opened_ms,
            thread: r.thread_id,
        })
        .collect())
}

fn questions_of(r: &Round) -> Vec<HumanQuestion> {
    serde_json::from_value(r.questions.clone()).unwrap_or_default()
}

/// Parsed answer text: known ids and the unmatched rest, in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answers {
    pub by_id: BTreeMap<String, String>,
    pub unmatched: BTreeMap<String, String>,
}

/// `<qid>: text` a line; a line without a prefix continues the previous answer; a lone
/// question also takes a bare body. Unknown ids are kept as guidance, never dropped.
pub fn parse_answers(text: &str, questions: &[HumanQuestion]) -> Answers {
    let known = |id: &str| questions.iter().any(|q| q.id == id);
    let mut entries: Vec<(String, String)> = Vec::new();
    let mut loose: Vec<&str> = Vec::new();
    for line in text.lines() {
        let prefixed = line.split_once(':').and_then(|(id, rest)| {
            let id = id.trim();
            (!id.is_empty() && !id.contains(char::is_whitespace))
                .then(|| (id.to_string(), rest.trim().to_string()))
        });
        match (prefixed, entries.last_mut()) {
            (Some(e), _) => entries.push(e),
            (None, Some(last)) => {
                if !last.1.is_empty() {
                    last.1.push('\n');
                }
                last.1.push_str(line.trim_end());
            }
            (None, None) => loose.push(line),
        }
    }
    let mut out = Answers::default();
    let matched_any = entries.iter().any(|(id, _)| known(id));
    if !matched_any && questions.len() == 1 {
        out.by_id
            .insert(questions[0].id.clone(), text.trim().to_string());
        return out;
    }
    for (id, body) in entries {
        let slot = if known(&id) {
            &mut out.by_id
        } else {
            &mut out.unmatched
        };
        slot.entry(id)
            .and_modify(|b: &mut String| {
                b.push('\n');
                b.push_str(&body);
            })
            .or_insert(body);
    }
    let stray = loose.join("\n");
    if !stray.trim().is_empty() {
        out.unmatched
            .insert("(no id)".into(), stray.trim().to_string());
    }
    out
}

/// The "Human answers" block over every answered ask round on `job_id`, or `None`.
pub fn answers_block(conn: &Tx<'_>, job_id: &str) -> Result<Option<String>, EngineError> {
    let mut s = String::new();
    let mut unmatched: BTreeMap<String, String> = BTreeMap::new();
    for r in escalations::for_job(conn, job_id)? {
        if r.kind != RoundKind::Ask || r.verb.as_deref() != Some("answer") {
            continue;
        }
        let ans = r.answers.clone().unwrap_or(Value::Null);
        for q in questions_of(&r) {
            s.push_str(&format!("- {} — {}\n", q.id, q.prompt));
            match ans["answers"][&q.id].as_str() {
                Some(a) => s.push_str(&format!("  answer: {a}\n")),
                None => s.push_str("  answer: (no answer provided)\n"),
            }
        }
        if let Some(map) = ans["unmatched"].as_object() {
            for (k, v) in map {
                unmatched.insert(k.clone(), v.as_str().unwrap_or("").to_string());
            }
        }
    }
    if !unmatched.is_empty() {
        s.push_str(
            "Unmatched answer ids (no such question; treat as additional human guidance):\n",
        );
        for (k, v) in unmatched {
            s.push_str(&format!("- {k}: {v}\n"));
        }
    }
    Ok((!s.is_empty()).then_some(s))
}

/// The "Human approval" block over every failure round on `job_id` a human resumed with
/// `continue`: which leg failed, that continuing was approved, and the human's instructions.
pub fn approvals_block(conn: &Tx<'_>, job_id: &str) -> Result<Option<String>, EngineError> {
    let mut s = String::new();
    for r in escalations::for_job(conn, job_id)? {
        if r.kind != RoundKind::Failure || r.verb.as_deref() != Some("continue") {
            continue;
        }
        let leg = r.delegation_id.as_deref().unwrap_or("-");
        let job = r.failed_job_id.as_deref().unwrap_or("-");
        s.push_str(&format!(
            "- delegation \"{leg}\" (job {job}) failed ({}); a human approved continuing without it\n",
            r.reason.trim()
        ));
        if let Some(i) = r.instructions.as_deref().filter(|i| !i.trim().is_empty()) {
            s.push_str(&format!("  human instructions: {}\n", i.trim()));
        }
    }
    Ok((!s.is_empty()).then_some(s))
}

/// The result of a coordinator that returned delegations beside the questions of its own
/// ask round: its set is held while the round is open, dispatched on the answer, listed as
/// not dispatched when the round closes any other way. `None` for anything else.
fn held_set(holder: &jobs::Job, round: &Round) -> Option<crate::contract::GitmootResult> {
    let asked_itself = round.kind == RoundKind::Ask
        && round.failed_job_id.as_deref() == Some(holder.id.as_str())
        && holder.state == JobState::Succeeded;
    super::ctx::parse_result(holder.result.as_ref())
        .filter(|r| asked_itself && !r.delegations.is_empty())
}

fn open_rounds_for(conn: &Tx<'_>, job_id: &str) -> Result<Vec<Round>, EngineError> {
    let job = jobs::require(conn, job_id)?;
    Ok(escalations::open_for_root(conn, &job.root_id)?
        .into_iter()
        .filter(|r| r.job_id == job_id || r.failed_job_id.as_deref() == Some(job_id))
        .collect())
}

/// The choice `answer` names for the choice question `q`: one of its choices, whole or
/// by a unique prefix, case-insensitive. The contract has no free-text marker, so a
/// question that offers choices takes only those; anything else is refused naming them.
fn choose(q: &HumanQuestion, answer: &str) -> Result<String, Invalid> {
    let wanted = answer.trim().to_lowercase();
    let named = |c: &&String| c.to_lowercase() == wanted;
    if let Some(whole) = q.choices.iter().find(named) {
        return Ok(whole.clone());
    }
    let starts = |c: &&String| !wanted.is_empty() && c.to_lowercase().starts_with(&wanted);
    match q
        .choices
        .iter()
        .filter(starts)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [one] => Ok((*one).clone()),
        _ => Err(Invalid(format!(
            "{}: {:?} is not one of its choices ({})",
            q.id,
            answer.trim(),
            q.choices.join(", ")
        ))),
    }
}

/// The answer text that gives every question of `job_id`'s open ask round the one choice
/// `choice` (`job answer --where … --choice`, the control room's marked rows): refused
/// when nothing asks, or a question takes free text or does not offer it.
pub fn choice_answer(tx: &Tx<'_>, job_id: &str, choice: &str) -> Result<String, EngineError> {
    let rounds = open_rounds_for(tx, job_id)?;
    let Some(round) = rounds.iter().find(|r| r.kind == RoundKind::Ask) else {
        return Err(Invalid(format!("job {job_id} is not waiting on a question")).into());
    };
    let mut lines = Vec::new();
    for q in questions_of(round) {
        if q.choices.is_empty() {
            return Err(Invalid(format!(
                "{}: takes free text, not a choice; answer {job_id} on its own",
                q.id
            ))
            .into());
        }
        lines.push(format!("{}: {}", q.id, choose(&q, choice)?));
    }
    Ok(lines.join("\n"))
}

/// `job answer JOB "<qid>: text"`: closes the ask round and moves the tree on. Returns the
/// answer continuation's id when one was enqueued now (legs still running defer it).
pub fn answer(
    tx: &Tx<'_>,
    env: Env<'_>,
    job_id: &str,
    text: &str,
) -> Result<Option<String>, EngineError> {
    let rounds = open_rounds_for(tx, job_id)?;
    let Some(mut round) = rounds.iter().find(|r| r.kind == RoundKind::Ask).cloned() else {
        if rounds.iter().any(|r| r.kind == RoundKind::Failure) {
            return Err(Invalid(format!(
                "job {job_id} is paused on a failure escalation, not an ask; resume it with retry|continue|abort, not answer"
            ))
            .into());
        }
        return Err(Invalid(format!("job {job_id} has no pending human question")).into());
    };
    if text.trim().is_empty() {
        return Err(Invalid(
            "the answer is empty; give one \"<qid>: text\" line per question".into(),
        )
        .into());
    }
    let ctx = Ctx::new(tx, env);
    let qs = questions_of(&round);
    let mut parsed = parse_answers(text, &qs);
    for (id, answer) in parsed.by_id.iter_mut() {
        if let Some(q) = qs.iter().find(|q| &q.id == id && !q.choices.is_empty()) {
            *answer = choose(q, answer)?;
        }
    }
    let answers = json!({"answers": parsed.by_id, "unmatched": parsed.unmatched, "text": text});
    ctx.resolve_round(&mut round, "answer", Some(answers), None)?;
    ctx.event(
        &round.root_id,
        Some(&round.job_id),
        EventKind::DelegationAskAnswered,
        format!(
            "human answered {} ask-gate question(s) for job {}",
            parsed.by_id.len(),
            round.job_id
        ),
        None,
    )?;
    let target = jobs::require(tx, &round.job_id)?;
    match target.followup {
        FollowUp::Batch => {
            ctx.advance_batch(&target.id)?;
        }
        FollowUp::None => {
            let frame = ctx.frame(&target, &[])?;
            let carry = Carry::from_value(target.carry.as_ref());
            let run = runs::require(tx, &target.root_id)?;
            let held = held_set(&target, &round);
            let not_dispatched = held.as_ref().map_or(&[][..], |r| &r.delegations[..]);
            match (super::bounds::stop_reason(&run), &held) {
                (Some(reason), _) => {
                    ctx.finalize_with(&target, &reason, frame, not_dispatched, &carry)?
                }
                // The set it fanned out beside its questions runs now; its batch's
                // continuation carries the answers.
                (None, Some(r)) => ctx.dispatch(&target, r)?,
                (None, None) => ctx.enqueue_continuation(
                    &target,
                    JobKind::Continuation,
                    super::prompts::continuation(&frame),
                    Carry {
                        finalize_reason: None,
                        repeat_count: 0,
                        ..carry
                    },
                    "answer",
                )?,
            }
        }
        // The round was all that held this outcome back (e.g. a leg's block_parent).
        FollowUp::Continued | FollowUp::Blocked => ctx.propagate(&target)?,
    }
    let target = jobs::require(tx, &round.job_id)?;
    Ok(if target.followup == FollowUp::Continued {
        target.continuation_id
    } else {
        None
    })
}

/// `job resume JOB retry|continue|abort [INSTRUCTIONS]` on a failure round.
pub fn resume(
    tx: &Tx<'_>,
    env: Env<'_>,
    job_id: &str,
    verb: ResumeVerb,
    instructions: Option<&str>,
) -> Result<(), EngineError> {
    if jobs::get(tx, job_id)?.is_some_and(|j| j.state == JobState::Interrupted) {
        return super::lost::resume(tx, env, job_id, verb);
    }
    let rounds = open_rounds_for(tx, job_id)?;
    let Some(mut round) = rounds
        .iter()
        .find(|r| r.kind == RoundKind::Failure)
        .cloned()
    else {
        if rounds.iter().any(|r| r.kind == RoundKind::Ask) {
            return Err(Invalid(format!(
                "job {job_id} is awaiting a human answer; resume it with answer \"<qid>: ...\", not {}",
                verb.as_str()
            ))
            .into());
        }
        return Err(Invalid(format!("job {job_id} has no pending human escalation")).into());
    };
    let ctx = Ctx::new(tx, env);
    let parent = jobs::require(tx, &round.job_id)?;
    let did = round.delegation_id.clone().unwrap_or_default();
    let instr = instructions
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    match verb {
        ResumeVerb::Retry => {
            if !ctx.budget_allows_one_more(&parent.root_id)? {
                return Err(Invalid(format!(
                    "cannot retry: the per-root job budget of {} is reached; resume with continue or abort",
                    env.cfg.max_delegation_total_jobs
                ))
                .into());
            }
            let legs = delegations::for_parent(tx, &parent.id)?;
            let Some(mut leg) = legs.iter().find(|l| l.delegation_id == did).cloned() else {
                return Err(Invalid(format!(
                    "escalated delegation {did:?} not found on job {}",
                    parent.id
                ))
                .into());
            };
            ctx.resolve_round(&mut round, "retry", None, instr.clone())?;
            let id = ctx.enqueue_leg(&parent, &mut leg, &legs, instr.as_deref())?;
            ctx.job_event(
                &parent,
                EventKind::DelegationEscalationRetry,
                format!("delegation {did:?} re-run by a human as job {id}"),
                None,
            )?;
        }
        ResumeVerb::Continue => {
            let mut legs = delegations::for_parent(tx, &parent.id)?;
            if let Some(leg) = legs.iter_mut().find(|l| l.delegation_id == did) {
                leg.accepted = true;
                leg.updated_ms = ctx.now;
                delegations::put(tx, leg)?;
            }
            ctx.resolve_round(&mut round, "continue", None, instr)?;
        }
        ResumeVerb::Abort => {
            let mut p = parent.clone();
            let mut carry = Carry::from_value(p.carry.as_ref());
            carry.finalize_reason = Some(match &instr {
                Some(i) => format!("human aborted the escalation: {i}"),
                None => "human aborted the escalation".into(),
            });
            p.carry = Some(carry.to_value());
            jobs::put(tx, &p)?;
            ctx.resolve_round(&mut round, "abort", None, instr)?;
        }
    }
    ctx.advance_batch(&parent.id)?;
    let parent = jobs::require(tx, &parent.id)?;
    ctx.propagate(&parent)
}

impl Ctx<'_, '_> {
    /// Closes every open round of a tree the operator or a sweep stopped, then moves on.
    pub fn close_rounds_for_stop(&self, root: &str, verb: &str) -> Result<(), EngineError> {
        for mut r in escalations::open_for_root(self.tx, root)? {
            self.resolve_round(&mut r, verb, None, None)?;
            self.after_round_timeout(&r)?;
        }
        Ok(())
    }

    /// A round closed without a human: the holder finalizes once nothing is in flight.
    pub fn after_round_timeout(&self, r: &Round) -> Result<(), EngineError> {
        let target = jobs::require(self.tx, &r.job_id)?;
        let run = runs::require(self.tx, &target.root_id)?;
        let reason = super::bounds::stop_reason(&run).unwrap_or_else(|| {
            format!(
                "escalation TTL of {} elapsed with no human response",
                crate::duration::format_ms(self.cfg.escalation_ttl.0)
            )
        });
        let mut carry = Carry::from_value(target.carry.as_ref());
        match target.followup {
            FollowUp::Batch => {
                carry.finalize_reason = Some(reason);
                let mut t = target.clone();
                t.carry = Some(carry.to_value());
                jobs::put(self.tx, &t)?;
                self.advance_batch(&t.id)
            }
            FollowUp::None => {
                let frame = self.frame(&target, &[])?;
                let held = held_set(&target, r);
                let not_dispatched = held.as_ref().map_or(&[][..], |h| &h.delegations[..]);
                self.finalize_with(&target, &reason, frame, not_dispatched, &carry)
            }
            FollowUp::Continued | FollowUp::Blocked => self.propagate(&target),
        }
    }
}

impl From<serde_json::Error> for EngineError {
    fn from(e: serde_json::Error) -> Self {
        Self::Store(StoreError::from(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str) -> HumanQuestion {
        HumanQuestion {
            id: id.into(),
            prompt: format!("{id}?"),
            choices: vec![],
        }
    }

    #[test]
    fn answers_split_by_id_continue_lines_and_keep_unknown_ids() {
        let a = parse_answers("q1: a\nmore\nqx: typo\nq2:b", &[q("q1"), q("q2")]);
        assert_eq!(a.by_id["q1"], "a\nmore");
        assert_eq!(a.by_id["q2"], "b");
        assert_eq!(a.unmatched["qx"], "typo");
    }

    #[test]
    fn a_lone_question_takes_the_whole_body() {
        let a = parse_answers("yes: ship it", &[q("q1")]);
        assert_eq!(a.by_id["q1"], "yes: ship it");
        assert!(a.unmatched.is_empty());
    }

    #[test]
    fn stray_text_before_any_id_is_kept_as_guidance() {
        let a = parse_answers("note first\nq1: a", &[q("q1"), q("q2")]);
        assert_eq!(a.unmatched["(no id)"], "note first");
    }
}
