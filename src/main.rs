//! The `cqlwire` binary: parses the command line and maps errors to exit codes.

mod cli;

use clap::Parser;
use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if !matches!(error, cli::CliError::BrokenPipe) {
                // Not eprintln!, which panics when standard error cannot be written (`2>/dev/full`).
                let _ = writeln!(io::stderr(), "cqlwire: error: {error}");
            }
            ExitCode::from(error.exit_code() as u8)
        }
    }
}
