//! Stall detection: whether a running job looks stuck, from its live activity and usage.
//!
//! `assess` is the decision, pure over one job's newest records, its tokens and the
//! clock: *looping* (the same tool call or command `stall_repeats` times in a row),
//! *burning* (tokens rising by `stall_burn_tokens` with no step for `stall_after`),
//! *silent* (no record at all for `stall_after`). `watch` is what the daemon's tick calls:
//! it assesses every running job and writes the transitions as events (`job_stalled` once
//! per stall, `job_stall_cleared` when the job moves again), so scripts, the notify hook
//! and the control room see them. `leave` is the operator's "leave it": the stall leaves
//! Attention until the job stalls anew.
//!
//! A stall is named by its signal and its anchor, the record it started from (the first
//! of the repeated calls, the newest step, the newest record): while both hold, it is the
//! same stall and is raised once.

use std::collections::HashMap;

use serde_json::json;

use super::{EngineError, Env};
use crate::Invalid;
use crate::clock::Millis;
use crate::config::OrchestrateConfig;
use crate::domain::{ActivityKind, EventKind, JobState, StallSignal};
use crate::duration::format_ms;
use crate::store::Tx;
use crate::store::activity::Record;
use crate::store::events::{self, NewEvent};
use crate::store::{jobs, stalls};

/// Records read per job per tick: enough for a run of repeats among their results.
const WINDOW: usize = 64;

/// One running job as the decision sees it.
#[derive(Debug, Clone)]
pub struct Watch<'a> {
    pub started_ms: Millis,
    /// Its newest records, newest first.
    pub records: &'a [Record],
    /// Tokens reported so far, and when its newest step was first seen.
    pub tokens: u64,
    pub tokens_at_step: u64,
}

/// A stall: its signal, the record it is anchored on and the evidence in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub signal: StallSignal,
    pub anchor: u64,
    pub evidence: String,
}

fn kind(r: &Record) -> Option<ActivityKind> {
    ActivityKind::parse(&r.kind)
}

/// A step is the agent doing something; usage, results and stray output lines are not.
fn is_step(r: &Record) -> bool {
    matches!(
        kind(r),
        Some(
            ActivityKind::Message
                | ActivityKind::ToolCall
                | ActivityKind::Command
                | ActivityKind::FileChange
                | ActivityKind::Error
        )
    )
}

fn said(r: &Record) -> String {
    format!("{}: {}", r.kind, r.summary)
}

/// Whether the job is stalled at `now`, and how.
pub fn assess(w: &Watch<'_>, cfg: &OrchestrateConfig, now: Millis) -> Option<Verdict> {
    looping(w.records, cfg.stall_repeats)
        .or_else(|| burning(w, cfg, now))
        .or_else(|| silent(w, cfg.stall_after.0, now))
}

fn looping(records: &[Record], repeats: u32) -> Option<Verdict> {
    if repeats == 0 {
        return None;
    }
    let mut calls = records.iter().filter(|r| is_step(r));
    let newest = calls.next()?;
    if !matches!(
        kind(newest),
        Some(ActivityKind::ToolCall | ActivityKind::Command)
    ) {
        return None;
    }
    let mut first = newest;
    let mut n = 1;
    for r in calls {
        if r.kind != newest.kind || r.summary != newest.summary {
            break;
        }
        first = r;
        n += 1;
    }
    (n >= repeats).then(|| Verdict {
        signal: StallSignal::Looping,
        anchor: first.seq,
        evidence: format!("{} repeated {n} times in a row", said(newest)),
    })
}

fn burning(w: &Watch<'_>, cfg: &OrchestrateConfig, now: Millis) -> Option<Verdict> {
    let window = cfg.stall_after.0;
    if window == 0 || cfg.stall_burn_tokens == 0 {
        return None;
    }
    let step = w.records.iter().find(|r| is_step(r));
    // Past the records read, the step is older than the oldest of them.
    let since = match step {
        Some(s) => s.at_ms,
        None => w.records.last().map_or(w.started_ms, |r| r.at_ms),
    };
    let spent = w.tokens.saturating_sub(w.tokens_at_step);
    if now - since < window || spent < cfg.stall_burn_tokens {
        return None;
    }
    let last = step.map_or("none since it started".to_string(), said);
    Some(Verdict {
        signal: StallSignal::Burning,
        anchor: step.map_or(0, |s| s.seq),
        evidence: format!(
            "{spent} tokens spent with no step for {}; last step {last}",
            format_ms(now - since)
        ),
    })
}

