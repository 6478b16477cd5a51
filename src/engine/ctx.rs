//! One engine step's environment (`Ctx`: transaction, clock reading, knobs, hooks) and its
//! plumbing: events, fresh ids, inserting and finishing jobs. Every stage file adds an
//! `impl Ctx` block; this one holds no stage logic and imports none of them.

use crate::store::Tx;
use serde_json::{Value, json};

use super::{EngineError, Env, Hooks};
use crate::clock::{Clock, Millis};
use crate::config::OrchestrateConfig;
use crate::contract::GitmootResult;
use crate::domain::{EventKind, JobState};
use crate::store::events::{self, NewEvent};
use crate::store::jobs::{self, Job};
use crate::store::runs;

pub(crate) type R<T> = Result<T, EngineError>;

/// One engine step's environment: the transaction, the clock reading and the knobs.
pub struct Ctx<'a, 't> {
    pub tx: &'a Tx<'t>,
    pub clock: &'a dyn Clock,
    pub cfg: &'a OrchestrateConfig,
    pub hooks: &'a dyn Hooks,
    pub now: Millis,
}

/// A job's outcome as its parent sees it (invariant 6: through its subtree).
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// Something in its subtree is still queued, running, or awaiting a human.
    Pending,
    Done {
        /// The job whose result speaks (the job itself or its last continuation).
        job_id: String,
        state: JobState,
        result: Option<Box<GitmootResult>>,
        /// Why the batch blocked it, when it did.
        reason: Option<String>,
    },
}

pub(crate) fn parse_result(v: Option<&Value>) -> Option<GitmootResult> {
    v.and_then(|v| serde_json::from_value(v.clone()).ok())
}

impl<'a, 't> Ctx<'a, 't> {
    /// A step that reads the clock once, so every row it writes carries the same time.
    pub fn new(tx: &'a Tx<'t>, env: Env<'a>) -> Self {
        Self {
            tx,
            clock: env.clock,
            cfg: env.cfg,
            hooks: env.hooks,
            now: env.clock.now_ms(),
        }
    }
}

impl Ctx<'_, '_> {
    pub fn event(
        &self,
        root: &str,
        job: Option<&str>,
        kind: EventKind,
        message: String,
        data: Option<Value>,
    ) -> R<()> {
        events::append(
            self.tx,
            NewEvent {
                ts_ms: self.now,
                root_id: Some(root),
                job_id: job,
                kind,
                message,
                data,
            },
        )?;
        Ok(())
    }

    /// `event` about `job`, in its tree.
    pub fn job_event(
        &self,
        job: &Job,
        kind: EventKind,
        message: String,
        data: Option<Value>,
    ) -> R<()> {
        self.event(&job.root_id, Some(&job.id), kind, message, data)
    }

    /// The first free id among `base`, `base.2`, `base.3`… (ids are never reused).
    pub(super) fn fresh_id(&self, base: &str) -> R<String> {
        if !jobs::exists(self.tx, base)? {
            return Ok(base.to_string());
        }
        let mut n = 2;
        loop {
            let id = format!("{base}.{n}");
            if !jobs::exists(self.tx, &id)? {
                return Ok(id);
            }
            n += 1;
        }
    }

    /// Writes a new queued job, counts it in the run and logs it.
    pub(super) fn insert_job(&self, job: &Job) -> R<()> {
        jobs::put(self.tx, job)?;
        let mut run = runs::require(self.tx, &job.root_id)?;
        run.jobs += 1;
        run.updated_ms = self.now;
        runs::put(self.tx, &run)?;
        self.job_event(
            job,
            EventKind::Queued,
            format!("{} {} queued for {}", job.kind, job.action, job.agent),
            Some(json!({"agent": job.agent, "action": job.action, "parent": job.parent_id})),
        )
    }

    /// Moves a job to a terminal state by the engine (cancel, kill), with hook and event.
    pub fn finish_job(&self, job: &mut Job, state: JobState, message: String) -> R<()> {
        job.state = state;
        job.finished_ms = Some(self.now);
        job.updated_ms = self.now;
        jobs::put(self.tx, job)?;
        self.job_event(job, EventKind::entered(state), message, None)?;
        self.hooks.job_finished(self.tx, self.clock, job)
    }
}
