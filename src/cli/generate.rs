//! `cqlwire generate`: shell completions and man pages made from the command-line definitions,
//! so they always match the installed binary.

use super::{Cli, CliError};
use clap::CommandFactory;
use std::io::Write;
use std::path::PathBuf;

/// Worked examples shown by `--help`.
const EXAMPLES: &str = "\
Examples:
  # The folders that bash-completion and man look in for the current user:
  mkdir -p ~/.local/share/bash-completion/completions ~/.local/share/man/man1

  # Bash completions for the current user (zsh, fish, elvish and powershell work the same way):
  cqlwire generate completions bash > ~/.local/share/bash-completion/completions/cqlwire

  # Man pages (cqlwire.1 and one per command, e.g. `man cqlwire-convert`):
  cqlwire generate man ~/.local/share/man/man1";

/// Arguments of `cqlwire generate`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// What to generate.
    #[command(subcommand)]
    what: What,
}

/// What `cqlwire generate` makes.
#[derive(Debug, clap::Subcommand)]
enum What {
    /// Shell completions, on standard output.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Man pages in roff (`cqlwire.1`, `cqlwire-convert.1`, ...), written into DIR (created if
    /// missing).
    Man {
        /// The folder to write them into, e.g. ~/.local/share/man/man1.
        dir: PathBuf,
    },
}

/// Runs `cqlwire generate`.
pub fn run(args: Args) -> Result<(), CliError> {
    let mut command = Cli::command();
    match args.what {
        What::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "cqlwire", &mut script);
            let mut stdout = crate::messages::Stdout(std::io::stdout().lock());
            stdout.write_all(&script)?;
            stdout.flush()?;
            Ok(())
        }
        What::Man { dir } => {
            let in_context = |e: std::io::Error| {
                CliError::data(format!("cannot write man pages to {}: {e}", dir.display()))
            };
            std::fs::create_dir_all(&dir).map_err(in_context)?;
            clap_mangen::generate_to(command, &dir).map_err(in_context)
        }
    }
}