fn silent(w: &Watch<'_>, window: Millis, now: Millis) -> Option<Verdict> {
    let newest = w.records.first();
    let since = newest.map_or(w.started_ms, |r| r.at_ms);
    if window == 0 || now - since < window {
        return None;
    }
    let last = newest.map_or("nothing since it started".to_string(), said);
    Some(Verdict {
        signal: StallSignal::Silent,
        anchor: newest.map_or(0, |r| r.seq),
        evidence: format!("no activity for {}; last: {last}", format_ms(now - since)),
    })
}

/// What the watch remembers between ticks: each running job's newest step and the tokens
/// it had when that step was first seen (the base `burning` measures from), and its newest
/// records (newest first, at most `WINDOW`), so a tick reads only the records stored since
/// the last one and not heard of (`hear`): a streaming fleet's records are read at most
/// once, not once per tick, and not at all when the daemon's writer hands them over. A
/// restarted daemon starts from the tokens and records it first sees.
#[derive(Debug, Default)]
pub struct Memory {
    steps: HashMap<String, (u64, u64)>,
    windows: HashMap<String, Vec<Record>>,
}

impl Memory {
    /// Takes in records as they were stored (each job's in seq order), so a tick need not
    /// read them back: a job's window takes a run of them only when it continues the
    /// window (or starts the job), and otherwise leaves the gap for `top_up` to read.
    pub fn hear(&mut self, records: Vec<Record>) {
        let mut runs: Vec<Vec<Record>> = Vec::new();
        for r in records {
            match runs.last_mut() {
                Some(run) if run[0].job_id == r.job_id => run.push(r),
                _ => runs.push(vec![r]),
            }
        }
        for mut run in runs {
            let first = &run[0];
            let window = match self.windows.get_mut(&first.job_id) {
                Some(window) => window,
                None if first.seq == 0 => self.windows.entry(first.job_id.clone()).or_default(),
                None => continue,
            };
            if first.seq != window.first().map_or(0, |r| r.seq + 1) {
                continue;
            }
            run.reverse();
            run.append(window);
            run.truncate(WINDOW);
            *window = run;
        }
    }
}

/// `job`'s newest records, topped up with what was stored since the last tick (nothing is
/// read when its record count has not moved; seqs only grow, retries included).
fn top_up<'m>(
    windows: &'m mut HashMap<String, Vec<Record>>,
    tx: &Tx<'_>,
    job: &stalls::Running,
) -> Result<&'m [Record], EngineError> {
    let window = windows.entry(job.job_id.clone()).or_default();
    let known = window.first().map_or(0, |r| r.seq + 1);
    if job.records != known {
        let after = window.first().map(|r| r.seq);
        let mut fresh = stalls::newest_records(tx, &job.job_id, after, WINDOW)?;
        fresh.append(window);
        fresh.truncate(WINDOW);
        *window = fresh;
    }
    Ok(window)
}

/// A stall the watch raised this tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Raised {
    pub job_id: String,
    pub root_id: String,
    pub verdict: Verdict,
}

/// The daemon's tick: every running job assessed, each new stall and each end of one
/// written as an event.
pub fn watch(tx: &Tx<'_>, env: Env<'_>, memory: &mut Memory) -> Result<Vec<Raised>, EngineError> {
    let now = env.clock.now_ms();
    let running = stalls::running(tx)?;
    let ids: std::collections::HashSet<&str> = running.iter().map(|r| r.job_id.as_str()).collect();
    memory.steps.retain(|id, _| ids.contains(id.as_str()));
    memory.windows.retain(|id, _| ids.contains(id.as_str()));
    let mut raised = Vec::new();
    for job in &running {
        let records = top_up(&mut memory.windows, tx, job)?;
        let step = records.iter().find(|r| is_step(r)).map_or(0, |r| r.seq);
        let base = memory
            .steps
            .entry(job.job_id.clone())
            .or_insert((step, job.tokens));
        if base.0 != step {
            *base = (step, job.tokens);
        }
        let w = Watch {
            started_ms: job.started_ms.unwrap_or(now),
            records,
            tokens: job.tokens,
            tokens_at_step: base.1,
        };
        let verdict = assess(&w, env.cfg, now);
        let last = stalls::last_event(tx, &job.job_id)?;
        let (last_kind, last_anchor, last_signal) = match &last {
            Some(e) => (
                e.kind.parse::<EventKind>().ok(),
                e.data.as_ref().and_then(|d| d["anchor"].as_u64()),
                e.data
                    .as_ref()
                    .and_then(|d| d["signal"].as_str().map(str::to_string)),
            ),
            None => (None, None, None),
        };
        let event = |kind, message: String, data| {
            events::append(
                tx,
                NewEvent::job(now, &job.root_id, &job.job_id, kind)
                    .message(message)
                    .data(data),
            )
        };
        match verdict {
            Some(v) => {
                let same = last_anchor == Some(v.anchor)
                    && (last_kind == Some(EventKind::JobStallLeft)
                        || (last_kind == Some(EventKind::JobStalled)
                            && last_signal.as_deref() == Some(v.signal.as_str())));
                if same {
                    continue;
                }
                event(
                    EventKind::JobStalled,
                    format!(
                        "job {} looks stalled ({}): {}",
                        job.job_id, v.signal, v.evidence
                    ),
                    json!({"signal": v.signal, "anchor": v.anchor, "evidence": v.evidence}),
                )?;
                raised.push(Raised {
                    job_id: job.job_id.clone(),
                    root_id: job.root_id.clone(),
                    verdict: v,
                });
            }
            None if last_kind == Some(EventKind::JobStalled) => {
                event(
                    EventKind::JobStallCleared,
                    format!("job {} moved again", job.job_id),
                    json!({"anchor": last_anchor}),
                )?;
            }
            None => {}
        }
    }
    Ok(raised)
}

