//! The auto-respond sweep the daemon runs each tick: for an enrolled agent (both
//! `[chat].auto_respond` and the agent's `chat_autorespond`, registered or
//! `[agents.<name>]`) with an unread mention on a
//! `chat` message in an open non-moot thread, submit one read-only ask through the normal
//! gate. Bounded per (thread, agent): a hard cap counting posted results and in-flight asks
//! (at the cap: park, one "needs a human" notice), a cooldown that defers (never drops),
//! and one in-flight ask at a time. Replies come back as `job_result`, which never
//! triggers anything. Switched off, it runs no chat query at all.

use crate::store::Tx;

use super::Result;
use super::messages::{self, Post};
use crate::clock::Clock;
use crate::config::Config;
use crate::domain::Action;
use crate::engine::submit_root;
use crate::store::agents;
use crate::store::chat::{self as rows, JobLink, LinkPurpose, MessageKind};

/// The instruction appended to an auto-respond prompt.
pub(crate) const REPLY_INSTRUCTION: &str = "Reply conversationally: answer what you can, and be explicit about what you are \
unsure of or would need to proceed. This is a lightweight chat reply, not a code-execution task.";

pub(crate) fn cap_notice(agent: &str) -> String {
    format!("auto-respond cap reached for @{agent}; needs a human")
}

/// One sweep; returns the ids of the asks it submitted.
pub fn autorespond_sweep(tx: &Tx<'_>, clock: &dyn Clock, cfg: &Config) -> Result<Vec<String>> {
    if !cfg.chat.auto_respond {
        return Ok(Vec::new());
    }
    let from_config = cfg.autorespond_agents();
    let enrolled = agents::list(tx)?
        .into_iter()
        .filter(|a| a.chat_autorespond || from_config.contains(&a.name))
        .count();
    if enrolled == 0 {
        return Ok(Vec::new());
    }
    let origin = rows::origin(tx)?;
    let now = clock.now_ms();
    let cap = i64::from(cfg.chat.auto_respond_cap);
    let cooldown = cfg.chat.auto_respond_cooldown.0;
    // A capped agent's mention is consumed like an answered one, so neither comes round again.
    let mark_chat_read = |agent: &str, thread_id: &str| {
        rows::mark_read(
            tx,
            agent,
            &origin,
            Some(thread_id),
            None,
            Some(MessageKind::Chat),
        )
    };
    let mut submitted = Vec::new();
    for c in rows::autorespond_candidates(tx, &origin, &from_config)? {
        let Some(thread) = rows::thread(tx, &c.thread_id)? else {
            continue;
        };
        let results = rows::count_kind(tx, &thread.id, MessageKind::JobResult, Some(&c.agent))?;
        let in_flight = rows::in_flight_links(tx, &thread.id, &c.agent, LinkPurpose::AutoRespond)?;
        if results + in_flight >= cap && in_flight == 0 {
            let notice = cap_notice(&c.agent);
            if !rows::system_body_exists(tx, &thread.id, &notice)? {
                messages::append(tx, clock, &thread, Post::system(&notice))?;
            }
            mark_chat_read(&c.agent, &thread.id)?;
            continue;
        }
        if in_flight > 0 {
            continue;
        }
        let last = rows::last_result_ms(tx, &thread.id, &c.agent)?
            .into_iter()
            .chain(rows::last_link_ms(
                tx,
                &thread.id,
                &c.agent,
                LinkPurpose::AutoRespond,
            )?)
            .max();
        if cooldown > 0 && last.is_some_and(|t| now - t < cooldown) {
            continue;
        }
        let mut prompt = super::promote::recent_context(tx, &thread)?;
        prompt.push_str(&format!(
            "\nYou (@{}) were mentioned in the chat thread above. {REPLY_INSTRUCTION}",
            c.agent
        ));
        let job = crate::store::savepoint(tx, || {
            submit_root(
                tx,
                clock,
                super::thread_job(&thread, &c.agent, Action::Ask, prompt),
            )
        })?;
        let job_id = match job {
            Ok(id) => id,
            Err(e) => {
                // Left unread: the next tick retries once the gate allows it.
                tracing::warn!("chat auto-respond for @{} in {}: {e}", c.agent, thread.slug);
                continue;
            }
        };
        rows::insert_link(
            tx,
            &JobLink {
                root_id: job_id.clone(),
                thread_id: thread.id.clone(),
                reply_to: c.seq,
                purpose: LinkPurpose::AutoRespond,
                agent: c.agent.clone(),
                created_ms: now,
            },
        )?;
        mark_chat_read(&c.agent, &thread.id)?;
        submitted.push(job_id);
    }
    Ok(submitted)
}
