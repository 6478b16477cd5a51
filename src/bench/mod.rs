//! The bench room: every measurement behind `gitmoot bench`, kept out of the product
//! modules it measures. `parse` (result contract), `settle` (engine store work), `chat`,
//! `daemon`, `tui` (control room first frame and refresh, and the idle CPU); this file
//! selects groups, attaches targets and prints the figures as a Markdown table
//! (`| figure | value | target |`) or JSON.
//!
//! Measures only through the product's public functions; must never reimplement what it
//! measures, and no product module may import from here.

use clap::{Args, ValueEnum};
use serde::Serialize;

pub mod chat;
pub mod daemon;
pub mod parse;
pub mod settle;
pub mod tui;

pub use chat::bench_chat;
pub use daemon::bench_daemon;
pub use parse::bench_parse;
pub use settle::bench_settle;
pub use tui::{bench_idle, bench_tui};

/// One benchmark group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Result contract parser on 1 MiB outputs.
    Parse,
    /// Engine store work to settle one leg.
    Settle,
    /// Chat send throughput and inbox reads.
    Chat,
    /// Daemon overhead per job over a bare process spawn.
    Daemon,
    /// Control room first frame and refresh at 100k jobs / 200k messages.
    Tui,
    /// CPU of an idle `gitmoot tui` over 30 s, in a private tmux pane.
    Idle,
}

impl Group {
    const ALL: [Group; 6] = [
        Group::Parse,
        Group::Settle,
        Group::Chat,
        Group::Daemon,
        Group::Tui,
        Group::Idle,
    ];

    fn run(self) -> anyhow::Result<Vec<(String, String)>> {
        Ok(match self {
            Group::Parse => bench_parse(),
            Group::Settle => bench_settle(),
            Group::Chat => bench_chat(),
            Group::Daemon => bench_daemon(),
            Group::Tui => bench_tui(),
            Group::Idle => bench_idle(&std::env::current_exe()?),
        })
    }
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Run one group only.
    #[arg(long, value_enum)]
    pub only: Option<Group>,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One measured figure with the SPEC target it answers to, if any.
#[derive(Debug, Serialize)]
pub struct Figure {
    pub group: Group,
    pub figure: String,
    pub value: String,
    pub target: &'static str,
}

/// The SPEC §11 target a figure is judged against.
fn target(figure: &str) -> &'static str {
    match figure {
        "tui.first_frame_ms" => "< 200 ms",
        "tui.refresh_store_ms" => "< 5 ms",
        "tui.idle.cpu_percent" => "< 1 % (near zero)",
        "daemon.overhead_per_job_ms" => "< 2 ms",
        "chat.send.per_second" => "> 5,000/s",
        _ => "",
    }
}

pub fn run(a: BenchArgs) -> anyhow::Result<()> {
    let groups: Vec<Group> = match a.only {
        Some(g) => vec![g],
        None => Group::ALL.to_vec(),
    };
    let mut figures = Vec::new();
    for group in groups {
        for (figure, value) in group.run()? {
            figures.push(Figure {
                group,
                target: target(&figure),
                figure,
                value,
            });
        }
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "figures": figures }))?
        );
        return Ok(());
    }
    println!("| figure | value | target |");
    println!("|---|---|---|");
    for f in &figures {
        println!("| {} | {} | {} |", f.figure, f.value, f.target);
    }
    Ok(())
}
