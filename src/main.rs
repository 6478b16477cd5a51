//! The `gitmoot` binary: parse the command line, run it, map errors to exit codes.

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

fn main() {
    quiet_on_closed_stdout();
    let cli = match gitmoot::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            e.exit()
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            std::process::exit(2);
        }
        Err(e) => {
            let mut text = e.to_string();
            if e.kind() == ErrorKind::InvalidSubcommand
                && !text.contains("tip:")
                && let Some(ContextValue::String(word)) = e.get(ContextKind::InvalidSubcommand)
                && let Some(near) = gitmoot::cli::nearest_subcommand(word)
            {
                text = format!(
                    "{}\n  tip: a similar subcommand exists: '{near}'",
                    text.lines().next().unwrap_or_default()
                );
            }
            eprintln!("{}", gitmoot::cli::clap_error_line(&text));
            std::process::exit(2);
        }
    };
    if let Err(err) = gitmoot::cli::run(cli) {
        if gitmoot::cli::is_closed_stdout(&err) {
            std::process::exit(0);
        }
        eprintln!("error: {}", gitmoot::error_line(&*err));
        std::process::exit(gitmoot::cli::exit_code(&err));
    }
}

/// A reader that stops early (`gitmoot job list | head -1`) closes our stdout; that is how
/// a pipeline says "enough", so the command exits 0 without a word. `print!` reports it by
/// panicking, which this hook turns into that quiet exit; every other panic keeps the
/// default report.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