/// `job leave JOB`: the operator leaves a stalled job running; its stall leaves Attention
/// until the job stalls anew (another signal, or from another record).
pub fn leave(tx: &Tx<'_>, env: Env<'_>, job_id: &str) -> Result<(), EngineError> {
    let job = jobs::require(tx, job_id)?;
    let last = stalls::last_event(tx, job_id)?;
    let stalled = last.filter(|e| e.is(EventKind::JobStalled) && job.state == JobState::Running);
    let Some(e) = stalled else {
        return Err(Invalid(format!("job {job_id} is not stalled; nothing to leave")).into());
    };
    let anchor = e.data.as_ref().map(|d| d["anchor"].clone());
    events::append(
        tx,
        NewEvent::job(
            env.clock.now_ms(),
            &job.root_id,
            job_id,
            EventKind::JobStallLeft,
        )
        .message(format!("operator left stalled job {job_id} running"))
        .data(json!({"anchor": anchor})),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` commands of job `j1` stored at `at`, each one told to `heard` when given.
    fn store_steps(
        c: &rusqlite::Connection,
        n: usize,
        at: Millis,
        heard: Option<&mut Vec<Record>>,
    ) {
        use crate::store::activity::{self, JobBatch, LiveSpend, NewActivity, Then};
        let texts: Vec<String> = (0..n).map(|i| format!("step {at}.{i}")).collect();
        let batch: Vec<_> = texts
            .iter()
            .map(|t| NewActivity {
                kind: "command",
                summary: t,
                detail: None,
            })
            .collect();
        let job = JobBatch {
            job_id: "j1",
            root_id: "r1",
            batch: &batch,
            then: Then::Running(LiveSpend::default()),
        };
        activity::append_all(c, at, &[job], heard).unwrap();
    }

    /// Job `j1` running with `records` stored.
    fn running(records: u64) -> stalls::Running {
        stalls::Running {
            job_id: "j1".into(),
            root_id: "r1".into(),
            started_ms: Some(0),
            tokens: 0,
            records,
        }
    }

    /// The watch's window is the newest records a fresh read gives, and a tick whose job
    /// stored nothing new reads nothing.
    #[test]
    fn the_window_tops_up_with_new_records_only() {
        let c = crate::store::test_conn();
        let tx = Tx::from(&c);
        let add = |n: usize, at: Millis| store_steps(&c, n, at, None);
        let fresh = || stalls::newest_records(&c, "j1", None, WINDOW).unwrap();
        let mut windows = HashMap::new();
        add(3, 10);
        assert_eq!(top_up(&mut windows, &tx, &running(3)).unwrap(), fresh());
        add(WINDOW + 5, 20);
        let total = (3 + WINDOW + 5) as u64;
        let window = top_up(&mut windows, &tx, &running(total)).unwrap().to_vec();
        assert_eq!(window, fresh());
        assert_eq!(window.len(), WINDOW);
        // Records stored after the count was read are not looked for: no read happened.
        add(2, 30);
        assert_eq!(top_up(&mut windows, &tx, &running(total)).unwrap(), window);
        let topped = top_up(&mut windows, &tx, &running(total + 2)).unwrap();
        assert_eq!(topped, fresh());
    }

    /// Records heard as the daemon's writer stored them make the window a read would give,
    /// and the tick then reads nothing; a run that does not continue a job's window (or
    /// start its job) is left for the tick to read.
    #[test]
    fn heard_records_make_the_window_a_read_would_and_spare_the_read() {
        let c = crate::store::test_conn();
        let tx = Tx::from(&c);
        let fresh = || stalls::newest_records(&c, "j1", None, WINDOW).unwrap();
        let mut memory = Memory::default();
        let mut heard = Vec::new();
        store_steps(&c, 3, 10, Some(&mut heard));
        store_steps(&c, WINDOW + 5, 20, Some(&mut heard));
        memory.hear(std::mem::take(&mut heard));
        assert_eq!(memory.windows["j1"], fresh());
        assert_eq!(memory.windows["j1"].len(), WINDOW);
        // The window ends at the count the tick reads, so `top_up` reads nothing.
        let total = (3 + WINDOW + 5) as u64;
        assert_eq!(memory.windows["j1"][0].seq + 1, total);
        // Stored unheard, then heard after a gap: the gap is read, not skipped.
        store_steps(&c, 2, 30, None);
        store_steps(&c, 1, 40, Some(&mut heard));
        memory.hear(heard);
        assert_eq!(memory.windows["j1"][0].seq, total - 1);
        let topped = top_up(&mut memory.windows, &tx, &running(total + 3)).unwrap();
        assert_eq!(topped, fresh());
        // A job first heard of past its first record is left for the tick to read.
        memory.hear(vec![Record {
            job_id: "j2".into(),
            ..fresh()[0].clone()
        }]);
        assert!(!memory.windows.contains_key("j2"));
    }

    fn rec(seq: u64, at_ms: Millis, kind: &str, summary: &str) -> Record {
        Record {
            job_id: "j".into(),
            seq,
            at_ms,
            kind: kind.into(),
            summary: summary.into(),
            detail: None,
        }
    }

    fn cfg(after: Millis, repeats: u32, burn: u64) -> OrchestrateConfig {
        OrchestrateConfig {
            stall_after: crate::config::Duration(after),
            stall_repeats: repeats,
            stall_burn_tokens: burn,
            ..OrchestrateConfig::default()
        }
    }

    fn watch(records: &[Record], tokens: u64) -> Watch<'_> {
        Watch {
            started_ms: 0,
            records,
            tokens,
            tokens_at_step: 0,
        }
    }

    #[test]
    fn zero_turns_each_signal_off() {
        let quiet: Vec<Record> = vec![];
        assert!(assess(&watch(&quiet, 0), &cfg(1_000, 5, 1), 5_000).is_some());
        assert!(assess(&watch(&quiet, 0), &cfg(0, 5, 1), 5_000).is_none());
        let looping: Vec<Record> = (0..5)
            .rev()
            .map(|i| rec(i, 4_900, "command", "$ ls"))
            .collect();
        assert_eq!(
            assess(&watch(&looping, 0), &cfg(1_000, 5, 1), 5_000).map(|v| v.signal),
            Some(StallSignal::Looping)
        );
        assert!(assess(&watch(&looping, 0), &cfg(1_000, 0, 1), 5_000).is_none());
        let burning = vec![
            rec(2, 4_900, "usage", "90 in"),
            rec(1, 100, "message", "hm"),
        ];
        assert_eq!(
            assess(&watch(&burning, 90), &cfg(1_000, 5, 50), 5_000).map(|v| v.signal),
            Some(StallSignal::Burning)
        );
        assert!(assess(&watch(&burning, 90), &cfg(1_000, 5, 0), 5_000).is_none());
        assert!(
            assess(&watch(&burning, 10), &cfg(1_000, 5, 50), 5_000).is_none(),
            "fewer tokens than the threshold is not burning"
        );
    }

    #[test]
    fn a_different_call_breaks_the_run_and_results_between_do_not() {
        let records = vec![
            rec(5, 900, "command", "$ ls"),
            rec(4, 900, "tool_result", "exit 0"),
            rec(3, 900, "command", "$ ls"),
            rec(2, 900, "command", "$ pwd"),
            rec(1, 900, "command", "$ ls"),
        ];
        let v = looping(&records, 2).unwrap();
        assert_eq!((v.anchor, v.evidence.contains("2 times")), (3, true));
        assert!(looping(&records, 3).is_none());
    }
}
