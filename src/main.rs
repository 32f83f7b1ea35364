//! The `cqlwire` binary: parses the command line and maps errors to exit codes.

mod cli;

use clap::error::ErrorKind;
use clap::Parser;
use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version text (and the help shown when no command is given) as clap prints it.
        Err(error)
            if matches!(
                error.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            error.exit()
        }
        Err(error) => return fail(&cli::CliError::Usage(cli::usage_message(&error))),
    };
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
}

/// Prints the one-line error (nothing for a closed pipe) and returns its exit code.
fn fail(error: &cli::CliError) -> ExitCode {
    if !matches!(error, cli::CliError::BrokenPipe) {
        // Not eprintln!, which panics when standard error cannot be written (`2>/dev/full`).
        let _ = writeln!(io::stderr(), "cqlwire: error: {error}");
    }
    ExitCode::from(error.exit_code() as u8)
}
