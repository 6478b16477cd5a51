//! The Usage view's figures, store → view model: the last day's spend per hour, the roots
//! and agents that spent most, each root's headroom and today's caps, re-read only when
//! settled spend may have moved or the hour turned.
//!
//! Reads through the functions `gitmoot usage` prints from (`store::usage`,
//! `report::usage`, `engine::caps`); never writes.

use crate::clock::{HOUR_MS, Millis};
use crate::config::Config;
use crate::domain::UsageBy;
use crate::engine::caps;
use crate::report::usage::{budget, headroom};
use crate::store::usage::{Figures, Group, spend_by_hour, usage};
use crate::store::{Result, Tx};
use gitmoot_ui::view::{CapLine, UsageRow, UsageView};

/// How far back the view looks: a day, hour by hour.
const VIEW_HOURS: Millis = 24;
/// Rows of roots and of agents the view lists.
const VIEW_TOP: usize = 8;

/// The view's last figures and when they were read.
#[derive(Debug, Default)]
pub struct UsageCache {
    read: Option<(Millis, UsageView)>,
}

impl UsageCache {
    /// The figures at `now`: re-read when settled spend may have moved (`events_moved`) or
    /// the hour turned (the view's day slides), else the last read's.
    pub fn read(
        &mut self,
        tx: &Tx<'_>,
        config: &Config,
        now: Millis,
        events_moved: bool,
    ) -> Result<UsageView> {
        let hour = now - now.rem_euclid(HOUR_MS);
        match &self.read {
            Some((at, view)) if !events_moved && *at >= hour => Ok(view.clone()),
            _ => {
                let view = view(tx, config, now)?;
                self.read = Some((now, view.clone()));
                Ok(view)
            }
        }
    }
}

/// The view at `now`: the jobs created over the last day (from the hour a day ago), their
/// spend per hour, the roots and agents that spent most, and today's caps.
pub fn view(tx: &Tx<'_>, config: &Config, now: Millis) -> Result<UsageView> {
    let hour = now - now.rem_euclid(HOUR_MS);
    let since = hour - (VIEW_HOURS - 1) * HOUR_MS;
    let roots = usage(tx, UsageBy::Root, since, now)?;
    let agents = usage(tx, UsageBy::Agent, since, now)?;
    let row = |g: &Group| UsageRow {
        key: g.key.clone(),
        title: g.root.as_ref().map_or(String::new(), |r| r.title.clone()),
        budget: budget(g, config).map_or(String::new(), |b| headroom(&b)),
        ..figures_row(&g.figures)
    };
    Ok(UsageView {
        since_ms: since,
        hours: spend_by_hour(tx, since, now)?
            .into_iter()
            .map(|(_, usd)| usd)
            .collect(),
        total: figures_row(&roots.total),
        roots: roots.groups.iter().take(VIEW_TOP).map(row).collect(),
        agents: agents.groups.iter().take(VIEW_TOP).map(row).collect(),
        caps: caps::today(tx, config, now)?
            .iter()
            .map(|c| CapLine {
                text: c.to_string(),
                reached: c.reached,
            })
            .collect(),
    })
}

fn figures_row(f: &Figures) -> UsageRow {
    let t = f.tokens;
    UsageRow {
        jobs: f.jobs,
        tokens: t.input + t.output + t.cache_read + t.cache_write,
        usd: f.cost_usd,
        ..UsageRow::default()
    }
}
