//! The `gitmoot` binary: parse the command line, run it, map errors to exit codes.

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

fn main() {
    gitmoot::store::tune_sqlite_for_process();
    // A shell asking for completions (`COMPLETE=bash gitmoot -- …`) is answered and ends here.
    clap_complete::CompleteEnv::with_factory(gitmoot::cli::complete::completing_command).complete();
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
        // A reader that stops early (`gitmoot job list | head -1`) closes our stdout:
        // that is how a pipeline says "enough", so the command ends without a word.
        if gitmoot::cli::output::is_reader_gone(&err) {
            std::process::exit(0);
        }
        eprintln!("error: {}", gitmoot::error_line(&*err));
        std::process::exit(gitmoot::cli::exit_code(&err));
    }
}
