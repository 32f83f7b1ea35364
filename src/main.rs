//! The `cqlwire` binary: parses the command line and maps errors to exit codes.

mod cli;
mod display;
mod files;
mod messages;

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
            return print_clap(&error);
        }
        Err(error) => return fail(&cli::CliError::Usage(cli::usage_message(&error))),
    };
    match cli::run(cli) {
        // A warning or summary that could not be written to standard error is output lost.
        Ok(()) if messages::lost() => ExitCode::FAILURE,
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
}

/// Prints clap's help or version text, and fails when it cannot be written (`>/dev/full`), which
/// clap's own `exit` would not report.
fn print_clap(error: &clap::Error) -> ExitCode {
    let written = error.print().and_then(|()| io::stdout().flush());
    match written {
        Ok(()) => ExitCode::from(error.exit_code() as u8),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        // The help shown for a missing command goes to standard error, which just failed.
        Err(_) if error.use_stderr() => ExitCode::from(error.exit_code().max(1) as u8),
        Err(e) => fail(&cli::CliError::from(messages::stdout_error(e))),
    }
}

/// Characters of an error message shown; a longer one keeps its start and its end.
const MAX_ERROR_CHARS: usize = 400;

/// Prints the one-line error (nothing for a closed pipe) and returns its exit code.
fn fail(error: &cli::CliError) -> ExitCode {
    if !matches!(error, cli::CliError::BrokenPipe) {
        // Not eprintln!, which panics when standard error cannot be written (`2>/dev/full`).
        // Long messages (a path 128 levels deep, a long quoted input) are cut in the middle.
        let message = error.to_string();
        // Control characters of quoted input are shown visibly, never sent to the terminal.
        let message = crate::display::visible(&message);
        let message = crate::display::elide(&message, MAX_ERROR_CHARS);
        messages::line(format_args!("cqlwire: error: {message}"));
    }
    ExitCode::from(error.exit_code() as u8)
}
