//! `gitmoot bench`: runs the library's benchmark functions and prints their figures as a
//! Markdown table (`| figure | value | target |`) or JSON.
//!
//! Owns only selection, targets and printing; every measurement lives with its module.

use clap::{Args, ValueEnum};
use serde::Serialize;

use super::output::print_json;

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
            Group::Parse => crate::contract::bench_parse(),
            Group::Settle => crate::engine::bench_settle(),
            Group::Chat => crate::chat::bench_chat(),
            Group::Daemon => crate::daemon::bench_daemon(),
            Group::Tui => crate::tui::bench::bench_tui(),
            Group::Idle => crate::tui::bench::bench_idle(&std::env::current_exe()?),
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
        return print_json(&serde_json::json!({ "figures": figures }));
    }
    println!("| figure | value | target |");
    println!("|---|---|---|");
    for f in &figures {
        println!("| {} | {} | {} |", f.figure, f.value, f.target);
    }
    Ok(())
}
