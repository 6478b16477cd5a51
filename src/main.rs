//! The `gitmoot` binary: parse the command line, run it, map errors to exit codes.

use clap::Parser;
use clap::error::ErrorKind;

fn main() {
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
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("error: invalid arguments")
                .trim();
            eprintln!("{first} (see --help)");
            std::process::exit(2);
        }
    };
    if let Err(err) = gitmoot::cli::run(cli) {
        eprintln!("error: {}", gitmoot::cli::error_line(&err));
        std::process::exit(gitmoot::cli::exit_code(&err));
    }
}
